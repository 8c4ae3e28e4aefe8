"""The matcher's tiers, on a table of its own: which rule reads which line.

Exact rules run first; a tolerant rule does not read a line an exact cause read, and
stands down everywhere once an exact rule it `covers` matched. A tolerant rule that
stands down is not tried at all, so it keeps no other tolerant rule off a line.
"""

from __future__ import annotations

from typing import Any

from vllm_bootdiag.engine.match import hits, line_rules
from vllm_bootdiag.rules import Rule, RuleSet
from vllm_bootdiag.text.triage import Tail


def _rule(rule_id: str, literal: str, **extra: Any) -> Rule:
    return Rule(
        id=rule_id,
        name=f"test-{rule_id.lower()}",
        vllm=">=0.1",
        outcome="invalid_argument",
        literal=literal,
        patterns=(rf"ValueError: (?P<message>.*{literal}.*)",),
        examples=(f"ValueError: x {literal} y",),
        summary="a test rule",
        remediation="none",
        **extra,
    )


EXACT_SEEN = _rule("TST001", "alpha failed")
EXACT_UNSEEN = _rule("TST002", "delta failed")
STANDS_DOWN = _rule("TST101", "beta", tier="tolerant", covers=("TST001",))
STANDS = _rule("TST102", "beta", tier="tolerant", covers=("TST002",))
RULES = RuleSet((EXACT_SEEN, EXACT_UNSEEN, STANDS_DOWN, STANDS))


def _read(lines: list[str]) -> list[tuple[int, str]]:
    return [(h.index, h.rule.id) for h in hits(Tail(lines), RULES)]


def test_a_tolerant_rule_whose_exact_sibling_matched_leaves_the_line_to_another() -> None:
    lines = ["ValueError: the alpha failed here", "ValueError: beta went wrong"]
    assert _read(lines) == [(0, "TST001"), (1, "TST102")]


def test_a_tolerant_rule_reads_when_its_sibling_did_not_match() -> None:
    assert _read(["ValueError: beta went wrong"]) == [(0, "TST101")]


def test_a_tolerant_rule_never_reads_a_line_an_exact_cause_read() -> None:
    assert _read(["ValueError: alpha failed and beta too"]) == [(0, "TST001")]


def test_one_line_at_a_time_every_rule_that_reads_it_exact_first() -> None:
    line = "ValueError: alpha failed and beta too"
    assert [r.id for r in line_rules(line, RULES)] == ["TST001", "TST101", "TST102"]
    assert list(line_rules("INFO nothing to read", RULES)) == []
