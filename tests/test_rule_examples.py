"""Each rule's examples match it, with the outcome it names; counter-examples do not.

Test ids are `<rule id>-example-<n>`, so `pytest -k KV004` selects one rule.
"""

from __future__ import annotations

import pytest

from vllm_bootdiag import classify, outcomes
from vllm_bootdiag.rules import RULES, Rule

EXAMPLES = [
    pytest.param(rule, ex, id=f"{rule.id}-example-{n}")
    for rule in RULES
    if rule.status != "retired"  # kept for its id and history, never matched
    for n, ex in enumerate(rule.examples)
]
COUNTER = [
    pytest.param(rule, ex, id=f"{rule.id}-counter-{n}")
    for rule in RULES
    for n, ex in enumerate(rule.counter_examples)
]


@pytest.mark.parametrize(("rule", "line"), EXAMPLES)
def test_example_classifies_to_the_rule(rule: Rule, line: str) -> None:
    version = _a_version_in(rule)
    d = classify([line], version=version)
    ids = [m.rule_id for m in d.matches]
    assert rule.id in ids
    match = next(m for m in d.matches if m.rule_id == rule.id)
    if rule.attribution == "none":
        assert match.kind == rule.outcome
    else:
        assert match.kind in outcomes.CUDA_OOM_KINDS
    assert match.evidence and match.evidence[0].line == 1


@pytest.mark.parametrize(("rule", "line"), COUNTER)
def test_counter_example_does_not_match(rule: Rule, line: str) -> None:
    assert rule.match(line) is None
    d = classify([line], version=_a_version_in(rule))
    assert rule.id not in [m.rule_id for m in d.matches]


def _a_version_in(rule: Rule) -> str | None:
    """The lowest bound of a rule's range, so the example is tested inside it."""
    for part in rule.vllm.split(","):
        part = part.strip()
        if part.startswith(">="):
            return part[2:]
    return None
