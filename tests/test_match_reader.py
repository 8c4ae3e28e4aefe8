"""The matcher's reader of a line gives what `Rule.match` gives, the long way.

`match.reader(rule)` reads a line `Tail.find(rule.literal)` gave: it skips the literal's
second search, reads the groups by name in sorted order, and finds a pattern that matches
one text only with `in`. Each is held to `Rule.match` (items sorted, as a Hit keeps them)
on every rule's examples and counter-examples, on every corpus line holding a literal, on
those lines cut and damaged, and on generated text around each literal.
"""

from __future__ import annotations

from pathlib import Path

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.engine import match
from vllm_bootdiag.rules import Rule
from vllm_bootdiag.rules.ruleset import default_rules

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
RULES = default_rules()


def _long_way(rule: Rule, line: str) -> match.Groups | None:
    groups = rule.match(line)
    return None if groups is None else tuple(sorted(groups.items()))


def _same(rule: Rule, line: str) -> None:
    if rule.literal in line:  # the reader's precondition: a line `find` gave
        assert match.reader(rule)(line) == _long_way(rule, line), (rule.id, line)


def test_the_reader_is_rule_match_on_every_example_and_counter_example() -> None:
    read = 0
    for rule in RULES.rules:
        for line in (*rule.examples, *rule.counter_examples):
            _same(rule, line)
            read += rule.literal in line
    assert read > 200


def test_the_reader_is_rule_match_on_every_corpus_line_holding_a_literal() -> None:
    lines = {
        line
        for log in CORPUS.glob("*/*.log")
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
    }
    matched = 0
    for rule in RULES.rules:
        for line in lines:
            if rule.literal not in line:
                continue
            _same(rule, line)
            matched += rule.match(line) is not None
            at = line.index(rule.literal) + len(rule.literal)
            for cut in (line[:at], line[: at + 7], line + "  \r", "x" + line + ")"):
                _same(rule, cut)
    assert matched > 300


def test_a_plain_pattern_is_the_text_it_matches() -> None:
    assert match.plain_text(r"Traceback \(most recent call last\)") == (
        "Traceback (most recent call last)"
    )
    assert match.plain_text(r"no `g` here\.") == "no `g` here."
    for pattern in (r"a\d", r"a.b", r"(?i)ab", r"ab$", r"a\nb", "a\\", r"a\é", r"x{2}", r"\bx"):
        assert match.plain_text(pattern) is None, pattern
    plain = [p for r in RULES.rules for p in r.patterns if match.plain_text(p) is not None]
    assert len(plain) > 20


_TEXT = st.text(alphabet="ab (),.:'`=-_[]\\1é\n\t", max_size=8)


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(RULES.rules), _TEXT, _TEXT, st.integers(0, 40))
def test_the_reader_is_rule_match_around_any_literal(
    rule: Rule, before: str, after: str, cut: int
) -> None:
    example = rule.examples[0]
    at = example.find(rule.literal)
    tail = example[at + len(rule.literal) :]
    _same(rule, f"{before}{rule.literal}{after}")
    _same(rule, f"{before}{example[:at]}{rule.literal}{tail[:cut]}{after}")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab .()\\`'-:\n", min_size=1, max_size=6), _TEXT)
def test_a_plain_pattern_matches_where_its_text_is(pattern: str, text: str) -> None:
    plain = match.plain_text(pattern)
    if plain is None:
        return
    compiled = regex.compile(pattern)
    assert (compiled.search(text) is not None) == (plain in text)
    assert compiled.search(f"{text}{plain}{text}") is not None


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RULES.rules), _TEXT, _TEXT, st.booleans())
def test_groups_of_any_text_is_rule_match(rule: Rule, before: str, after: str, cut: bool) -> None:
    example = rule.examples[0]
    for text in (example, f"{before}{example}{after}", example[: len(example) // 2], before):
        text = text[:-1] if cut and text else text
        assert match.groups_of(rule, text) == _long_way(rule, text), (rule.id, text)
