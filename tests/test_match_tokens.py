"""The matcher's prefilter never leaves out a rule whose literal the text holds.

A rule is looked at only when its key token (its longest inner token) is a token of the
tail's failure text (past `WIDE_TEXT`, every other inner token too): wherever the literal
occurs, each token it holds between two of its own whitespace characters is a token of the
text. Checked both ways on every corpus tail and its damaged copies, on long hostile
shapes, and on generated text around every rule's literal, Unicode whitespace included.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import timeline
from vllm_bootdiag.engine import match
from vllm_bootdiag.rules.ruleset import default_rules
from vllm_bootdiag.rules.schema import Rule
from vllm_bootdiag.text.triage import Tail

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
sys.path.insert(0, str(ROOT / "tests" / "damage"))
import damages  # noqa: E402

RULES = default_rules()


def _looked_at(tail: Tail, wide: bool = False) -> set[int]:
    """Positions of the rules the prefilter lets through (before the literal search); `wide`:
    as it does past `WIDE_TEXT` (every inner token tested, in a set of the text's tokens)."""
    always, by_word, _entries, rests, _literals, keywords = match._word_index(RULES)
    tokens = match.tokens_of(tail)
    picked = match._candidates(always, by_word, rests, keywords, tokens, wide)
    assert picked == sorted(picked)
    if not wide:
        assert picked == match._picked(RULES, tokens)
    return set(picked)


def _holding(tail: Tail) -> set[int]:
    return {k for k, rule in enumerate(RULES.rules) if rule.literal in tail.other_text}


def _both_ways(tail: Tail) -> int:
    """The rules whose literal the tail holds pass the prefilter both ways (and so the
    same rules are searched for: those it lets through, less those the text lacks)."""
    holding = _holding(tail)
    assert holding <= _looked_at(tail) and holding <= _looked_at(tail, wide=True)
    return len(holding)


def test_every_rule_a_corpus_tail_holds_is_looked_at() -> None:
    held = 0
    for log in sorted(CORPUS.glob("*/*.log")):
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]
        for variant in (lines, *(d.apply(lines) for d in damages.DAMAGES)):
            tail = Tail(variant, timeline.progress_key, None, timeline.MESSAGE_STARTS)
            held += _both_ways(tail)
    assert held > 5000


def test_a_wide_text_is_searched_for_the_same_rules() -> None:
    """Past `WIDE_TEXT` the tokens come as a set and every inner token is tested: on the
    bench's hostile shapes (every rule's example in 16 KB rows, key tokens without their
    literals) both ways search for what the text holds."""
    examples = [e for rule in RULES.rules for e in rule.examples[:1]]
    keys = sorted(match._word_index(RULES)[1])
    shapes = [
        [f"ERROR 01-02 03:04:05 [a.py:1] {e} " + "x" * 16_000 for e in examples],
        ["ValueError: " + " ".join(keys) * 40 for _ in range(40)],
        [
            f"RuntimeError: {k} " + "  ".join(e.replace(" ", "  ") for e in examples)
            for k in range(40)
        ],
    ]
    for lines in shapes:
        tail = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        assert len(tail.other_text) > match.WIDE_TEXT
        assert isinstance(match.tokens_of(tail), frozenset)
        _both_ways(tail)
        narrow = Tail(lines[:1], timeline.progress_key, None, timeline.MESSAGE_STARTS)
        assert isinstance(match.tokens_of(narrow), list)
        _both_ways(narrow)


_SPACE = st.sampled_from([" ", "  ", "\t", "\n", "\u00a0", "\u2003", "\x1c", "\x85", ""])
_WORDISH = st.text(alphabet="ab(),.:'=-_[]1", max_size=6)


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(RULES.rules),
    _WORDISH,
    _SPACE,
    _SPACE,
    _WORDISH,
)
def test_a_literal_anywhere_in_a_line_is_looked_at(
    rule: Rule, before: str, left: str, right: str, after: str
) -> None:
    line = f"ERROR: {before}{left}{rule.literal}{right}{after}"
    tail = Tail([line, "ValueError: something else"])
    _both_ways(tail)


def test_inner_tokens_are_whole_tokens_of_any_text_holding_the_literal() -> None:
    assert match.inner_tokens("Engine core initialization failed") == {"core", "initialization"}
    assert match.inner_tokens(" a b ") == {"a", "b"}
    assert match.inner_tokens("one") == frozenset()
    assert match.inner_tokens("CUDA out of memory. Tried") == {"out", "of", "memory."}


class _Truthy(list[int]):
    """An empty list that reads as non-empty: `_scan` then takes the long way over it."""

    def __bool__(self) -> bool:
        return True


def test_a_tail_with_no_candidate_line_is_read_as_the_long_way_reads_it() -> None:
    """With no candidate line `scan` returns at once; the long way (every rule's literal
    looked for in the empty failure text) finds nothing either, for every release's rules,
    echoes included, and the out-of-range pass alike."""
    releases = [None, *sorted({log.parent.name for log in CORPUS.glob("*/*.log")})]
    tails = [["INFO 01-02 03:04:05 [a.py:1] hello"], [""], []]
    for log in sorted(CORPUS.glob("*/*.log"))[::5]:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]
        progress = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        keep = set(range(len(lines))) - set(progress.other)
        tails.append([line for i, line in enumerate(lines) if i in keep])
    for lines in tails:
        tail = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        if tail.other:
            continue  # (a line left alone can read as a candidate)
        long_way = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        long_way.other = _Truthy()
        for release in releases:
            rules = RULES.for_version(release)
            for part in ("all", "causes", "echoes"):
                assert match.scan(tail, rules, part=part) == ([], None)
                assert match.scan(long_way, rules, part=part) == ([], None)
            assert match.outranking(tail, rules, None) == []
            assert match.outranking(long_way, rules, None) == []
