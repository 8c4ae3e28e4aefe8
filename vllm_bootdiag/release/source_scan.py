"""The rule table checked against a release's own format strings: the release-day tool.

For each rule vLLM itself prints: is its wording in this release, and where?
A rule in range whose wording is gone has *drifted*: we name the closest
template of the release (a rewording, with a word diff) or say it was removed.
A wording present outside its rule's range means the range is too narrow. A
wording found in another file than the rule's newest reference has *moved*
(the reference needs updating). With an older release beside it, the same
checks say what changed between the two.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.version import Version

from .. import versions
from ..rules import RULES, Rule
from .sources import Release, Template

REWORDED = 0.6
"""Similarity (difflib's ratio over words) at which the closest template counts as
a rewording of a rule's wording; below it the message was removed."""

_MESSAGE_KINDS = ("raise", "critical", "error", "exception", "warning", "info")


@dataclass(frozen=True, slots=True)
class Closest:
    """The release's template nearest a drifted rule's wording."""

    template: Template
    similarity: float
    diff: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "location": self.template.location,
            "kind": self.template.kind,
            "template": self.template.text,
            "similarity": round(self.similarity, 3),
            "diff": self.diff,
        }


@dataclass(frozen=True, slots=True)
class Reference:
    """One `file[:line] (version)` a rule cites."""

    file: str
    lines: tuple[int, ...]
    version: Version | None

    def __str__(self) -> str:
        where = self.file + "".join(f":{n}" for n in self.lines[:1])
        return where + (f" ({self.version})" if self.version else "")


@dataclass(frozen=True, slots=True)
class Move:
    """A rule's wording found away from its newest reference."""

    kind: str
    """`file`: another file (the reference is stale); `line`: same file, other line."""
    reference: Reference
    found: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "reference": str(self.reference), "found": list(self.found)}


@dataclass(frozen=True)
class Finding:
    """One rule checked against one release."""

    rule_id: str
    in_range: bool
    present: bool
    locations: tuple[str, ...] = ()
    closest: Closest | None = None
    moved: Move | None = None
    old_locations: tuple[str, ...] | None = None
    """Where the wording was in the older release (`scan-source OLD NEW`)."""

    @property
    def status(self) -> str:
        """ok | drift | outside_range | absent (not in this release, as its range says)."""
        if self.in_range and self.present:
            return "ok"
        if self.in_range:
            return "drift"
        if self.present:
            return "outside_range"
        return "absent"

    @property
    def change(self) -> str | None:
        """For a drift: `reworded` (a close template exists) or `removed`."""
        if self.status != "drift":
            return None
        if self.closest is not None and self.closest.similarity >= REWORDED:
            return "reworded"
        return "removed"

    @property
    def ok(self) -> bool:
        return self.in_range == self.present

    @property
    def verdict(self) -> str:
        return {
            "ok": "ok",
            "drift": f"drift: wording not in this release ({self.change})",
            "outside_range": "outside range: wording present, range may be too narrow",
            "absent": "ok (not in this release, as its range says)",
        }[self.status]

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "status": self.status,
            "ok": self.ok,
            "in_range": self.in_range,
            "present": self.present,
            "change": self.change,
            "locations": list(self.locations),
            "old_locations": None if self.old_locations is None else list(self.old_locations),
            "closest": self.closest.as_dict() if self.closest else None,
            "moved": self.moved.as_dict() if self.moved else None,
        }


def wording_pattern(rule: Rule) -> str:
    """The regex scan-source looks for: the rule's `source_pattern`, or its literal."""
    return rule.source_pattern or re.escape(rule.literal)


def located(release: Release, rule: Rule) -> list[Template]:
    """Templates holding a rule's wording, messages (raise, logger) before plain strings."""
    found = release.search(wording_pattern(rule))
    return sorted(found, key=lambda t: (t.kind == "string", t.file, t.line))


# --- the closest template -------------------------------------------------------

_LOG_PREFIX = re.compile(r"^.*?\[[\w.-]+\.py:\d+\]\s*")
_EXC_PREFIX = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning):\s*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_WORD = re.compile(r"[a-z][a-z_]{2,}")


def wording(rule: Rule) -> str:
    """A rule's message as a template, from its first example: the log record's prefix
    and exception class cut, numbers as `{}` (what the source would render)."""
    text = _EXC_PREFIX.sub("", _LOG_PREFIX.sub("", rule.examples[0]))
    return _NUMBER.sub("{}", text)


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def closest(
    text: str,
    release: Release,
    taken: frozenset[int] = frozenset(),
    home: str | None = None,
    limit: int = 25,
) -> Closest | None:
    """The release's message template most like `text` (word overlap, then difflib).

    `taken` (ids of templates other rules hold) are skipped: another rule's message
    is not this one's rewording. A template in `home` (the file the wording was in)
    is preferred at a small margin: a rewording usually stays where it was.
    """
    want = _words(text)
    if not want:
        return None
    scored: list[tuple[float, int]] = []
    for i, t in enumerate(release.templates):
        if len(t.text) < 15 or id(t) in taken:
            continue
        have = _words(t.text)
        shared = len(want & have)
        if shared:
            scored.append((shared / len(want | have), i))
    scored.sort(reverse=True)
    best: tuple[float, float, Template] | None = None
    for _j, i in scored[:limit]:
        t = release.templates[i]
        ratio = similarity(text, t.text)
        rank = ratio + (0.02 if t.kind in _MESSAGE_KINDS else 0.0)  # beats a docstring
        if home is not None and _same_file(home, t.file):
            rank += 0.1
        if best is None or rank > best[0]:
            best = (rank, ratio, t)
    if best is None:
        return None
    return Closest(best[2], best[1], word_diff(text, best[2].text))


def similarity(a: str, b: str) -> float:
    """difflib's ratio over words: a rewording keeps most words in order; another
    message that shares one sentence and some numbers does not."""
    return difflib.SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio()


def word_diff(old: str, new: str, context: int = 3) -> str:
    """`[-removed-]{+added+}` between two templates, long equal runs elided."""
    a, b = old.split(), new.split()
    out: list[str] = []
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for n, (op, i1, i2, j1, j2) in enumerate(ops):
        if op == "equal":
            run = a[i1:i2]
            if len(run) > 2 * context + 1:
                head = run[:context] if n else []
                tail = run[-context:] if n < len(ops) - 1 else []
                run = [*head, "…", *tail]
            out.extend(run)
            continue
        if i2 > i1:
            out.append("[-" + " ".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + " ".join(b[j1:j2]) + "+}")
    return " ".join(out)


# --- references -----------------------------------------------------------------

_REF_TOKEN = re.compile(r"(?P<file>[\w./-]+\.py)|:(?P<line>\d+)|\((?P<ver>[^)]*)\)")
_VERSION_IN = re.compile(r"\d+\.\d+(?:\.\d+)*")


def references(rule: Rule) -> list[Reference]:
    """Every `file[:line] (version)` of a rule's references; a version range counts as
    its upper end, a bare `:N` after a file belongs to that file."""
    out: list[Reference] = []
    for ref in rule.references:
        file: str | None = None
        lines: list[int] = []
        for m in _REF_TOKEN.finditer(ref):
            if m["file"]:
                if file and lines:
                    out.append(Reference(file, tuple(lines), None))
                file, lines = m["file"], []
            elif m["line"]:
                lines.append(int(m["line"]))
            elif file:
                found = [versions.parse_version(v) for v in _VERSION_IN.findall(m["ver"])]
                vs = [v for v in found if v is not None]
                out.append(Reference(file, tuple(lines), max(vs) if vs else None))
                lines = []
        if file and lines:
            out.append(Reference(file, tuple(lines), None))
    return out


def _ref_order(r: Reference) -> Version:
    return r.version or Version("0")


def _same_file(ref: str, found: str) -> bool:
    """A reference names a file by its path in the release or by its base name."""
    if "/" in ref:
        return found == ref or found.endswith("/" + ref)
    return found.rsplit("/", 1)[-1] == ref


def moved(rule: Rule, release: Release, found: Sequence[Template]) -> Move | None:
    """The wording away from the newest reference at or before this release."""
    refs = [r for r in references(rule) if r.version is None or r.version <= release.version]
    if not refs or not found:
        return None
    newest = max(refs, key=_ref_order)
    messages = [t for t in found if t.kind != "string"] or list(found)
    places = tuple(t.location for t in messages)
    here = [t for t in messages if _same_file(newest.file, t.file)]
    if not here:
        return Move("file", newest, places)
    lines = {n for t in here for n in t.lines}
    if newest.lines and not lines & set(newest.lines):
        return Move("line", newest, places)
    return None


# --- the checks -------------------------------------------------------------------


def _raised(rule: Rule) -> bool:
    """Whether the rule reads an exception (its first example is `SomeError: ...`)."""
    return bool(_EXC_PREFIX.match(_LOG_PREFIX.sub("", rule.examples[0])))


def _unexplained(
    rule: Rule,
    found: list[Template],
    printed: Sequence[Rule],
    where: dict[str, list[Template]],
    ranged: dict[str, bool],
) -> list[Template]:
    """The templates that show a rule's own message outside its range.

    Two kinds of find are not: a template an exact sibling in range also locates (the
    same message, which the sibling reads: 0.33.0's NUMA-node check, whose old and new
    wordings share a prefix; HM009's negative KV figure, a case of HM006's message that
    0.33's new check ends first), and, for a rule that reads an exception, a template that
    is only logged as a warning or info (0.12+ warns where 0.11 raised about `--model`).
    """
    siblings = [r for r in printed if r.id != rule.id and ranged[r.id] and r.tier == "exact"]
    held = {id(t) for r in siblings for t in where[r.id]}
    raised = _raised(rule)
    return [
        t
        for t in found
        if id(t) not in held and not (raised and t.kind in ("warning", "info", "debug"))
    ]


def _in_range(version: Version, rule: Rule, rules: Sequence[Rule]) -> bool:
    """A rule's own range; a tolerant rule has none (it reads damaged text in any release),
    so it is in range where one of the exact rules it backs up is: elsewhere its wording
    being gone is what its siblings' ranges say, not drift."""
    if rule.tier != "tolerant" or not rule.covers:
        return versions.in_range(version, rule.vllm)
    by_id = {r.id: r for r in rules}
    return any(versions.in_range(version, by_id[c].vllm) for c in rule.covers if c in by_id)


@dataclass
class RuleScan:
    """Every vLLM-printed rule checked against a release (and an older one)."""

    version: Version
    findings: list[Finding] = field(default_factory=list)
    unchecked: list[tuple[str, str]] = field(default_factory=list)
    """(rule id, who prints it): wordings that are not vLLM's own format strings."""


def check_rules(
    release: Release, old: Release | None = None, rules: Sequence[Rule] = RULES
) -> RuleScan:
    """Drift, range and move findings for every rule vLLM prints."""
    out = RuleScan(release.version)
    printed = [r for r in rules if r.printed_by == "vllm"]
    out.unchecked = [(r.id, r.printed_by) for r in rules if r.printed_by != "vllm"]
    where = {r.id: located(release, r) for r in printed}
    taken = frozenset(id(t) for found in where.values() for t in found)
    ranged = {r.id: _in_range(release.version, r, rules) for r in printed}
    for rule in printed:
        in_range = ranged[rule.id]
        found = where[rule.id]
        if not in_range:
            found = _unexplained(rule, found, printed, where, ranged)
        old_found = located(old, rule) if old is not None else None
        near = None
        if in_range and not found:
            base = next((t for t in old_found or () if t.kind != "string"), None)
            refs = [
                r for r in references(rule) if r.version is None or r.version <= release.version
            ]
            home = base.file if base else max(refs, key=_ref_order).file if refs else None
            near = closest(base.text if base else wording(rule), release, taken, home)
        out.findings.append(
            Finding(
                rule.id,
                in_range,
                bool(found),
                tuple(t.location for t in found),
                near,
                moved(rule, release, found) if in_range else None,
                None if old_found is None else tuple(t.location for t in old_found),
            )
        )
    return out
