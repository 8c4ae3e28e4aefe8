"""The one matcher: a RuleSet's rules against a tail, or against one line.

`classify` reads a whole tail (`hits`); `BootWatcher` reads a line as it
arrives (`line_rules`). Both go through `Rule.match` after the rule's literal
is found, both honour tiers the same way: exact rules read a line first, and a
tolerant rule neither reads a line an exact rule read nor stands when one of
the exact rules it `covers` matched anywhere in the tail.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from functools import cache
from itertools import compress
from operator import itemgetter
from typing import Literal, NamedTuple

from ..outcomes import OUTCOME_TYPES
from ..rules.ruleset import RuleSet
from ..rules.schema import Rule
from ..text.triage import Tail
from .line_reader import Groups as Groups
from .line_reader import _reader_of
from .line_reader import groups_of as groups_of
from .line_reader import plain_text as plain_text
from .line_reader import reader as reader


class Hit(NamedTuple):
    """A rule that read the tail's line `index` (0-based), with its named groups (a
    tuple: half the cost of a frozen dataclass, and a tail makes a few of them)."""

    index: int  # type: ignore[assignment]  # (the field hides `tuple.index`)
    rule: Rule
    groups: tuple[tuple[str, str], ...]


hit_index = itemgetter(0)
"""A hit's `index` (a sort key read in C)."""
_new = tuple.__new__
"""`Hit(i, rule, groups)` is `_new(Hit, (i, rule, groups))` without NamedTuple's own
`__new__` (a Python frame: twice the cost)."""


def hits(tail: Tail, rules: RuleSet) -> list[Hit]:
    """Rule matches in line order. Where two rules of one outcome read the same line
    (two wordings, possible when the version is unknown), the first rule wins:
    a RuleSet for an unknown version lists the newest wording first."""
    return scan(tail, rules)[0]


Precedence = tuple[bool, int, bool]


def tokens_of(tail: Tail) -> Collection[str]:
    """The whitespace-separated tokens of the tail's candidate-failure text (what `find`
    searches): a literal one of whose inner tokens is missing is not there. Split in C,
    a third cheaper than its `\\w+` words, and kept a list: a RuleSet's key tokens are
    looked up in it (`frozenset.intersection`, in C), where a set of every token would
    cost hashing each into one first (each string's hash is kept, so the out-of-range
    rules' lookup reads them again for free). Past `WIDE_TEXT`, their set (see
    `_candidates`)."""
    text = tail.other_text
    return text.split() if len(text) <= WIDE_TEXT else frozenset(text.split())


def scan(
    tail: Tail,
    rules: RuleSet,
    tokens: Collection[str] | None = None,
    part: Part = "all",
) -> tuple[list[Hit], Precedence | None]:
    """`hits`, and the highest root-cause precedence among the failures they read (None:
    no failure cause matched), which the out-of-range check weighs. `tokens`: the tail's
    `tokens_of`, when the caller has them already. `part`: "causes", the echo rules are not
    read; "echoes", only they are, for a tail where no cause rule matched (each only where
    `echoes_apart(rules)`: the hits are then those of a scan of every rule; else "all")."""
    words = tokens_of(tail) if tokens is None else tokens
    return _scan(tail, rules, False, None, words, part if echoes_apart(rules) else "all")


Part = Literal["all", "causes", "echoes"]
"""Which rules a scan reads: every one, the causes, or the echoes (`scan`)."""


def outranking(
    tail: Tail, rules: RuleSet, best: Precedence | None, tokens: Collection[str] | None = None
) -> list[Hit]:
    """The hits of `rules` whose rule is a failure cause of a precedence above `best`
    (None: any failure cause), read as `hits` reads them. Where no rule whose literal the
    tail holds could give one, no pattern runs at all."""
    words = tokens_of(tail) if tokens is None else tokens
    found = _scan(tail, rules, True, best, words, "causes" if echoes_apart(rules) else "all")[0]
    return [h for h in found if _above(h.rule, best)]


def echoes_apart(rules: RuleSet) -> bool:
    """Whether leaving the echo rules (`role="echo"`) out of a scan leaves every other hit
    as it is, and what `diagnose` weighs of them: no echo shares its outcome with a cause
    (a hit takes its line from the later rules of its outcome), no rule covers an echo (an
    exact hit drops a tolerant rule that covers it), and no echo's outcome is a verdict on
    the KV cache (`diagnose` looks for one among every hit). True of the default table,
    whose echoes are `unknown`s; a scan that reads no echo then reads a tail's echoes only
    where it found no cause. tests/test_match_echoes.py holds both ways equal."""
    got = _APART.get(id(rules))
    if got is None or got[0] is not rules:
        echoes = [r for r in rules.rules if r.role != "cause"]
        kinds = {r.outcome for r in echoes}
        ids = {r.id for r in echoes}
        apart = not (
            any(r.outcome in kinds for r in rules.rules if r.role == "cause")
            or any(ids.intersection(r.covers) for r in rules.rules)
            or any(OUTCOME_TYPES[kind].KV_VERDICT for kind in kinds)
        )
        if len(_APART) >= 256:
            _APART.clear()
        got = _APART[id(rules)] = (rules, apart)
    return got[1]


_APART: dict[int, tuple[RuleSet, bool]] = {}


def _above(rule: Rule, best: Precedence | None) -> bool:
    """Whether `rule` is a failure cause that outranks `best` (None: any failure cause)."""
    if rule.role != "cause" or not FAILURE[rule.outcome]:
        return False
    return best is None or rule.precedence > best


WIDE_TEXT = 16_384
"""Past this much failure text, a rule's literal is looked for only where every inner
token of it is a token of the text (a set of them all is then cheaper than the searches
it saves); below it, wherever its key token is one (see `_candidates`)."""


def _candidates(
    always: list[int],
    by_word: dict[str, list[int]],
    rests: list[frozenset[str]],
    keywords: frozenset[str],
    words: Collection[str],
    wide: bool,
) -> list[int]:
    """Positions (in table order) of the rules whose literal the text split into `words`
    can hold: those whose key token is one of them (looked up in C, each token's hash made
    once), and those with no inner token. `wide`: also every other inner token, tested in
    a set of the words (the long way, which a long text pays for; tests/test_match_tokens.py
    holds both to the rules whose literal the text holds)."""
    keys = keywords.intersection(words)
    if keys:  # (each key's list added in place, then one sort: half a comprehension's cost)
        order = always.copy()
        for w in keys:
            order += by_word[w]
        order.sort()
    else:
        order = always
    if wide:
        held = words if isinstance(words, frozenset) else frozenset(words)
        order = [k for k in order if held.issuperset(rests[k])]
    return order


def _scan(
    tail: Tail,
    rules: RuleSet,
    gated: bool,
    best_kept: Precedence | None,
    words: Collection[str],
    part: Part = "all",
) -> tuple[list[Hit], Precedence | None]:
    """`scan`; `gated`: no hits at all unless a rule whose literal the tail holds is a
    failure cause above `best_kept` (None: any), for a caller that keeps only those;
    `part`: the rules read (the caller made sure the others may be left out)."""
    if not tail.other:
        return [], None  # no candidate line: no literal is found (`Rule.literal`: 4 or more)
    always, by_word, entries, rests, literals, keywords = _word_index(rules, part)
    text = tail.other_text
    order = _candidates(always, by_word, rests, keywords, words, len(text) > WIDE_TEXT)
    # the rules whose literal the failure lines hold (a search, not `find`'s lines)
    if gated and not any(
        (rank := entries[k][7]) is not None
        and (best_kept is None or rank > best_kept)
        and literals[k] in text
        for k in order
    ):
        return [], None  # the rank tested first: no literal looked for below `best_kept`
    # (in C: `[k for k in order if literals[k] in text]`)
    live = list(compress(order, map(text.__contains__, map(literals.__getitem__, order))))
    if not live:
        return [], None
    found: list[Hit] = []
    seen: set[tuple[int, str]] = set()
    exact_lines: set[int] = set()
    exact_ids: set[str] = set()
    find, lines = tail.find, tail.lines
    best: Precedence | None = None
    # Exact rules come first in a RuleSet: by the time a tolerant rule is tried, the
    # lines exact causes read and the exact rules that matched are known.
    for k in live:
        entry = entries[k]
        rule, literal, tolerant, covers, outcome, unless, cause, rank, read = entry
        if read is None:  # made on the rule's first use: its patterns compile then
            read = _reader_of(rule)
            entries[k] = (*entry[:8], read)
        if covers and not exact_ids.isdisjoint(covers):
            continue  # dropped below whatever it reads: not worth its patterns
        voided: bool | None = None
        for i in find(literal):
            if (i, outcome) in seen or (tolerant and i in exact_lines):
                continue
            groups = read(lines[i])  # `rule.match`'s groups, sorted (see `reader`)
            if groups is None:
                continue
            if unless:
                if voided is None:
                    voided = any(find(u) for u in unless)
                if voided:
                    continue
            seen.add((i, outcome))
            found.append(_new(Hit, (i, rule, groups)))
            if rank is not None and (best is None or rank > best):
                best = rank
            if not tolerant:
                exact_ids.add(rule.id)
                if cause:
                    # an echo (`Worker failed with error '<cause>'`) leaves its line
                    # to a tolerant cause
                    exact_lines.add(i)
    if len(found) > 1:
        found.sort(key=hit_index)
    return found, best


FAILURE = {kind: cls.FAILURE for kind, cls in OUTCOME_TYPES.items()}
"""Kind -> whether it is a failure (the server came up: not one)."""


@cache
def inner_tokens(literal: str) -> frozenset[str]:
    """The whitespace-separated tokens of `literal` with whitespace on each side inside
    it: wherever the literal occurs, each is a whole token of the text (`str.split`'s),
    so a text that lacks one of them cannot hold the literal (a set test, not a search)."""
    tokens = literal.split()
    first = 0 if literal[:1].isspace() else 1
    last = len(tokens) if literal[-1:].isspace() else len(tokens) - 1
    return frozenset(tokens[first:last])


def line_rules(line: str, rules: RuleSet, *, reporting: bool = False) -> list[Rule]:
    """The rules that read one line, exact ones first (a line at a time: no `unless`,
    which needs the whole tail, and no `covers`, which the final diagnosis applies);
    `reporting`: only those a BootWatcher reports on (`Rule.reports`). The line's tokens
    pick the rules worth a look, as in `hits`: a search per line for any of a hundred
    literals costs more than splitting it. Each picked rule's literal is looked for
    before any is sorted or read: most candidate lines hold none (a watch runs this on
    every candidate line; a generator that read a rule's attributes per rule picked cost
    twice as much)."""
    always, by_word, keywords = _line_index(rules, reporting)
    found = [k for k, literal in always if literal in line]
    for word in keywords.intersection(line.split()):
        found += [k for k, literal in by_word[word] if literal in line]
    if not found:
        return []
    if len(found) > 1:
        found.sort()
    table = rules.rules
    return [table[k] for k in found if table[k].match(line) is not None]


_LineIndex = tuple[list[tuple[int, str]], dict[str, list[tuple[int, str]]], frozenset[str]]
_LINE_INDEXES: dict[tuple[int, bool], tuple[RuleSet, _LineIndex]] = {}


def _line_index(rules: RuleSet, reporting: bool) -> _LineIndex:
    """`_word_index`'s rules with no inner token and those keyed by each token, as
    (position, literal) pairs, and the key tokens; `reporting`: only the rules a watch
    reports on (kept per RuleSet)."""
    cached = _LINE_INDEXES.get((id(rules), reporting))
    if cached is not None and cached[0] is rules:
        return cached[1]
    index_all = _word_index(rules)
    always_at, by_word_at, literals = index_all[0], index_all[1], index_all[4]
    table = rules.rules
    keep = [not reporting or r.reports for r in table]
    always = [(k, literals[k]) for k in always_at if keep[k]]
    by_word = {
        w: pairs
        for w, at in by_word_at.items()
        if (pairs := [(k, literals[k]) for k in at if keep[k]])
    }
    if len(_LINE_INDEXES) >= 256:
        _LINE_INDEXES.clear()
    line_index = (always, by_word, frozenset(by_word))
    _LINE_INDEXES[(id(rules), reporting)] = (rules, line_index)
    return line_index


_Entry = tuple[
    Rule,
    str,
    bool,
    frozenset[str],
    str,
    tuple[str, ...],
    bool,
    Precedence | None,
    Callable[[str], Groups | None] | None,
]
"""What `scan` reads of a rule: (rule, literal, tolerant, covers, outcome, unless, a cause,
its precedence where its outcome is a failure and it a cause, its `reader` once made),
unpacked at once instead of an attribute each."""
_Index = tuple[
    list[int], dict[str, list[int]], list[_Entry], list[frozenset[str]], list[str], frozenset[str]
]
_INDEXES: dict[tuple[int, str], tuple[RuleSet, _Index]] = {}


def _picked(rules: RuleSet, words: Iterable[str]) -> list[int]:
    """Positions (in table order) of the rules whose key token is among `words`, and of
    those with no inner token: the only rules whose literal the text can hold."""
    index = _word_index(rules)
    always, by_word, keywords = index[0], index[1], index[5]
    picked = [k for w in keywords.intersection(words) for k in by_word[w]]
    return sorted(always + picked) if picked else always


def _word_index(rules: RuleSet, part: Part = "all") -> _Index:
    """(positions of the rules whose literal has no inner token, {inner token: positions of
    the rules keyed by it}, each rule's entry, its other inner tokens, its literal, the key
    tokens), each rule keyed by its longest inner token (kept per RuleSet): a tail's tokens
    pick the few rules worth a look without a pass over all of them. `part`: the rules
    listed ("causes": no echo rule, "echoes": only they; every entry is kept, so that
    positions stay)."""
    cached = _INDEXES.get((id(rules), part))
    if cached is not None and cached[0] is rules:
        return cached[1]
    always: list[int] = []
    by_word: dict[str, list[int]] = {}
    entries: list[_Entry] = []
    rests: list[frozenset[str]] = []
    for k, rule in enumerate(rules.rules):
        precedence = rules.precedence(rule.id) or rule.precedence
        inner = inner_tokens(rule.literal)
        key = max(sorted(inner), key=len) if inner else None
        if part != "all" and (rule.role == "cause") != (part == "causes"):
            pass  # looked up by no token
        elif key is not None:
            by_word.setdefault(key, []).append(k)
        else:
            always.append(k)
        tolerant = rule.tier != "exact"
        rests.append(inner - {key})
        entries.append(
            (
                rule,
                rule.literal,
                tolerant,
                frozenset(rule.covers) if tolerant else frozenset(),
                rule.outcome,
                rule.unless,
                rule.role == "cause",
                precedence if rule.role == "cause" and FAILURE[rule.outcome] else None,
                None,
            )
        )
    if len(_INDEXES) >= 256:
        _INDEXES.clear()
    literals = [r.literal for r in rules.rules]
    index = (always, by_word, entries, rests, literals, frozenset(by_word))
    _INDEXES[(id(rules), part)] = (rules, index)
    return index
