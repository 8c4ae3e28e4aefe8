"""The matcher's prefilter never leaves out a rule whose literal the text holds.

A rule is looked at only when its key token (its longest inner token) is a token of the
tail's failure text and every other inner token is one too: wherever the literal occurs,
each token it holds between two of its own whitespace characters is a token of the text.
Checked on every corpus tail and on generated text around every rule's literal, Unicode
whitespace included.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import timeline
from vllm_bootdiag.engine import match
from vllm_bootdiag.rules.ruleset import default_rules
from vllm_bootdiag.rules.schema import Rule
from vllm_bootdiag.text.triage import Tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
RULES = default_rules()


def _looked_at(tail: Tail) -> set[int]:
    """Positions of the rules the prefilter lets through (before the literal search)."""
    rests = match._word_index(RULES)[3]
    tokens = match.tokens_of(tail)
    picked = match._picked(RULES, tokens)
    return {k for k in picked if tokens.issuperset(rests[k])}


def _holding(tail: Tail) -> set[int]:
    return {k for k, rule in enumerate(RULES.rules) if rule.literal in tail.other_text}


def test_every_rule_a_corpus_tail_holds_is_looked_at() -> None:
    held = 0
    for log in sorted(CORPUS.glob("*/*.log")):
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]
        tail = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        holding = _holding(tail)
        assert holding <= _looked_at(tail), log
        held += len(holding)
    assert held > 500


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
    assert _holding(tail) <= _looked_at(tail)


def test_inner_tokens_are_whole_tokens_of_any_text_holding_the_literal() -> None:
    assert match.inner_tokens("Engine core initialization failed") == {"core", "initialization"}
    assert match.inner_tokens(" a b ") == {"a", "b"}
    assert match.inner_tokens("one") == frozenset()
    assert match.inner_tokens("CUDA out of memory. Tried") == {"out", "of", "memory."}
