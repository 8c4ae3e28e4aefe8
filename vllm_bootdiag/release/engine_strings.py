"""The engine's other version-bound strings, checked against a release's source.

Besides the rules, the classifier depends on vLLM text in three more places:
the lines that detect the version (`vLLM API server version …`, the banner),
the progress lines that mark boot phases (`Model loading took`, `Available KV
cache memory`), and the traceback frame names that say where a CUDA OOM
happened (`capture_model`, `load_weights`). If a release renames one, version
detection, the timeline or OOM attribution goes quietly wrong; each is checked
here like a rule's wording: present, where, and (with an older release) gone.
A marker carries the range of releases that print it (`Marker.vllm`), checked like a
rule's: a family in range with no wording present needs a new one; a wording present
outside its range means the range is too narrow; absent outside it is as it should be.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex

from .. import versions
from .sources import Release

_FIELD = re.compile(r"\$\{\w+\}|\{[^{}]*\}|%[-+ #0]*\d*(?:\.\d+)?[sdrfi]")
_COLOUR = re.compile(r"\$\{\w+\}")
_VERSION_GROUP = re.compile(r"v\?\(\?P<version>.*?\)(?=\\s|\)|$)")
"""The version group of a detector, shown as `X.Y.Z` in a probe's name."""

NOT_VLLM: dict[str, str] = {
    "Uvicorn running on": "uvicorn",
    "Application startup complete": "uvicorn",
}
"""Marker strings printed by another package: nothing in vLLM's source to check."""


@dataclass(frozen=True, slots=True)
class Probe:
    """One engine string: which group, its name, and the text it looks for."""

    group: str
    """`version` (detection), `marker` (a boot-phase line), `raw_marker` (tqdm/uvicorn
    progress), `oom_frame` (a traceback frame name)."""
    family: str
    """What one of several wordings serves (a marker's key, an OOM phase): a family
    needs one string present, the others being older releases' wordings."""
    name: str
    text: str
    vllm: str | None = None
    """The range of releases that print it (markers); None where the engine keeps none."""


@dataclass(frozen=True, slots=True)
class Check:
    """A probe against a release (and an older one)."""

    probe: Probe
    status: str
    """ok | missing | gone (present in the older release, not in this one) | not_vllm |
    absent (not in this release, as its range says) | outside_range (present, but the
    range says this release does not print it)."""
    locations: tuple[str, ...]
    old_locations: tuple[str, ...] | None = None

    @property
    def moved(self) -> bool:
        """Found in other files than in the older release."""
        if not self.old_locations or not self.locations:
            return False
        files = {p.rsplit(":", 1)[0] for p in self.locations}
        return not files & {p.rsplit(":", 1)[0] for p in self.old_locations}

    def as_dict(self) -> dict[str, Any]:
        return {
            "group": self.probe.group,
            "family": self.probe.family,
            "name": self.probe.name,
            "probe": self.probe.text,
            "vllm": self.probe.vllm,
            "status": self.status,
            "locations": list(self.locations),
            "old_locations": None if self.old_locations is None else list(self.old_locations),
            "moved": self.moved,
        }


def _alternatives(pattern: str) -> list[str]:
    """Top-level `|` alternatives of a regex (one wording each)."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def _data(name: str, *modules: str) -> tuple[Any, ...]:
    """The engine's table `name` from the first module holding it (the tables are
    moving into `rules/markers.py` and `rules/attribution.py`); () if none does, which
    the tests catch: every group must yield probes."""
    import importlib

    for module in modules:
        try:
            found = getattr(importlib.import_module(f"vllm_bootdiag.{module}"), name, None)
        except ImportError:
            continue
        if found is not None:
            return tuple(found)
    return ()


def probes() -> Iterator[Probe]:
    """Every version-bound string the engine uses, read from where the engine keeps it."""
    for rx in _data("_DETECTORS", "rules.markers", "versions"):
        yield Probe("version", "version", _VERSION_GROUP.sub("X.Y.Z", rx.pattern), rx.pattern)
    for m in _data("MARKERS", "rules.markers", "timeline"):
        for alt in _alternatives(m.start):
            yield Probe("marker", m.key, alt, alt, getattr(m, "vllm", None) or None)
    for literal, phase, _device in _data("_RAW_MARKERS", "rules.markers", "timeline"):
        yield Probe("raw_marker", phase, literal, re.escape(literal))
    groups = _data("FRAME_GROUPS", "rules.attribution")
    if not groups:  # the tables before rules/attribution.py held them
        groups = tuple(
            (kind, _data(name, "engine.diagnose", "engine"), "")
            for kind, name in (
                ("cuda_graph_capture_oom", "_GRAPH_FRAMES"),
                ("weight_load_oom", "_WEIGHT_FRAMES"),
                ("profiling_oom", "_PROFILE_FRAMES"),
            )
        )
    for kind, frames, _hint in groups:
        for frame in frames:
            yield Probe("oom_frame", kind, frame, frame)


class _Rendered:
    """A release's templates as the lines they print, fields filled with one value,
    joined for one regex search per probe (offsets map back to templates)."""

    def __init__(self, release: Release, value: str) -> None:
        self.release = release
        parts: list[str] = []
        self.starts: list[int] = []
        pos = 0
        for t in release.templates:
            text = _FIELD.sub(value, _COLOUR.sub("", t.text))
            self.starts.append(pos)
            parts.append(text)
            pos += len(text) + 1
        self.text = "\n".join(parts)

    def find(self, pattern: str) -> tuple[str, ...]:
        found: dict[str, None] = {}
        for m in regex.finditer(pattern, self.text, regex.MULTILINE):  # (the detectors' `*+`)
            t = self.release.templates[bisect_right(self.starts, m.start()) - 1]
            found[t.location] = None
        return tuple(found)


def _find_frame(release: Release, frame: str) -> tuple[str, ...]:
    """A traceback frame name: a `def` name (after `in `), or a file or module path."""
    name = frame[3:] if frame.startswith("in ") else frame
    if frame.startswith("in "):
        return tuple(release.functions.get(name, ()))
    hits = [loc for fn, locs in release.functions.items() if name in fn for loc in locs[:1]]
    hits += [f for f in release.files if name in f]
    return tuple(sorted(hits))


class _Locator:
    """Where each probe is in one release (its rendered texts built once)."""

    def __init__(self, release: Release) -> None:
        self.release = release
        self.plain = _Rendered(release, "1")
        self.versioned = _Rendered(release, str(release.version))

    def __call__(self, probe: Probe) -> tuple[str, ...]:
        if probe.group == "oom_frame":
            return _find_frame(self.release, probe.text)
        rendered = self.versioned if probe.group == "version" else self.plain
        return rendered.find(probe.text)


def check(release: Release, old: Release | None = None) -> list[Check]:
    """Every engine string against `release` (and `old`)."""
    out: list[Check] = []
    locate = _Locator(release)
    locate_old = _Locator(old) if old is not None else None
    for probe in probes():
        if probe.name in NOT_VLLM or probe.text.startswith("torch/"):
            out.append(Check(probe, "not_vllm", ()))
            continue
        found = locate(probe)
        before = locate_old(probe) if locate_old is not None else None
        in_range = probe.vllm is None or versions.in_range(release.version, probe.vllm)
        if in_range:
            status = "ok" if found else "gone" if before else "missing"
        else:
            status = "outside_range" if found else "absent"
        out.append(Check(probe, status, found[:5], None if before is None else before[:5]))
    return out


def needs_action(checks: list[Check]) -> list[Check]:
    """What a release manager must change in the engine's tables.

    A family (a marker's key, an OOM phase) with several wordings needs only one in
    this release: the others are older releases' wordings. So: a family in range with
    none present (gone, where the older release had it, or missing); a string present
    outside its range (widen it). A string that moved file still matches (the engine
    reads text, not files): `moved` lists those, for information.
    """
    alive = {(c.probe.group, c.probe.family) for c in checks if c.status == "ok"}
    compared = any(c.old_locations is not None for c in checks)

    def lost(c: Check) -> bool:
        if (c.probe.group, c.probe.family) in alive:
            return False
        # Without a range, a string missing from both releases may be an older
        # release's wording: with an older release beside it, only `gone` counts.
        return c.status == "gone" or (
            c.status == "missing" and (c.probe.vllm is not None or not compared)
        )

    return [c for c in checks if c.status == "outside_range" or lost(c)]


def moved(checks: list[Check]) -> list[Check]:
    """Strings found in other files than in the older release (informational)."""
    return [c for c in checks if c.moved]
