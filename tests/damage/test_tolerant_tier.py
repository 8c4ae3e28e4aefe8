"""The tolerant tier backs the exact one up and never changes what a clean log says."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.rules import BY_ID, RULES, default_rules

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
TOLERANT = [r for r in RULES if r.tier == "tolerant"]
OTHER_LINE = {"CF101": "pydantic's `Value error, ...` line; CF004 reads its header line"}
"""Tolerant rules that stand in for an exact one printed on another line of one error."""


def test_there_is_a_tolerant_tier() -> None:
    assert len(TOLERANT) >= 5


@pytest.mark.parametrize("rule", TOLERANT, ids=[r.id for r in TOLERANT])
def test_a_tolerant_rule_reads_every_example_of_the_exact_rules_it_covers(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.covers, "a tolerant rule names the exact rules it backs up"
    for sibling_id in rule.covers:
        sibling = BY_ID[sibling_id]
        assert sibling.tier == "exact" and sibling.outcome == rule.outcome
        if rule.id in OTHER_LINE:
            continue
        for ex in sibling.examples:
            assert rule.match(ex) is not None, (sibling_id, ex[:80])


@pytest.mark.parametrize("rule", TOLERANT, ids=[r.id for r in TOLERANT])
def test_a_tolerant_rule_is_version_free(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.vllm == ""


def test_the_tolerant_tier_never_changes_a_clean_corpus_log() -> None:
    exact_only = default_rules().exact
    for entry in corpus.entries(CORPUS):
        lines = logtail.read_tail(entry.log_path)
        with_tolerant, without = classify(lines), classify(lines, rules=exact_only)
        assert with_tolerant.primary == without.primary, entry.id
        assert with_tolerant.match == ("exact" if without.primary.rule_id else None), entry.id
