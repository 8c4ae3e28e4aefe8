"""The one matcher: a RuleSet's rules against a tail, or against one line.

`classify` reads a whole tail (`hits`); `BootWatcher` reads a line as it
arrives (`line_rules`). Both go through `Rule.match` after the rule's literal
is found, both honour tiers the same way: exact rules read a line first, and a
tolerant rule neither reads a line an exact rule read nor stands when one of
the exact rules it `covers` matched anywhere in the tail.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..rules.ruleset import RuleSet
from ..rules.schema import Rule
from ..text.triage import Tail


@dataclass(frozen=True, slots=True)
class Hit:
    """A rule that read the tail's line `index` (0-based), with its named groups."""

    index: int
    rule: Rule
    groups: tuple[tuple[str, str], ...]


def hits(tail: Tail, rules: RuleSet) -> list[Hit]:
    """Rule matches in line order. Where two rules of one outcome read the same line
    (two wordings, possible when the version is unknown), the first rule wins:
    a RuleSet for an unknown version lists the newest wording first."""
    found: list[Hit] = []
    seen: set[tuple[int, str]] = set()
    for rule in rules.rules:
        for i in tail.find(rule.literal):
            if (i, rule.outcome) in seen:
                continue
            groups = rule.match(tail.lines[i])
            if groups is not None and not any(tail.find(u) for u in rule.unless):
                seen.add((i, rule.outcome))
                found.append(Hit(i, rule, tuple(sorted(groups.items()))))
    exact_lines = {h.index for h in found if h.rule.tier == "exact"}
    exact_ids = {h.rule.id for h in found if h.rule.tier == "exact"}
    found = [
        h
        for h in found
        if h.rule.tier == "exact"
        or (h.index not in exact_lines and not exact_ids.intersection(h.rule.covers))
    ]
    found.sort(key=lambda h: h.index)
    return found


def line_rules(line: str, rules: RuleSet) -> Iterator[Rule]:
    """The rules that read one line, exact ones first (a line at a time: no `unless`,
    which needs the whole tail, and no `covers`, which the final diagnosis applies)."""
    for rule in rules.rules:
        if rule.literal in line and rule.match(line) is not None:
            yield rule
