"""Per-rule case tables (rules/cases/<ID>.json): test ids by rule code, so
`pytest -k KV004` runs that rule's cases, damaged copies included."""

from __future__ import annotations

import pytest

from vllm_bootdiag import classify
from vllm_bootdiag.rules import RULES, cases

ACTIVE = [r for r in RULES if r.status != "retired"]
CASES = [
    pytest.param(table["rule"], case, id=f"{table['rule']}-{case['name']}")
    for table in (cases.load(r.id) for r in ACTIVE)
    for case in table["cases"]
]


@pytest.mark.parametrize(("rule_id", "case"), CASES)
def test_case(rule_id: str, case: dict[str, object]) -> None:
    d = classify([str(case["line"])], version=case["vllm"])  # type: ignore[arg-type]
    expected = case["expected"]
    assert isinstance(expected, dict)
    match = next((m for m in d.matches if m.rule_id == rule_id), None)
    if expected.get("echo"):
        assert match is None and d.primary.kind == expected["kind"]
        assert d.failed == expected["failed"]
        assert getattr(d.primary, "last_error_line", None) == expected["last_error_line"]
        assert d.remediation == expected["remediation"]
        return
    if expected.get("matches") is False:
        assert match is None
        return
    assert match is not None, d.matches
    assert match.kind == expected["kind"]
    numbers = match.model_dump(mode="json")
    for name, value in expected["numbers"].items():
        assert numbers[name] == value, name


@pytest.mark.parametrize("rule", ACTIVE, ids=lambda r: r.id)
def test_a_damaged_copy_reads_as_the_clean_line(rule: object) -> None:
    """Independent of the generator: a quoted or timestamped copy of an example gives
    the same kind and numbers as the example itself."""
    table = cases.load(rule.id)  # type: ignore[attr-defined]
    by_name = {c["name"]: c["expected"] for c in table["cases"]}
    checked = 0
    for name, expected in by_name.items():
        for damage, _fmt in cases.DAMAGES:
            if name.endswith("-" + damage):
                assert expected == by_name[name.removesuffix("-" + damage)], name
                checked += 1
    assert checked == len(cases.DAMAGES) * len(rule.examples)  # type: ignore[attr-defined]


def test_the_tables_are_in_sync_with_the_rules() -> None:
    """A rule's examples changed without `python -m vllm_bootdiag.rules.cases --write`
    (then review the diff) fails here."""
    stale = [
        r.id
        for r in ACTIVE
        if not cases.path(r.id).exists()
        or cases.path(r.id).read_text(encoding="utf-8") != cases.dumps(cases.build(r))
    ]
    fix = "run `python -m vllm_bootdiag.rules.cases --write` and review the diff"
    assert not stale, f"stale case tables {stale}: {fix}"
    on_disk = {p.stem for p in cases.HERE.glob("*.json")}
    assert on_disk == {r.id for r in ACTIVE}, f"{on_disk ^ {r.id for r in ACTIVE}}: {fix}"
