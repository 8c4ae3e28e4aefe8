"""What startup's shortcuts skip is what they would have given: the CLI's human output
reads an outcome's fields without dumping it, and matches what a dump gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, classify_file
from vllm_bootdiag.cli import render
from vllm_bootdiag.outcomes import OUTCOME_TYPES, OutcomeBase
from vllm_bootdiag.rules import RULES

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _dumped_line(outcome: OutcomeBase) -> str:
    """`render.outcome_line` as it was written before: from `model_dump()`."""
    kind: str = getattr(outcome, "kind", "")
    hidden = render._HIDDEN | (render._UNKNOWN_HIDDEN if kind == "unknown" else frozenset())
    numbers = {k: v for k, v in outcome.model_dump().items() if k not in hidden and v is not None}
    if not numbers:
        return kind
    return kind + ": " + ", ".join(f"{k}={v}" for k, v in numbers.items())


def test_outcome_line_reads_what_a_dump_gives() -> None:
    assert len(LOGS) > 150
    kinds = set()
    for log in LOGS:
        d = classify_file(log)
        for outcome in (d.primary, *d.matches):
            kinds.add(getattr(outcome, "kind", ""))
            assert render.outcome_line(outcome) == _dumped_line(outcome), log
    for rule in RULES:  # every kind a rule gives, with the numbers its examples print
        for example in rule.examples:
            for outcome in classify([example]).matches:
                kinds.add(getattr(outcome, "kind", ""))
                assert render.outcome_line(outcome) == _dumped_line(outcome), rule.id
    assert kinds == set(OUTCOME_TYPES)


@pytest.mark.parametrize("wide", [False, True])
def test_human_output_does_not_need_a_dump(wide: bool) -> None:
    d = classify_file(LOGS[0])
    text = render.diagnosis(d, wide)
    assert text.splitlines()[0].startswith(render.outcome_line(d.primary)[:20])
