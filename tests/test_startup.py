"""What startup's shortcuts skip is what they would have given: the CLI's human output
reads an outcome's fields without dumping it, and matches what a dump gives; the built-in
rule table is taken as written (tests/test_rule_examples.py validates each rule), and a
rule built anywhere else is checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from vllm_bootdiag import classify, classify_file
from vllm_bootdiag.cli import render
from vllm_bootdiag.outcomes import OUTCOME_TYPES, OutcomeBase
from vllm_bootdiag.rules import RULES, Rule, schema

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


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_built_in_table_builds_no_rule_validator() -> None:
    """133 rules taken as written: classifying builds no validator for the Rule model."""
    code = (
        "import vllm_bootdiag\n"
        "vllm_bootdiag.classify(['x'])\n"
        "from vllm_bootdiag.rules import RULES, Rule\n"
        "print(len(RULES), Rule.__pydantic_complete__)"
    )
    n, complete = _fresh(code).split()
    assert int(n) > 100 and complete == "False"


BAD_RULE: dict[str, Any] = dict(
    id="ZZ001",
    name="bad",
    outcome="no_such_kind",
    literal="Out of memory",
    patterns=("Out of memory",),
    examples=("Out of memory",),
    summary="s",
    remediation="r",
)


def test_a_rule_built_in_code_is_checked_unless_deferred() -> None:
    with pytest.raises(ValidationError, match="unknown outcome kind"):
        Rule(**BAD_RULE)
    with schema.deferred_checks():
        trusted = Rule(**BAD_RULE)  # as written: the table's tests are what check it
    assert trusted.outcome == "no_such_kind" and trusted.status == "active"
    assert trusted.model_fields_set == set(BAD_RULE)
    with pytest.raises(ValidationError, match="unknown outcome kind"):
        Rule.model_validate(trusted.model_dump())  # what test_rule_examples runs on each rule
    good = Rule(**{**BAD_RULE, "outcome": "unknown"})
    with schema.deferred_checks():
        assert Rule(**{**BAD_RULE, "outcome": "unknown"}) == good


def test_the_library_leaves_the_collector_alone() -> None:
    """The collector's state belongs to the program that imports the library."""
    code = (
        "import gc, vllm_bootdiag\n"
        "vllm_bootdiag.classify(['x'])\n"
        "print(gc.isenabled(), gc.get_freeze_count())"
    )
    assert _fresh(code).split() == ["True", "0"]


def test_the_cli_freezes_what_it_loaded_and_collects_after() -> None:
    """`cli classify`: the collector waits while the library loads, then walks it no more
    (frozen); it is on again for the rest of the run."""
    code = (
        "import contextlib, gc, io, sys\n"
        "from vllm_bootdiag.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['classify', {str(LOGS[0])!r}])\n"  # called by a program: left alone
        "print(gc.isenabled(), gc.get_freeze_count())\n"
        f"sys.argv = ['vllm-bootdiag', 'classify', {str(LOGS[0])!r}]\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main()\n"  # the process's own command
        "print(gc.isenabled(), gc.get_freeze_count() > 10_000)"
    )
    assert _fresh(code).split() == ["True", "0", "True", "True"]


def test_the_collector_is_back_on_when_a_load_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from vllm_bootdiag import cli

    monkeypatch.setattr(cli, "_OWN_PROCESS", True)
    assert gc.isenabled()
    try:
        with pytest.raises(ImportError), cli.Loading():
            assert not gc.isenabled()
            import vllm_bootdiag.no_such_module  # noqa: F401
        assert gc.isenabled()
    finally:
        gc.unfreeze()  # this test process's objects go back to the collector
