"""The one matcher: a RuleSet's rules against a tail, or against one line.

`classify` reads a whole tail (`hits`); `BootWatcher` reads a line as it
arrives (`line_rules`). Both go through `Rule.match` after the rule's literal
is found, both honour tiers the same way: exact rules read a line first, and a
tolerant rule neither reads a line an exact rule read nor stands when one of
the exact rules it `covers` matched anywhere in the tail.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from functools import cache
from operator import itemgetter
from typing import Any, NamedTuple

from ..outcomes import OUTCOME_TYPES
from ..rules.ruleset import RuleSet
from ..rules.schema import Rule
from ..text.triage import Tail


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
    tail: Tail, rules: RuleSet, tokens: Collection[str] | None = None
) -> tuple[list[Hit], Precedence | None]:
    """`hits`, and the highest root-cause precedence among the failures they read (None:
    no failure cause matched), which the out-of-range check weighs. `tokens`: the tail's
    `tokens_of`, when the caller has them already."""
    return _scan(tail, rules, False, None, tokens_of(tail) if tokens is None else tokens)


def outranking(
    tail: Tail, rules: RuleSet, best: Precedence | None, tokens: Collection[str] | None = None
) -> list[Hit]:
    """The hits of `rules` whose rule is a failure cause of a precedence above `best`
    (None: any failure cause), read as `hits` reads them. Where no rule whose literal the
    tail holds could give one, no pattern runs at all."""
    words = tokens_of(tail) if tokens is None else tokens
    return [h for h in _scan(tail, rules, True, best, words)[0] if _above(h.rule, best)]


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
    order = sorted(always + [k for w in keys for k in by_word[w]]) if keys else always
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
) -> tuple[list[Hit], Precedence | None]:
    """`scan`; `gated`: no hits at all unless a rule whose literal the tail holds is a
    failure cause above `best_kept` (None: any), for a caller that keeps only those."""
    always, by_word, entries, rests, literals, keywords = _word_index(rules)
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
    live = [k for k in order if literals[k] in text]
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


def line_rules(line: str, rules: RuleSet) -> Iterator[Rule]:
    """The rules that read one line, exact ones first (a line at a time: no `unless`,
    which needs the whole tail, and no `covers`, which the final diagnosis applies).
    The line's tokens pick the rules worth a look, as in `hits`: a search per line for
    any of a hundred literals costs more than splitting it."""
    for k in _picked(rules, line.split()):
        rule = rules.rules[k]
        if rule.literal in line and rule.match(line) is not None:
            yield rule


Groups = tuple[tuple[str, str], ...]
"""A match's named groups over the rule's constants, sorted by name (what a Hit holds)."""

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
_INDEXES: dict[int, tuple[RuleSet, _Index]] = {}


def _picked(rules: RuleSet, words: Iterable[str]) -> list[int]:
    """Positions (in table order) of the rules whose key token is among `words`, and of
    those with no inner token: the only rules whose literal the text can hold."""
    index = _word_index(rules)
    always, by_word, keywords = index[0], index[1], index[5]
    picked = [k for w in keywords.intersection(words) for k in by_word[w]]
    return sorted(always + picked) if picked else always


def _word_index(rules: RuleSet) -> _Index:
    """(positions of the rules whose literal has no inner token, {inner token: positions of
    the rules keyed by it}, each rule's entry, its other inner tokens, its literal, the key
    tokens), each rule keyed by its longest inner token (kept per RuleSet): a tail's tokens
    pick the few rules worth a look without a pass over all of them."""
    cached = _INDEXES.get(id(rules))
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
        if key is not None:
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
    _INDEXES[id(rules)] = (rules, index)
    return index


# --- reading a line the way `Rule.match` does, for a line the literal was found in -------

_SPECIAL = frozenset(".^$*+?{}[]|()")
"""Characters with a meaning of their own in a pattern outside a class (regex, VERSION0)."""


def plain_text(pattern: str) -> str | None:
    """The text a pattern matches when it matches one text only: literal characters, or a
    backslash before ASCII punctuation or a space (which stands for that character);
    None for anything else (a class, a group, a flag, a quantifier, an anchor, an escape
    such as `\\d`). Such a pattern is found by `in`, with no regex run."""
    out: list[str] = []
    escaped = False
    for c in pattern:
        if escaped:
            if not c.isascii() or c.isalnum():
                return None
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c in _SPECIAL:
            return None
        else:
            out.append(c)
    return None if escaped else "".join(out)


def reader(rule: Rule) -> Callable[[str], Groups | None]:
    """`rule.match(line)` as a Hit holds it (its items sorted; None: no match), for a line
    `Tail.find(rule.literal)` gave: where the literal has no newline it is in the line
    (`find` found it in the line's head, which a literal without one cannot leave), so it
    is not looked for again. Its groups are read by number, names in sorted order, and a pattern
    that matches one text only is that text found by `in`. tests/test_match_reader.py
    holds it to `Rule.match` on every rule's examples, counter-examples and corpus lines."""
    literal = rule.literal
    check = "\n" in literal
    constants = tuple(sorted(dict(rule.constants).items()))
    steps: list[tuple[str | None, Callable[[str], Any] | None, tuple[str, ...], tuple[int, ...]]]
    steps = []
    for k, pattern in enumerate(rule.patterns):
        plain = plain_text(pattern)  # (it has no group: nothing to compile for it)
        if plain is not None:
            steps.append((plain, None, (), ()))
            continue
        compiled = rule.compiled[k]
        index = compiled.groupindex  # name -> group number (a name written twice: one)
        names = tuple(sorted(index))
        steps.append((None, compiled.search, names, tuple(index[n] for n in names)))
    if not check and len(steps) == 1 and steps[0][0] is not None:
        needle = steps[0][0]
        if needle == literal:  # the literal is there: a match, nothing read
            return lambda line: constants
        return lambda line: constants if needle in line else None
    if rule.constants and any(names for _p, _s, names, _n in steps):
        # groups over constants: the long way (a few rules)
        def merged(line: str) -> Groups | None:
            groups = rule.match(line)
            return None if groups is None else tuple(sorted(groups.items()))

        return merged

    def read(line: str) -> Groups | None:
        if check and literal not in line:
            return None
        for plain, search, names, numbers in steps:
            if search is None:
                if plain in line:  # type: ignore[operator]
                    return constants
                continue
            m: Any = search(line)
            if m:
                if not names:
                    return constants
                if len(names) == 1:
                    value = m.group(numbers[0])
                    return () if value is None else ((names[0], value),)
                values = m.group(*numbers)  # in C: not `groupdict()` (five times the cost)
                if None not in values:
                    return tuple(zip(names, values, strict=True))
                return tuple([(n, v) for n, v in zip(names, values, strict=True) if v is not None])
        return None

    return read


_READERS: dict[int, tuple[Rule, Callable[[str], Groups | None]]] = {}


def _reader_of(rule: Rule) -> Callable[[str], Groups | None]:
    """`reader(rule)`, made once per rule (kept by the rule's identity, as `_INDEXES`)."""
    got = _READERS.get(id(rule))
    if got is None or got[0] is not rule:
        if len(_READERS) >= 4096:
            _READERS.clear()
        got = _READERS[id(rule)] = (rule, reader(rule))
    return got[1]


def groups_of(rule: Rule, text: str) -> Groups | None:
    """`rule.match(text)` as a Hit holds it (items sorted; None: no match), for any text."""
    return _reader_of(rule)(text) if rule.literal in text else None
