"""Each rule's examples match it, with the outcome it names; counter-examples do not.

The built-in table is built with its costly checks deferred (so that importing it
compiles nothing): `test_every_rule_passes_its_checks` runs each rule's `verify()`
here instead, so a bad built-in rule fails the suite as it used to fail the import.

Test ids are `<rule id>-example-<n>`, so `pytest -k KV004` selects one rule.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from vllm_bootdiag import classify, outcomes
from vllm_bootdiag.rules import RULES, Rule, schema

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


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_every_rule_passes_its_checks(rule: Rule) -> None:
    rule.verify()
    # and it is the rule a fresh, checked build of the same data gives
    assert Rule.model_validate(rule.model_dump()) == rule


BAD = [
    ({"patterns": ["("]}, "field 'patterns': does not compile"),
    ({"patterns": [r"(?P<bogus>Out of memory)"]}, r"groups \['bogus'\]"),
    ({"source_pattern": "("}, "field 'source_pattern': does not compile"),
    ({"examples": ["nothing like it"]}, "field 'literal'"),
    ({"patterns": [r"Out of memory at \d+"]}, "field 'examples': does not match"),
    ({"counter_examples": ["Out of memory"]}, "field 'counter_examples': matches"),
]


@pytest.mark.parametrize(("change", "expected"), BAD, ids=[e for _, e in BAD])
def test_a_bad_rule_fails_its_checks_deferred_or_not(change: dict[str, object], expected: str) -> None:
    fields: dict[str, object] = dict(
        id="ZZ001",
        name="bad",
        outcome="unknown",
        literal="Out of memory",
        patterns=["Out of memory"],
        examples=["Out of memory"],
        summary="s",
        remediation="r",
    )
    fields.update(change)
    with pytest.raises(ValidationError, match=expected):
        Rule.model_validate(fields)
    with schema.deferred_checks():  # as the built-in table is built at import
        rule = Rule.model_validate(fields)
    with pytest.raises(ValueError, match=expected):
        rule.verify()


@pytest.mark.parametrize(("rule", "line"), EXAMPLES)
def test_example_classifies_to_the_rule(rule: Rule, line: str) -> None:
    version = _a_version_in(rule)
    d = classify([line], version=version)
    ids = [m.rule_id for m in d.matches]
    if rule.role == "echo":  # an echo never becomes an outcome (rules/cases checks the rest)
        assert rule.id not in ids
        return
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
