"""One scan of a release (against an older one, optionally): data, JSON, 80 columns.

The report says what a release manager acts on, in that order: rules whose
wording drifted (reworded, with a diff, or removed), ranges too narrow,
messages that moved file, the engine's strings (version lines, phase markers,
OOM frames) lost or moved, and the gaps: boot-path messages no rule reads.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cli import documents
from ..rules import RULES, Rule
from . import engine_strings, gaps, other_packages, package_report, source_scan, sources

SCHEMA_VERSION = documents.SCHEMA_VERSION
"""The CLI's: bumped when a key of `as_dict` changes meaning or goes away. The keys are
those of `vllm-bootdiag schema scan-source` (release/schemas.py), always present."""

WIDTH = 80


@dataclass
class Report:
    """Everything `scan-source` found."""

    release: sources.Release
    old: sources.Release | None
    rules: source_scan.RuleScan
    gaps: list[gaps.Gap]
    engine: list[engine_strings.Check]
    others: other_packages.PackageScan

    @property
    def drift(self) -> list[source_scan.Finding]:
        return [f for f in self.rules.findings if f.status == "drift"]

    @property
    def outside(self) -> list[source_scan.Finding]:
        return [f for f in self.rules.findings if f.status == "outside_range"]

    def moved(self, kind: str) -> list[source_scan.Finding]:
        return [f for f in self.rules.findings if f.moved and f.moved.kind == kind]

    @property
    def engine_action(self) -> list[engine_strings.Check]:
        return engine_strings.needs_action(self.engine)

    @property
    def needs_action(self) -> bool:
        """Anything to change in the rule table. Compared with an older release, a new
        gap likely to end a boot counts (a release adds hundreds of messages: the medium
        and low ones are listed for triage, not a verdict)."""
        return bool(
            self.drift
            or self.outside
            or self.moved("file")
            or self.engine_action
            or (self.old is not None and any(g.likelihood == "high" for g in self.gaps))
            or bool(self.others.to_act_on)
        )

    def summary(self) -> dict[str, int]:
        likely = Counter(g.likelihood for g in self.gaps)
        return {
            "rules_checked": len(self.rules.findings),
            "rules_ok": sum(f.ok for f in self.rules.findings),
            "drift": len(self.drift),
            "reworded": sum(f.change == "reworded" for f in self.drift),
            "removed": sum(f.change == "removed" for f in self.drift),
            "outside_range": len(self.outside),
            "moved": len(self.moved("file")),
            "shifted": len(self.moved("line")),
            "gaps": len(self.gaps),
            "gaps_high": likely["high"],
            "engine_strings_to_check": len(self.engine_action),
            **self.others.summary(),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "release": _describe(self.release),
            "old": _describe(self.old) if self.old else None,
            "needs_action": self.needs_action,
            "summary": self.summary(),
            "rules": [f.as_dict() for f in self.rules.findings],
            "unchecked": [
                {"rule_id": f.rule_id, "printed_by": f.printed_by} for f in self.others.unchecked
            ],
            "gaps": [g.as_dict() for g in self.gaps],
            "engine_strings": [c.as_dict() for c in self.engine],
            "packages": self.others.packages_dict(),
            "other_rules": [f.as_dict() for f in self.others.findings],
        }


def _describe(r: sources.Release) -> dict[str, Any]:
    return {
        "path": r.path.name,
        "vllm_version": str(r.version),
        "files": len(r.files),
        "templates": len(r.templates),
    }


def scan(
    path: str | Path,
    old: str | Path | None = None,
    version: str | None = None,
    old_version: str | None = None,
    rules: Sequence[Rule] | None = None,
    packages: dict[str, list[str]] | None = None,
    corpus: str | Path | None = None,
) -> Report:
    """Read the release at `path` (and `old`) and run every check.

    `rules` replaces the built-in table (the CLI's `--rules FILE` adds a user's rules to
    it): a rule written for a release's new message is checked, and its gap closed,
    before it lands. `packages` (name -> paths, `--with`) are the other packages whose
    texts rules read (argparse, Python and the OS are this interpreter's unless given);
    `corpus` is where the newest logs' argparse and pydantic lines come from.
    """
    table: Sequence[Rule] = RULES if rules is None else rules
    others = other_packages.load(packages or {}, table)  # bad paths fail before the long read
    new = sources.load(path, version)
    before = sources.load(old, old_version) if old is not None else None
    return Report(
        new,
        before,
        source_scan.check_rules(new, before, table),
        gaps.find(new, before, table),
        engine_strings.check(new, before),
        other_packages.scan(others, new, corpus, table),
    )


# --- 80 columns ---------------------------------------------------------------------


class _Lines:
    """Text wrapped to a width (0: whole lines, for `--wide`)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.out: list[str] = []

    def wrap(self, text: str, indent: int = 0) -> None:
        pad = " " * indent
        if self.width <= 0:
            self.out.append(pad + text)
            return
        self.out += textwrap.wrap(
            text, self.width, initial_indent=pad, subsequent_indent=pad, break_on_hyphens=False
        ) or [pad]

    def item(self, head: str, body: list[str], indent: int = 9) -> None:
        """`head` on its own line(s), then each body text wrapped under it."""
        if self.width <= 0:
            self.out += ["  " + head, *(" " * indent + b for b in body)]
            return
        self.out += textwrap.wrap(
            head,
            self.width,
            initial_indent="  ",
            subsequent_indent=" " * indent,
            break_on_hyphens=False,
        )
        for text in body:
            self.wrap(text, indent)

    def blank(self) -> None:
        self.out.append("")


def render(report: Report, all_: bool = False, top: int = 15, wide: bool = False) -> str:
    """The report for a terminal: every line at most 80 columns (whole lines if `wide`)."""
    return _render(report, all_, top, _Lines(0 if wide else WIDTH))


def _render(report: Report, all_: bool, top: int, o: _Lines) -> str:
    r, old = report.release, report.old
    title = f"vLLM {r.version} ({r.path.name})"
    if old is not None:
        title += f" against {old.version}"
    o.wrap(f"{title}: {len(r.files)} files, {len(r.templates)} templates")

    o.blank()
    o.wrap(f"Drift ({len(report.drift)}): rules in range whose wording is gone")
    for f in report.drift:
        body = []
        if f.old_locations:
            body.append(f"was at {', '.join(f.old_locations[:2])}")
        if f.closest is not None:
            near = f.closest
            label = "reworded as" if f.change == "reworded" else "nearest (not a rewording)"
            body.append(f"{label}, similarity {near.similarity:.2f}: {near.template.location}")
            body.append(near.diff)
        o.item(f"{f.rule_id}  {f.change}", body)

    o.blank()
    o.wrap(f"Outside range ({len(report.outside)}): wording present, range too narrow")
    for f in report.outside:
        o.item(f"{f.rule_id}  found at {', '.join(f.locations[:2])}", [])

    o.blank()
    moved = report.moved("file")
    o.wrap(f"Moved ({len(moved)}): wording in another file than the newest reference")
    for f in moved:
        assert f.moved is not None
        o.item(f"{f.rule_id}  {f.moved.reference}", ["now " + ", ".join(f.moved.found[:2])])
    o.blank()
    shifted = report.moved("line")
    o.wrap(f"Shifted ({len(shifted)}): same file, another line than the reference")
    if all_:
        for f in shifted:
            assert f.moved is not None
            o.item(f"{f.rule_id}  {f.moved.reference} -> {f.moved.found[0]}", [])
    elif shifted:
        o.wrap(", ".join(f.rule_id for f in shifted) + " (--all lists them)", 2)

    o.blank()
    action = report.engine_action
    o.wrap(
        f"Engine strings ({len(action)} to change of {len(report.engine)}): "
        "version lines, phase markers, OOM frames"
    )
    for c in report.engine if all_ else action:
        body = []
        if c.moved and c.old_locations:
            body.append(f"moved: {c.old_locations[0]} -> {c.locations[0]}")
        elif c.locations:
            body.append(f"at {c.locations[0]}")
        if c.probe.vllm and c.status in ("outside_range", "absent"):
            body.append(f"range {c.probe.vllm}")
        o.item(f"{c.status:<8} {c.probe.group} {c.probe.family}: {c.probe.name}", body, 11)
    relocated = [c for c in engine_strings.moved(report.engine) if c not in action]
    if relocated and not all_:
        names = ", ".join(sorted({c.probe.family for c in relocated}))
        o.wrap(f"moved file, still read ({len(relocated)}): {names} (--all lists them)", 2)

    o.blank()
    scope = "new in this release" if old is not None else "in this release"
    likely = Counter(g.likelihood for g in report.gaps)
    o.wrap(
        f"Gaps ({len(report.gaps)} {scope}, {likely['high']} high): boot-path "
        "messages no rule matches, most likely to end a boot first"
    )
    shown = report.gaps if all_ else report.gaps[:top]
    for n, g in enumerate(shown, 1):
        t = g.template
        how = f"raise {t.exception}" if t.kind == "raise" else f"logger.{t.kind}"
        head = f"{n:>3}. {g.likelihood:<6} {t.location}  {how}"
        if t.function:
            head += f" in {t.function}"
        text = t.text if len(t.text) <= 300 or o.width <= 0 else t.text[:297] + "..."
        o.item(head, [text], 14)
    if len(shown) < len(report.gaps):
        o.wrap(f"... {len(report.gaps) - len(shown)} more (--all or --json)", 2)

    o.blank()
    package_report.render(report.others, o, all_)
    s = report.summary()
    o.blank()
    o.wrap(
        f"vLLM {r.version}: {s['rules_ok']} of {s['rules_checked']} vLLM-printed rules agree "
        f"with this release's source; {s['moved']} moved, {s['gaps']} gaps; "
        f"{s['other_rules_found']} of {s['other_rules']} other packages' rules found; "
        + ("action needed" if report.needs_action else "nothing to change")
    )
    return "\n".join(o.out)
