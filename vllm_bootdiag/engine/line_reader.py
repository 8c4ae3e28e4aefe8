"""Reading a line the way `Rule.match` does, for a line the rule's literal was found in.

The matcher (match.py) runs a rule's patterns only on the lines `Tail.find` gave for its
literal; `reader(rule)` is `rule.match` for such a line, with its groups as a Hit holds
them, at a fraction of its cost. tests/test_match_reader.py holds it to `Rule.match`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..rules.schema import Rule
from ..text.logline import strip_codes

Groups = tuple[tuple[str, str], ...]
"""A match's named groups over the rule's constants, sorted by name (what a Hit holds)."""

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
    that matches one text only is that text found by `in`. A pattern reads the line without
    its colour and cursor codes: vLLM colours only a line's head, but a terminal's capture
    ends rows in `ESC[K` and a tool may colour whole lines, and a pattern anchored at the
    message's end (`\\s*$`) fails behind one. tests/test_match_reader.py
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
            groups = rule.match(strip_codes(line) if "\x1b" in line else line)
            return None if groups is None else tuple(sorted(groups.items()))

        return merged

    def read(line: str) -> Groups | None:
        if check and literal not in line:
            return None
        if "\x1b" in line:  # (memchr) codes a terminal or a tool put in or after a message
            line = strip_codes(line)
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
