"""The other packages' section of scan-source's report, in 80 columns.

One line per package (what was read, its version against vLLM's pin, counts),
then every rule to act on (a wording missing, with the closest text; a vLLM part
out of date, with the line it came from), then why the rest were not checked.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from .other_packages import STATUSES, PackageScan
from .package_findings import Finding, Part, location


class Lines(Protocol):
    """report._Lines: text wrapped to the report's width."""

    def wrap(self, text: str, indent: int = 0) -> None: ...
    def item(self, head: str, body: list[str], indent: int = 9) -> None: ...


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in STATUSES if counts.get(s))


def _part_body(p: Part) -> list[str]:
    body = []
    if p.source:
        body.append(f"from {p.source}")
    if p.detail:
        body.append(p.detail)
    if p.closest is not None:
        near = p.closest
        body.append(
            f"closest ({near.similarity:.2f}): {location(near.template.location)}: "
            + near.template.text[:200]
        )
    elif p.status == "missing":
        body.append("nothing close in this package")
    return body


def _finding(f: Finding, o: Lines, all_: bool) -> None:
    shown = [p for p in f.parts if all_ or p.status in ("missing", "out_of_date")]
    head = f"{f.rule_id}  {f.printed_by}: {f.status.replace('_', ' ')}"
    if not shown:
        where = next((p.locations[0] for p in f.parts if p.locations), None)
        o.item(head + (f" at {where}" if where else f" ({f.reason})" if f.reason else ""), [])
        return
    o.item(head, [])
    for p in shown:
        text = p.text if len(p.text) <= 70 else p.text[:67] + "..."
        where = f" at {p.locations[0]}" if p.locations and p.status == "found" else ""
        o.item(f"  {p.what} {p.status.replace('_', ' ')}: {text!r}{where}", _part_body(p), 11)


def render(scan: PackageScan, o: Lines, all_: bool) -> None:
    """The section: packages, rules to act on (every rule with `all_`), the unchecked."""
    o.wrap(
        f"Other packages ({len(scan.findings)} rules, {len(scan.to_act_on)} to act on): "
        "rules whose text torch, argparse, pydantic ... print"
    )
    for d in scan.packages_dict():
        counts = _counts(d["counts"])
        if not d["given"]:
            given = "a platform's own lines" if d["name"] == "platform" else "not given"
            how = "" if d["name"] == "platform" else f" (--with {d['name']}=PATH)"
            o.item(f"{d['name']}: {given}{how}: {counts}", [], 4)
            continue
        body = [*d["notes"][:3]]
        if d["requires"]:
            outside = " (the one read is outside it)" if d["pinned"] is False else ""
            body.insert(0, f"vLLM asks {d['requires']}{outside}")
        build = f" ({d['build']} build)" if d["build"] else ""
        o.item(f"{d['name']}: {', '.join(d['versions'])}{build}: {counts}", body, 4)
    findings = scan.findings if all_ else scan.to_act_on
    for f in findings:
        _finding(f, o, all_)
    if scan.unchecked and not all_:
        why = Counter(f.reason or "" for f in scan.unchecked)
        o.wrap(f"not checkable ({len(scan.unchecked)}, --all lists them):", 2)
        for reason, n in why.most_common():
            o.wrap(f"{n:>3}  {reason}", 4)
