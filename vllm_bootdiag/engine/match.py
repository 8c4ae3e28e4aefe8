"""The one matcher: a RuleSet's rules against a tail, or against one line.

`classify` reads a whole tail (`hits`); `BootWatcher` reads a line as it
arrives (`line_rules`). Both go through `Rule.match` after the rule's literal
is found, both honour tiers the same way: exact rules read a line first, and a
tolerant rule neither reads a line an exact rule read nor stands when one of
the exact rules it `covers` matched anywhere in the tail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from ..rules.ruleset import RuleSet
from ..rules.schema import Rule
from ..text.triage import Tail


@dataclass(frozen=True, slots=True)
class Hit:
    """A rule that read the tail's line `index` (0-based), with its named groups."""

    index: int
    rule: Rule
    groups: tuple[tuple[str, str], ...]


def _index_of(hit: Hit) -> int:
    return hit.index


def hits(tail: Tail, rules: RuleSet) -> list[Hit]:
    """Rule matches in line order. Where two rules of one outcome read the same line
    (two wordings, possible when the version is unknown), the first rule wins:
    a RuleSet for an unknown version lists the newest wording first."""
    always, by_word, entries = _word_index(rules)
    words = tail.words
    keys = by_word.keys() & words
    order = sorted(always + [k for w in keys for k in by_word[w]]) if keys else always
    found: list[Hit] = []
    seen: set[tuple[int, str]] = set()
    exact_lines: set[int] = set()
    exact_ids: set[str] = set()
    find, lines, text = tail.find, tail.lines, tail.other_text
    # Exact rules come first in a RuleSet: by the time a tolerant rule is tried, the
    # lines exact causes read and the exact rules that matched are known.
    for k in order:
        rule, literal, rest, tolerant, covers, outcome, unless, cause = entries[k]
        if rest and not words.issuperset(rest):
            continue  # the literal is not in the tail's failure lines: no str.find needed
        if covers and not exact_ids.isdisjoint(covers):
            continue  # dropped below whatever it reads: not worth its patterns
        if literal not in text:
            continue  # `find` would say so, at twice the cost
        where = find(literal)
        voided: bool | None = None
        for i in where:
            if (i, outcome) in seen or (tolerant and i in exact_lines):
                continue
            groups = rule.match(lines[i])
            if groups is None:
                continue
            if unless:
                if voided is None:
                    voided = any(find(u) for u in unless)
                if voided:
                    continue
            seen.add((i, outcome))
            found.append(Hit(i, rule, tuple(sorted(groups.items()))))
            if not tolerant:
                exact_ids.add(rule.id)
                if cause:
                    # an echo (`Worker failed with error '<cause>'`) leaves its line
                    # to a tolerant cause
                    exact_lines.add(i)
    if len(found) > 1:
        found.sort(key=_index_of)
    return found


_WORD_RUN = re.compile(r"\w+")


@cache
def inner_words(literal: str) -> frozenset[str]:
    """The words of `literal` with a non-word character on each side inside it: wherever
    the literal occurs, each is a whole word of the text, so a text that lacks one of them
    cannot hold the literal (a set test instead of a search)."""
    return frozenset(
        m[0] for m in _WORD_RUN.finditer(literal) if m.start() > 0 and m.end() < len(literal)
    )


def line_rules(line: str, rules: RuleSet) -> Iterator[Rule]:
    """The rules that read one line, exact ones first (a line at a time: no `unless`,
    which needs the whole tail, and no `covers`, which the final diagnosis applies).
    The line's words pick the rules worth a look, as in `hits`: a search per line for
    any of a hundred literals costs more than finding its words."""
    for k in _picked(rules, _WORD_RUN.findall(line)):
        rule = rules.rules[k]
        if rule.literal in line and rule.match(line) is not None:
            yield rule


_Entry = tuple[Rule, str, frozenset[str], bool, frozenset[str], str, tuple[str, ...], bool]
"""What `hits` reads of a rule: (rule, literal, its inner words but the key one, tolerant,
covers, outcome, unless, an exact cause), unpacked at once instead of an attribute each."""
_Index = tuple[list[int], dict[str, list[int]], list[_Entry]]
_INDEXES: dict[int, tuple[RuleSet, _Index]] = {}


def _picked(rules: RuleSet, words: Iterable[str]) -> list[int]:
    """Positions (in table order) of the rules whose key word is among `words`, and of
    those with no inner word: the only rules whose literal the text can hold."""
    always, by_word, _ = _word_index(rules)
    picked = [k for w in by_word.keys() & words for k in by_word[w]]
    return sorted(always + picked) if picked else always


def _word_index(rules: RuleSet) -> _Index:
    """(positions of the rules whose literal has no inner word, {inner word: positions of
    the rules keyed by it}, each rule's entry), each rule keyed by its longest inner word
    (kept per RuleSet): a tail's words pick the few rules worth a look without a pass
    over all of them."""
    cached = _INDEXES.get(id(rules))
    if cached is not None and cached[0] is rules:
        return cached[1]
    always: list[int] = []
    by_word: dict[str, list[int]] = {}
    entries: list[_Entry] = []
    for k, rule in enumerate(rules.rules):
        inner = inner_words(rule.literal)
        key = max(sorted(inner), key=len) if inner else None
        if key is not None:
            by_word.setdefault(key, []).append(k)
        else:
            always.append(k)
        tolerant = rule.tier != "exact"
        entries.append(
            (
                rule,
                rule.literal,
                inner - {key},
                tolerant,
                frozenset(rule.covers) if tolerant else frozenset(),
                rule.outcome,
                rule.unless,
                rule.role == "cause",
            )
        )
    if len(_INDEXES) >= 256:
        _INDEXES.clear()
    _INDEXES[id(rules)] = (rules, (always, by_word, entries))
    return always, by_word, entries
