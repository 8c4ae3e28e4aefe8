"""Truth on logs a hostile (or just unlucky) user hands over: a restart appended to a
healthy boot's log, and remediation that repeats a step the boot already took.

All input is corpus logs, concatenated as a worker's log file grows across restarts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, remedy, timeline
from vllm_bootdiag.corpus import entries
from vllm_bootdiag.rules import RULES
from vllm_bootdiag.timeline import BootFacts

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

HEALTHY = [
    "0.14.0/booted__smollm135m-eager__cpu.log",
    "0.22.0/booted__qwen05b-compiled__cpu.log",
    "0.11.0/booted__smollm135m-eager__cpu.log",
]
"""Boots that came up and were shut down: uvicorn's `Application startup complete`
(a raw line, no vLLM record) is their last progress line."""


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


@pytest.mark.parametrize("earlier", HEALTHY)
def test_a_boot_after_a_healthy_boot_keeps_its_own_phase(earlier: str) -> None:
    before = _lines(CORPUS / earlier)
    wrong = []
    for entry in entries(CORPUS):
        lines = _lines(entry.log_path)
        alone = classify(lines)
        if alone.vllm_version is None:
            continue  # no line of its own to tell it from the boot above
        after = classify(before + lines)
        got = (after.primary.kind, after.vllm_version, after.phase)
        if got != (alone.primary.kind, alone.vllm_version, alone.phase):
            wrong.append((str(entry.log_path.relative_to(CORPUS)), got, alone.phase))
    assert not wrong


def test_the_upgrade_after_a_healthy_boot_starts_after_its_shutdown_and_timeline_agrees() -> None:
    old = _lines(CORPUS / "0.14.0" / "booted__smollm135m-eager__cpu.log")
    new = _lines(CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log")
    d = classify(old + new)
    assert (d.vllm_version, d.phase, d.boots_in_tail) == ("0.32.0", "kv_cache_sized", 2)
    ready = max(i for i, line in enumerate(old, 1) if "Application startup complete" in line)
    assert ready < d.boot_start_line <= len(old) + 1
    tl = timeline.build(old + new)
    assert tl.last_phase == "kv_cache_sized"
    assert tl.events[0].line > len(old) and tl.facts.model == d.facts.model
    assert "llama" in (tl.facts.model or "")


def _eager(entry_log: Path) -> bool:
    return "'enforce_eager': True" in entry_log.read_text()


def test_no_eager_advice_for_a_boot_that_was_already_eager() -> None:
    seen = {True: 0, False: 0}
    for entry in entries(CORPUS):
        d = classify(_lines(entry.log_path))
        if d.primary.kind not in (
            "kv_cache_shortfall",
            "no_kv_cache_memory",
            "cuda_graph_capture_oom",
        ):
            continue
        eager = _eager(entry.log_path)
        seen[eager] += 1
        assert ("--enforce-eager" in d.remediation) is not eager, entry.log_path
        assert d.remediation, entry.log_path
    assert seen[True] >= 10 and seen[False] >= 3  # both kinds of boot were read


def test_every_rule_remedy_naming_eager_is_fitted_for_an_eager_boot() -> None:
    eager = BootFacts(non_default_args="{'model': 'm', 'enforce_eager': True}")
    compiled = BootFacts(non_default_args="{'model': 'm', 'enforce_eager': False}")
    texts = {r.remediation for r in RULES} | {t for r in RULES for _k, t in r.remediations}
    naming = [t for t in texts if "--enforce-eager" in t]
    assert naming
    for text in naming:
        fitted = remedy.fit(text, eager)
        assert "--enforce-eager" not in fitted and "already eager" in fitted, text
        assert not fitted.startswith(("; ", ", ")) and ",," not in fitted and ": ," not in fitted
        assert remedy.fit(text, compiled) == text
        assert remedy.fit(text, BootFacts()) == text


def test_the_backend_comes_from_the_engine_config_line() -> None:
    for entry in entries(CORPUS):
        text = entry.log_path.read_text()
        for device in ("cpu", "cuda"):
            if f"device_config={device}" in text:
                assert classify(text).facts.device == device, entry.log_path


def test_a_cpu_relaunch_names_the_seqs_it_really_cut_from() -> None:
    from vllm_bootdiag import LaunchConfig, plan

    seen = 0
    for entry in entries(CORPUS):
        text = entry.log_path.read_text()
        d = classify(text)
        if d.primary.kind != "kv_cache_shortfall" or d.facts.device != "cpu":
            continue
        if "max_num_seqs" in (d.facts.non_default_args or ""):
            continue
        p = plan(d, LaunchConfig.from_log_args(d.facts.non_default_args or "{}"))
        lower = [g for g in getattr(p, "degradations", ()) if g.kind == "lower_concurrency"]
        for g in lower:
            seen += 1
            # the CPU backend's default the step cut from (planning.releases), never 256
            assert "(was 128)" in g.message, (entry.log_path, g.message)
    assert seen >= 5
