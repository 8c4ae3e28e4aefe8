"""A scan that leaves the echo rules out gives the diagnosis a scan of every rule gives.

`diagnose` reads the echo rules (`Engine core initialization failed. See root cause
above.`, `Traceback (most recent call last)`) only where no cause is found: an echo never
becomes an outcome, and an `unknown` reads their lines. That holds where `echoes_apart`
says so of the table (no echo shares its outcome with a cause, no rule covers one, no echo
is a KV verdict). Checked against the long way (every rule read, always) on every corpus
tail, its damaged copies, read with each release's rules, and hostile shapes; and on
tables where it does not hold, which are read the long way.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from vllm_bootdiag import classify, timeline
from vllm_bootdiag.engine import match
from vllm_bootdiag.rules import Rule, RuleSet
from vllm_bootdiag.rules.ruleset import default_rules
from vllm_bootdiag.text.triage import Tail

diagnose_module = importlib.import_module("vllm_bootdiag.engine.diagnose")
ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted((ROOT / "corpus").glob("*/*.log"))
sys.path.insert(0, str(ROOT / "tests" / "damage"))
import damages  # noqa: E402

RULES = default_rules()


def _hostile() -> list[list[str]]:
    """Echoes without a cause, echoes around a cause, every rule's example in turn."""
    said = (
        "RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {}",
        "ERROR 11-29 16:51:14 [core.py:1] EngineCore failed to start.",
        "Traceback (most recent call last):",
        "Exception: WorkerProc hit an exception.",
    )
    echoes = [f"(EngineCore_DP{i} pid={i}) {said[i % len(said)]}" for i in range(40)]
    examples = [r.examples[0] for r in RULES.rules]
    shifted = [re.sub(r"\d{1,5}", lambda m: str(int(m[0]) + 1), e) for e in examples]
    return [
        echoes,
        [*echoes[:3], "ValueError: Unknown quantization method: abc", *echoes[3:8]],
        examples,
        shifted[::-1],
        [f"{e} Traceback (most recent call last)" for e in examples],
    ]


def _inputs() -> list[list[str]]:
    out = _hostile()
    for k, log in enumerate(LOGS):
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]
        out.append(lines)
        out.extend(d.apply(lines) for d in damages.DAMAGES[k % 2 :: 2])  # each damage: half
    return out


def _long_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnose_module, "echoes_apart", lambda rules: False)
    monkeypatch.setattr(match, "echoes_apart", lambda rules: False)


def test_the_default_tables_echoes_stand_apart() -> None:
    assert match.echoes_apart(RULES)
    for release in sorted({log.parent.name for log in LOGS}):
        assert match.echoes_apart(RULES.for_version(release)), release
    assert any(r.role == "echo" for r in RULES.rules)


def test_every_diagnosis_is_the_long_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = _inputs()
    fast = [classify(lines).model_dump_json() for lines in inputs]
    _long_way(monkeypatch)
    slow = [classify(lines).model_dump_json() for lines in inputs]
    assert fast == slow
    assert len(fast) > 1500
    assert sum('"kind":"unknown"' in d for d in fast) > 20  # unknowns read their echoes


def test_every_release_reads_the_same_causes() -> None:
    """The hits of a scan that reads no echo are the cause hits of a scan of every rule,
    and its precedence the same, under each release's rules and the version-less table;
    where they are none, a scan of the echoes alone reads what the scan of every rule
    reads."""
    releases = [None, *sorted({log.parent.name for log in LOGS})]
    seen = alone = 0
    for lines in _inputs()[::9]:
        tail = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        for release in releases:
            rules = RULES.for_version(release)
            every, best = match.scan(tail, rules)
            causes, best_causes = match.scan(tail, rules, part="causes")
            assert causes == [h for h in every if h.rule.role == "cause"], release
            assert best_causes == best
            seen += len(every) - len(causes)
            if not causes:  # what diagnose reads then: the echoes alone
                echoes, best_echoes = match.scan(tail, rules, part="echoes")
                assert echoes == every and best_echoes is None, release
                alone += len(echoes)
    assert seen > 1000  # echo hits that the short way did not read
    assert alone > 20


def _rule(rule_id: str, literal: str, **extra: Any) -> Rule:
    return Rule(
        id=rule_id,
        name=f"test-{rule_id.lower()}",
        vllm=">=0.1",
        outcome=extra.pop("outcome", "invalid_argument"),
        literal=literal,
        patterns=extra.pop("patterns", (rf"ValueError: (?P<message>.*{literal}.*)",)),
        examples=(f"ValueError: x {literal} y",),
        summary="a test rule",
        remediation="none",
        **extra,
    )


def test_a_table_whose_echo_can_take_a_line_from_a_cause_is_read_the_long_way() -> None:
    echo = _rule("TST001", "alpha", role="echo")
    cause = _rule("TST002", "alpha failed")
    shared = RuleSet((echo, cause))  # the echo reads the line first, for the same outcome
    assert not match.echoes_apart(shared)
    tail = Tail(["ValueError: alpha failed"])
    assert [h.rule.id for h in match.scan(tail, shared, part="causes")[0]] == ["TST001"]
    covered = RuleSet((echo, _rule("TST101", "alpha", tier="tolerant", covers=("TST001",))))
    assert not match.echoes_apart(covered)
    kv = RuleSet(
        (_rule("TST003", "beta", role="echo", outcome="kv_cache_shortfall", patterns=("beta",)),)
    )
    assert not match.echoes_apart(kv)
    apart = RuleSet(
        (_rule("TST004", "gamma", role="echo", outcome="unknown", patterns=("gamma",)), cause)
    )
    assert match.echoes_apart(apart)
    d = classify(["ValueError: gamma", "ValueError: alpha failed"], rules=apart)
    assert d.primary.rule_id == "TST002"
    d = classify(["ValueError: gamma went wrong"], rules=apart)
    assert d.primary.kind == "unknown" and d.primary.last_error_line_number == 1
    assert d.remediation == "none"  # the echo rule's: the unknown ended on its line
