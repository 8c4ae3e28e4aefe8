"""Which vLLM printed this log, and which rule wordings apply to it.

vLLM rewords its messages between releases, so every rule carries a PEP 440
range. The version comes from the log itself (the API server's version line,
the engine's `Initializing a V1 LLM engine (vX)`), or from the caller.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

import regex
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .text.wrappers import Lazy

_VERSION = r"v?(?P<version>\d+\.\d+(?:\.\d+)*+(?:(?:rc|a|b|\.post|\.dev)\d+)*+(?:\+[\w.]+)?)"
"""A release's version. Its repeats are possessive (the `regex` module's `*+`): what one
gives back no later part can use (`.post`, `.dev` and `+` are no `.<digits>`), and the
`regex` module's backtracking through them was quadratic where the match then fails (a
banner's `version` before 16 KB of `1.`: 0.1 s, 32 KB 0.4 s; now linear)."""

_DETECTORS = (
    Lazy(r"vLLM API server version " + _VERSION),
    Lazy(r"Initializing an? (?:V\d )?LLM engine \(" + _VERSION + r"\)"),
    Lazy(r"\bvLLM (?:server )?version[: ]+" + _VERSION),
    # The ASCII-art banner (0.2x+): block characters, then `version 0.32.0`.
    Lazy(r"[█▀▄]\s+version\s+" + _VERSION + r"\s*$"),
)
_NEEDS = ("vLLM API server version ", "LLM engine (", "vLLM ", "version")
"""A literal each of `_DETECTORS` cannot match without: a line that lacks it is not
searched by that pattern."""
_BANNER_AT = Lazy(r"(?<=[█▀▄]\s+)version\s+" + _VERSION + r"\s*$")
"""The banner's detector, matched where `version` starts (its block characters looked
behind): the search tries every block character of the banner, this each `version`."""


def _banner(line: str) -> regex.Match[str] | None:
    """`_DETECTORS[-1].search(line)`'s version: the match starts at the block character
    whose whitespace ends at a `version`, so trying each `version` from the left finds
    the same match's group (only the start differs)."""
    at = line.find("version")
    while at >= 0:
        m = _BANNER_AT.match(line, at)
        if m is not None:
            return m
        at = line.find("version", at + 1)
    return None


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
        if "version" not in line and "LLM engine" not in line:
            continue
        for k, need in enumerate(_NEEDS):
            if need not in line:
                continue
            m = _DETECTORS[k].search(line) if k < 3 else _banner(line)
            if m:
                v = parse_version(m["version"])
                if v is not None:
                    return Detected(v, "log", number)
    return None


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
