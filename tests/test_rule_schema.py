"""The Rule model's lifecycle, tier and role, and how the matcher honours them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vllm_bootdiag import timeline, versions
from vllm_bootdiag.engine import match
from vllm_bootdiag.rules import BY_ID, RULES, Rule, RuleSet
from vllm_bootdiag.text import triage

KV_LINE = BY_ID["KV004"].examples[0]
CUT = KV_LINE[: KV_LINE.index(" Based on")]
"""The KV004 line cut short by a terminal: the exact rule no longer reads it."""


def _tolerant(**over: object) -> Rule:
    fields: dict[str, object] = dict(
        id="KV901",
        name="kv-shortfall-cut",
        outcome="kv_cache_shortfall",
        literal="KV cache is needed",
        patterns=(r"\((?P<needed_gib>\d+(?:\.\d+)?) GiB KV cache is needed",),
        examples=(CUT, KV_LINE),
        summary="KV shortfall, cut short",
        remediation="as KV004",
        tier="tolerant",
        covers=("KV004",),
    )
    fields.update(over)
    return Rule.model_validate(fields)


def test_defaults_are_an_active_exact_cause() -> None:
    for rule in RULES:
        assert rule.tier in ("exact", "tolerant") and rule.role in ("cause", "echo")
        assert rule.tier == "tolerant" or not rule.covers
        assert rule.status in ("preview", "active", "retired")


def test_only_a_tolerant_rule_covers_siblings() -> None:
    with pytest.raises(ValidationError, match="only a tolerant rule covers"):
        _tolerant(tier="exact")


def test_status_is_checked() -> None:
    with pytest.raises(ValidationError):
        _tolerant(status="stable")
    v = versions.parse_version("0.32.0")
    assert _tolerant(status="preview").applies_to(v)
    assert not _tolerant(status="retired").applies_to(v)


def test_precedence_cause_then_rank_then_exact() -> None:
    exact_echo = BY_ID["KV004"].model_copy(update={"role": "echo"})
    tol = _tolerant()
    assert BY_ID["KV004"].precedence > tol.precedence > exact_echo.precedence
    assert BY_ID["LC004"].precedence < BY_ID["KV004"].precedence
    # a damaged root cause beats the exact line that reports its consequence
    assert tol.precedence > BY_ID["LC003"].precedence


def _hits(lines: list[str], rules: tuple[Rule, ...]) -> list[tuple[int, str]]:
    tail = triage.Tail(lines, timeline.progress_key)
    return [(h.index, h.rule.id) for h in match.hits(tail, RuleSet(rules))]


def test_a_tolerant_rule_never_reads_a_line_an_exact_rule_read() -> None:
    tol = _tolerant(covers=())
    assert _hits([KV_LINE], (BY_ID["KV004"], tol)) == [(0, "KV004")]
    assert _hits([KV_LINE], (tol, BY_ID["KV004"])) == [(0, "KV004")]


def test_a_covering_tolerant_match_is_dropped_when_its_sibling_matched() -> None:
    tol = _tolerant()
    assert _hits([CUT, KV_LINE], (BY_ID["KV004"], tol)) == [(1, "KV004")]
    assert _hits([CUT], (BY_ID["KV004"], tol)) == [(0, "KV901")]
    assert _hits([CUT, KV_LINE], (BY_ID["KV004"], tol.model_copy(update={"covers": ()}))) == [
        (0, "KV901"),
        (1, "KV004"),
    ]


def test_diagnosis_says_which_tier_gave_the_primary() -> None:
    from vllm_bootdiag import classify

    assert classify([KV_LINE]).match == "exact"
    d = classify(["nothing to see", "ERROR something odd"])
    assert d.primary.kind == "unknown" and d.match is None and d.repairs == ()
