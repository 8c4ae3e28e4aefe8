"""Which vLLM printed this log, and which rule wordings apply to it.

vLLM rewords its messages between releases, so every rule carries a PEP 440
range. The version comes from the log itself (the API server's version line,
the engine's `Initializing a V1 LLM engine (vX)`), or from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any, NamedTuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_VERSION = (
    r"v?(?P<version>[0-9]+\.[0-9]+(?:\.[0-9]+)*(?:(?:rc|a|b|\.post|\.dev)[0-9]+)*"
    r"(?:\+[A-Za-z0-9_.]+)?)"
)
"""A release's version (PEP 440's digits and local label are ASCII). Searched with `re`,
whose backtracking through its repeats is linear where the match then fails (the `regex`
module's was quadratic: a banner's `version` before 16 KB of `1.` took 0.1 s, 32 KB 0.4 s;
tests/test_version_detect_linear.py holds it at 64 KB)."""
_SPACE = r"[^\S\x1c-\x1f]"
"""Whitespace as the `regex` module read it here before (`re` also counts the four
separator controls \x1c-\x1f as whitespace)."""


class _Detector:
    """One detector, compiled by `re` on its first search: compiling the four at import
    would cost 5 ms, and `re` searches a line in about half the `regex` module's time."""

    search: Callable[[str], re.Match[str] | None]

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern

    def __getattr__(self, name: str) -> Any:
        if name != "search":
            raise AttributeError(name)
        self.search = re.compile(self.pattern).search
        return self.search


_DETECTORS = (
    _Detector(r"vLLM API server version " + _VERSION),
    _Detector(r"Initializing an? (?:V[0-9] )?LLM engine \(" + _VERSION + r"\)"),
    _Detector(r"\bvLLM (?:server )?version[: ]+" + _VERSION),
    # The ASCII-art banner (0.2x+): block characters, then `version 0.32.0`. (`re` finds the
    # block characters in C: a banner costs it less than matching at each `version` did.)
    _Detector(r"[█▀▄]" + _SPACE + r"+version" + _SPACE + r"+" + _VERSION + _SPACE + r"*$"),
)
_NEEDS = ("vLLM API server version ", "LLM engine (", "vLLM ", "version")
"""A literal each of `_DETECTORS` cannot match without: a line that lacks it is not
searched by that pattern."""


class Detected(NamedTuple):
    """A version and where it came from: `log` (line number) or `hint`."""

    version: Version
    source: str
    line: int | None = None


def normalize(text: str | Version) -> Version:
    """A comparable version: the local label (`+cpu`) does not change wording."""
    v = text if isinstance(text, Version) else Version(str(text).strip().lstrip("v"))
    return Version(v.public)


def parse_version(text: str) -> Version | None:
    """`normalize`, or None for text that is not a version. Cached for short text: a
    fleet's logs name a few releases, and building a Version costs more than reading
    the line (a long hint is parsed, not kept)."""
    return _parse_short(text) if len(text) <= 64 else _parse(text)


def _parse(text: str) -> Version | None:
    try:
        return normalize(text)
    except InvalidVersion:
        return None


_parse_short = lru_cache(maxsize=512)(_parse)


def detect(lines: Iterable[str], hint: str | None = None) -> Detected | None:
    """The vLLM version a log states; the caller's hint wins when it is valid.

    The first matching line wins: the API server states it before anything else.
    """
    if hint:
        v = parse_version(hint)
        if v is not None:
            return Detected(v, "hint")
    for number, line in enumerate(lines, start=1):
        v = stated(line)
        if v is not None:
            return Detected(v, "log", number)
    return None


def stated(line: str) -> Version | None:
    """The version one line states (`detect`'s for that line alone): the first of
    `_DETECTORS` to read `line` reads it, each searched only where its `_NEEDS` literal
    is there; the literals are looked for as that order needs them (two share `vLLM `,
    three `version`): a banner's line costs three literal searches, not five."""
    if "version" in line:
        vllm = "vLLM " in line
        if vllm and _NEEDS[0] in line and (v := _read(0, line)) is not None:
            return v
        if _NEEDS[1] in line and (v := _read(1, line)) is not None:
            return v
        if vllm and (v := _read(2, line)) is not None:
            return v
        return _read(3, line)
    if _NEEDS[1] in line:
        return _read(1, line)
    return None


def _read(k: int, line: str) -> Version | None:
    m = _DETECTORS[k].search(line)
    return parse_version(m["version"]) if m else None


@lru_cache(maxsize=256)
def specifier(text: str) -> SpecifierSet:
    """A cached SpecifierSet; raises ValueError for an invalid range."""
    try:
        return SpecifierSet(text, prereleases=True)
    except InvalidSpecifier as e:
        raise ValueError(f"invalid vLLM version range {text!r}: {e}") from None


def in_range(version: Version | None, spec: str) -> bool:
    """Whether a rule with range `spec` applies; an unknown version matches all."""
    if version is None or not spec:
        return True
    return specifier(spec).contains(version, prereleases=True)


def upper_bound(spec: str) -> Version:
    """The newest version a range reaches, for ordering wordings newest first.

    Open ranges sort above every closed one.
    """
    best = Version("9999")
    for s in specifier(spec):
        if s.operator in ("<", "<="):
            v = Version(s.version)
            best = v if best == Version("9999") or v < best else best
        elif s.operator == "==" and not s.version.endswith("*"):
            best = Version(s.version)
    return best
