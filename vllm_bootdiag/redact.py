"""Scrub machine-specific details from a vLLM log before it goes into a corpus or a bug report.

Only identifying details are replaced; vLLM's own structure is kept byte for byte (process tags,
ANSI codes, ``\\r\\n`` line ends, ``[file.py:NNN]`` references, the package-relative part of
traceback paths such as ``vllm/v1/engine/core.py``, and every number a rule reads), because a
classifier reads exactly those. Redaction is idempotent: redacting its own output changes nothing,
whatever literals are given.

Replacements:

* ``.../lib[64]/python3.X/{site,dist}-packages/`` -> ``<venv>/lib/python3.X/site-packages/``
* other ``.../lib/python3.X/`` prefixes (the interpreter's stdlib) -> ``<python>/lib/python3.X/``
* ``.../bin/vllm`` and ``.../bin/python3`` of a venv -> ``<venv>/bin/...``
* a user's home (``/home/<user>``, ``/Users/<user>``, ``/data/users/<user>``, ``C:\\Users\\<user>``,
  ``~user``, ``/root``) -> ``<home>``; shared storage (``/scratch/<x>``, ``/mnt/<x>``, ``/nfs/<x>``,
  ``/lustre/<x>``, ``/gpfs/<x>``, and a user's folder there: ``/scratch/users/<user>``,
  ``/lustre/<fs>/home/<user>``) -> ``<storage>``; ``/tmp`` -> ``<tmp>``; ``/work`` -> ``<work>``
* credentials in URLs (``scheme://user:pass@``) -> ``scheme://<user>:<token>@``; URL hosts
  other than public documentation and model hubs -> ``<host>``; secret query values -> ``<token>``
* e-mail addresses -> ``<email>``
* ``hf_...``, ``sk-...``, ``ghp_...``, AWS ``AKIA...`` key ids, ``Bearer``/``Basic ...``,
  ``api_key``, ``--api-key``/``--hf-token``/``--token``/``--password`` values,
  ``aws_secret_access_key``, ``password``/``secret``/``token``/``AccountKey`` values,
  ``*_TOKEN=``/``*_SECRET*=``/``*_PASSWORD=`` values -> ``<token>``
* IPv4 and IPv6 addresses -> ``<ip>`` (``0.0.0.0``, ``127.0.0.1``, ``::`` and ``::1`` are kept);
  MAC addresses -> ``<mac>``
* host names: cloud-style (``ip-10-1-2-3``, ``*.internal``, ``*.local``, ...) and fully qualified
  names under a common top-level domain -> ``<host>``
* every string in ``extra_literals`` (e.g. this machine's host name) -> ``<redacted>``, except
  inside vLLM's ``[file.py:N]`` references
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence

__all__ = ["redact"]

# One path segment: anything but a separator, whitespace, quotes, brackets or an ANSI escape.
_SEG = r"[^/\s'\"<>()\[\]{},;:|\x1b]+"
# An absolute path must not be the tail of a word, a URL or a relative path.
# A machine root glued to the text before it (a URL printed without a newline, then a path)
# still counts: "...refleaks.html/root/.pyenv/...".
_GLUED = r"root|home|tmp|work|Users|scratch|mnt|nfs|lustre|gpfs|data/users"
_START = rf"(?:(?<=file://)|(?<![\w.~\-/:<>])|(?<=[A-Za-z0-9_])(?=/(?:{_GLUED})/))"

_SITE_PACKAGES = re.compile(
    _START + rf"(?:/{_SEG}){{1,48}}?/lib(?:64)?/(python3\.\d+)/((?:site|dist)-packages)/"
)
_STDLIB = re.compile(_START + rf"(?:/{_SEG}){{1,48}}?/lib(?:64)?/(python3\.\d+)/")
_VENV_BIN = re.compile(
    _START + rf"(?:/{_SEG}){{1,48}}?/bin/(vllm|python3?(?:\.\d+)?|pip3?)\b"
)
_END = r"(?=/|\b|$)"
_ROOTS: tuple[tuple[re.Pattern[str], str], ...] = (
    # a user's folder on shared storage goes with it: /scratch/users/<user>, /mnt/home/<user>,
    # /lustre/<fs>/users/<user> (a few folders deep at most), else the root's first folder
    (
        re.compile(
            _START + rf"/(?:scratch|mnt|nfs|lustre|gpfs)"
            rf"(?:(?:/{_SEG}){{0,3}}?/(?:users?|home|u)/{_SEG}|/{_SEG}){_END}"
        ),
        "<storage>",
    ),
    (re.compile(_START + rf"/(?:home|Users|data/users)/{_SEG}{_END}"), "<home>"),
    (re.compile(_START + rf"/root{_END}"), "<home>"),
    (re.compile(_START + rf"/tmp{_END}"), "<tmp>"),
    (re.compile(_START + rf"/work{_END}"), "<work>"),
    (re.compile(r"(?i)(?<![\w\\])[a-z]:\\Users\\[^\\\s'\"<>]+"), "<home>"),
    (re.compile(r"(?<![\w~/.<>-])~(?:[a-z_][a-z0-9_.-]*)?(?=/)"), "<home>"),
)

_PUBLIC_HOSTS = (
    "vllm.ai", "huggingface.co", "hf.co", "github.com", "githubusercontent.com", "pytorch.org",
    "python.org", "readthedocs.io", "readthedocs.org", "pydantic.dev", "nvidia.com", "amd.com",
    "intel.com", "ray.io", "pypi.org", "kubernetes.io", "docker.com", "modelscope.cn",
    "localhost",
)  # fmt: skip
"""URL hosts kept: documentation and model hubs vLLM and its libraries print, never a
machine of the user's. Subdomains count (``docs.vllm.ai``)."""

_URL = re.compile(
    r"(?i)\b(?!file://)([a-z][a-z0-9+.-]{1,15}://)"
    r"(?:([^\s/@:<>'\"]*)(?::([^\s/@<>'\"]*))?@)?"
    r"(\[[0-9a-f:.%]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)"
)
_QUERY_SECRET = re.compile(
    r"(?i)([?&](?:token|access_token|auth|key|sig|signature|password|secret"
    r"|x-amz-signature|x-amz-credential|x-amz-security-token)=)(?!<)[^&\s'\"<>]+"
)
_EMAIL = re.compile(r"(?i)(?<![\w.+-])[a-z0-9][\w.+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b")

_VALUE = r"""(?:"(?!<)[^"\n]*"|'(?!<)[^'\n]*'|(?!None\b|<)[^\s'",;}&]+)"""
"""A secret's value: quoted (spaces and all) or bare; never one already replaced."""


def _value_sub(match: re.Match[str]) -> str:
    value = match.group(0)[len(match.group(1)) :]
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group(1)}{quote}<token>{quote}"


_TOKENS: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), "<token>"),
    (re.compile(r"\bsk-(?:[A-Za-z0-9_-]*-)?[A-Za-z0-9]{16,}"), "<token>"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), "<token>"),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "<token>"),
    (re.compile(r"(?i)\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 <token>"),
    (
        re.compile(r"(?i)(['\"]?api[_-]key['\"]?\s*[:=]\s*\[?\s*['\"]?)(?!None\b)[^'\"\s,\]}]+"),
        r"\1<token>",
    ),
    (re.compile(r"(?i)(--(?:api-key|hf-token|token|password|passwd)[ =])(?!<)\S+"), r"\1<token>"),
    (
        # boto's and ~/.aws/credentials' lower-case names (the upper-case ones are below)
        re.compile(
            r"(?i)(\baws_(?:secret_access_key|session_token|security_token)['\"]?\s*[=:]\s*)"
            + _VALUE
        ),
        _value_sub,
    ),
    (
        # Environment-style names (upper case, so `max_num_batched_tokens=8192` is not one).
        re.compile(
            r"\b([A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL)"
            r"[A-Z0-9_]*['\"]?\s*[=:]\s*)" + _VALUE
        ),
        _value_sub,
    ),
    (
        re.compile(
            r"(?i)(\b(?:password|passwd|pwd|secret|client_secret|token|access_token|auth_token"
            r"|account_?key)['\"]?\s*[=:]\s*)" + _VALUE
        ),
        _value_sub,
    ),
)

_MAC = re.compile(r"(?i)(?<![\w:-])[0-9a-f]{2}([:-])(?:[0-9a-f]{2}\1){4}[0-9a-f]{2}(?![\w:-])")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|:)?(?![\w:])")
_KEEP_IPS = frozenset({"0.0.0.0", "127.0.0.1", "::", "::1"})

_HOSTS = re.compile(
    r"(?i)(?<![\w.-])(?:ip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}(?:\.[a-z0-9-]+)*"
    r"|[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\."
    r"(?:internal|local|localdomain|lan|intranet|corp|cluster\.local|svc))\b(?!\.[\w-])"
)
"""Cloud and in-house names; one that goes on past its suffix (`node.corp.example.com`)
is a fully qualified name, left whole to `_FQDN` (cut here, its domain would stay)."""
_TLDS = (
    "com|net|org|io|ai|dev|cloud|app|co|us|uk|de|fr|nl|jp|cn|kr|eu|ch|se|info|biz|edu|gov|xyz"
    "|tech|site|online"
)
_FQDN = re.compile(
    rf"(?<![\w.@/<>-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+"
    rf"(?:{_TLDS}|{_TLDS.upper()})(?![\w-]|\.[\w-])(?!\(|\[)"
)
"""A fully qualified name under a common top-level domain, written in any case (an
inventory's `GPU-NODE-3.CORP.EXAMPLE.COM`, a `Node7.Example.org`). Not a call or an index
(a traceback's source line: ``logger.info(...)``), and not an attribute of a name that
is Python's own (`_CODE_NAMES`): ``self.app = ...``. Python's dotted names such as
``torch.cuda.OutOfMemoryError`` end in no such label."""
_CODE_NAMES = frozenset(
    ("self", "cls", "super", "os", "sys", "args", "kwargs", "logger", "log", "logging", "config")
)

_MARKERS = ("email", "home", "host", "ip", "mac", "python", "redacted", "storage", "tmp",
            "token", "user", "venv", "work")  # fmt: skip
_MARKER = "<(?:" + "|".join(_MARKERS) + ")>"
"""The replacements redaction writes; literals never match inside one. Only these: a
`<__>` or `<unk>` the log itself holds is text, and a literal inside it is removed."""
_FILE_REF = r"\[[\w.-]{1,80}\.py:\d{1,6}\]"
"""vLLM's `[core.py:708]` record reference: a literal (a short host or user name that is
also a module's name) never changes one, since markers and rules read them."""


def _public(host: str) -> bool:
    host = host.lower().rstrip(".")
    return any(host == h or host.endswith("." + h) for h in _PUBLIC_HOSTS)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def _url_sub(match: re.Match[str]) -> str:
    """A URL's scheme, its credentials replaced, its host replaced unless public or an
    address (addresses are left to the address step, which keeps loopback)."""
    scheme, user, password, host = match.group(1), match.group(2), match.group(3), match.group(4)
    out = scheme
    if user is not None:
        if user:
            out += "<user>"
        if password is not None:
            out += ":" + ("<token>" if password else "")
        out += "@"
    out += host if _public(host) or _is_ip(host) else "<host>"
    return out


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


def _fqdn_sub(match: re.Match[str]) -> str:
    name = match.group(0)
    if _public(name) or name.split(".", 1)[0] in _CODE_NAMES:
        return name
    return "<host>"


_ANSI = re.compile(r"(\x1b\[[0-9;]*[A-Za-z])")


def redact(text: str, extra_literals: Sequence[str] = ()) -> str:
    """Return ``text`` with machine paths, host names, addresses and tokens replaced.

    ``extra_literals`` are exact strings to remove as well (longest first), for example the
    host name or a user name that no generic pattern can know about. They are replaced after
    the patterns, and never inside a replacement already made or a `[file.py:N]` reference,
    so the result is stable.
    """
    literals = sorted({s for s in extra_literals if s}, key=len, reverse=True)
    either = (
        re.compile(f"({_MARKER}|{_FILE_REF})|" + "|".join(re.escape(s) for s in literals))
        if literals
        else None
    )
    # A replacement changes what is around it (a word boundary appears where a literal was),
    # so one round can expose a match for the next: repeat to a fixed point, which makes
    # redacting the output again a no-op. Real logs settle in two rounds.
    for _ in range(_MAX_ROUNDS):
        before = text
        text = _round(text, either)
        if text == before:
            break
    return text


_MAX_ROUNDS = 8


def _round(text: str, literals: re.Pattern[str] | None) -> str:
    # ANSI colour codes are kept as they are; the text between them is scrubbed on its own, so a
    # path right after a code (``\x1b[0m/root/...``) is still seen as a path.
    parts = _ANSI.split(text)
    text = "".join(p if i % 2 else _scrub(p) for i, p in enumerate(parts))
    if literals is None:
        return text
    return literals.sub(lambda m: m.group(1) or "<redacted>", text)


def _scrub(text: str) -> str:
    text = _URL.sub(_url_sub, text)
    text = _QUERY_SECRET.sub(r"\1<token>", text)
    text = _EMAIL.sub("<email>", text)
    text = _SITE_PACKAGES.sub(r"<venv>/lib/\1/\2/", text)
    text = _VENV_BIN.sub(r"<venv>/bin/\1", text)
    text = _STDLIB.sub(r"<python>/lib/\1/", text)
    for pattern, repl in _ROOTS:
        text = pattern.sub(repl, text)
    for token, how in _TOKENS:
        text = token.sub(how, text)
    text = _MAC.sub("<mac>", text)
    text = _IPV4.sub(_ip_sub, text)
    text = _IPV6.sub(_ip_sub, text)
    text = _HOSTS.sub("<host>", text)
    return _FQDN.sub(_fqdn_sub, text)
