"""Scrub machine-specific details from a vLLM log before it goes into a corpus or a bug report.

Only identifying details are replaced; vLLM's own structure is kept byte for byte (process tags,
ANSI codes, ``\\r\\n`` line ends, ``[file.py:NNN]`` references and the package-relative part of
traceback paths such as ``vllm/v1/engine/core.py``), because a classifier reads exactly those.

Replacements:

* ``.../lib/python3.X/site-packages/`` prefixes -> ``<venv>/lib/python3.X/site-packages/``
* other ``.../lib/python3.X/`` prefixes (the interpreter's stdlib) -> ``<python>/lib/python3.X/``
* ``.../bin/vllm`` and ``.../bin/python3`` of a venv -> ``<venv>/bin/...``
* ``/home/<user>`` and ``/root`` -> ``<home>``; ``/tmp`` -> ``<tmp>``; ``/work`` -> ``<work>``
* ``hf_...``, ``sk-...``, ``ghp_...`` tokens, ``Bearer ...`` and ``api_key`` values -> ``<token>``
* IPv4 and IPv6 addresses -> ``<ip>`` (``0.0.0.0``, ``127.0.0.1``, ``::`` and ``::1`` are kept)
* cloud-style host names (``ip-10-1-2-3``, ``*.internal``, ``*.local``, ...) -> ``<host>``
* every string in ``extra_literals`` (e.g. this machine's host name) -> ``<redacted>``
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

__all__ = ["redact"]

# One path segment: anything but a separator, whitespace, quotes, brackets or an ANSI escape.
_SEG = r"[^/\s'\"<>()\[\]{},;:|\x1b]+"
# An absolute path must not be the tail of a word, a URL or a relative path.
# A machine root glued to the text before it (a URL printed without a newline, then a path)
# still counts: "...refleaks.html/root/.pyenv/...".
_START = r"(?:(?<=file://)|(?<![\w.~\-/:<>])|(?<=[A-Za-z0-9_])(?=/(?:root|home|tmp|work)/))"

_SITE_PACKAGES = re.compile(_START + rf"(?:/{_SEG})+?/lib/(python3\.\d+)/site-packages/")
_STDLIB = re.compile(_START + rf"(?:/{_SEG})+?/lib/(python3\.\d+)/")
_VENV_BIN = re.compile(_START + rf"(?:/{_SEG})+?/bin/(vllm|python3?(?:\.\d+)?|pip3?)\b")
_HOME = re.compile(_START + rf"/home/{_SEG}(?=/|\b|$)")
_ROOTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(_START + r"/root(?=/|\b|$)"), "<home>"),
    (re.compile(_START + r"/tmp(?=/|\b|$)"), "<tmp>"),
    (re.compile(_START + r"/work(?=/|\b|$)"), "<work>"),
)

_TOKENS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), "<token>"),
    (re.compile(r"\bsk-(?:[A-Za-z0-9_-]*-)?[A-Za-z0-9]{16,}"), "<token>"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), "<token>"),
    (re.compile(r"(?i)\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 <token>"),
    (
        re.compile(r"(?i)(['\"]?api[_-]key['\"]?\s*[:=]\s*\[?\s*['\"]?)(?!None\b)[^'\"\s,\]}]+"),
        r"\1<token>",
    ),
    (re.compile(r"(?i)(--api-key[ =])\S+"), r"\1<token>"),
)

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|:)?(?![\w:])")
_KEEP_IPS = frozenset({"0.0.0.0", "127.0.0.1", "::", "::1"})

_HOSTS = re.compile(
    r"(?i)\b(?:ip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9-]+)*"
    r"|[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\."
    r"(?:internal|local|localdomain|lan|intranet|corp|cluster\.local))\b"
)


def _ip_sub(match: re.Match[str]) -> str:
    """Replace a candidate address only if it really parses as one and is not loopback/any."""
    text = match.group(0)
    if text in _KEEP_IPS:
        return text
    if "." in text and text.split(".", 1)[0] == "0":
        return text  # 0.x.y.z is a version number such as 0.10.1.1, not a host
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return text
    return "<ip>"


_ANSI = re.compile(r"(\x1b\[[0-9;]*[A-Za-z])")


def redact(text: str, extra_literals: Sequence[str] = ()) -> str:
    """Return ``text`` with machine paths, host names, addresses and tokens replaced.

    ``extra_literals`` are exact strings to remove as well (longest first), for example the
    host name or a user name that no generic pattern can know about.
    """
    for literal in sorted((s for s in extra_literals if s), key=len, reverse=True):
        text = text.replace(literal, "<redacted>")
    # ANSI colour codes are kept as they are; the text between them is scrubbed on its own, so a
    # path right after a code (``\x1b[0m/root/...``) is still seen as a path.
    parts = _ANSI.split(text)
    return "".join(p if i % 2 else _scrub(p) for i, p in enumerate(parts))


def _scrub(text: str) -> str:
    text = _SITE_PACKAGES.sub(r"<venv>/lib/\1/site-packages/", text)
    text = _VENV_BIN.sub(r"<venv>/bin/\1", text)
    text = _STDLIB.sub(r"<python>/lib/\1/", text)
    text = _HOME.sub("<home>", text)
    for pattern, repl in _ROOTS:
        text = pattern.sub(repl, text)
    for pattern, repl in _TOKENS:
        text = pattern.sub(repl, text)
    text = _IPV4.sub(_ip_sub, text)
    text = _IPV6.sub(_ip_sub, text)
    return _HOSTS.sub("<host>", text)
