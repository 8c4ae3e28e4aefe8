"""A boot vLLM's auto-fit brought up on a context below the policy's minimum: a
give-up with what would fit more, in `plan`, in `plan --json` and in `run`.

Logs: the corpus's real 0.32.0 auto-fit boot (131,072 fitted to 32,640 on the CPU
backend), and a GPU boot rendered from 0.32.0's format strings (tests/fakes/vllm_lines.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import vllm_lines as V

from vllm_bootdiag import Policy, classify, classify_file, plan
from vllm_bootdiag.cli.remediation import main
from vllm_bootdiag.launch import LaunchConfig
from vllm_bootdiag.planning import GiveUp, NothingToPlan

ROOT = Path(__file__).resolve().parent.parent
AUTOFIT = ROOT / "corpus" / "0.32.0" / "booted__llama1b-autofit-kvspace1__cpu.log"


def _config(log: Path) -> LaunchConfig:
    d = classify_file(str(log))
    args = d.facts.non_default_args
    return LaunchConfig.from_log_args(args) if args else LaunchConfig()


def test_a_fitted_context_below_the_minimum_is_a_give_up() -> None:
    d = classify_file(str(AUTOFIT))
    assert d.primary.kind == "booted" and d.facts.auto_fit_max_model_len == 32640
    g = plan(d, _config(AUTOFIT), Policy(min_max_model_len=65536))
    assert isinstance(g, GiveUp) and g.cause == "auto_fit_below_minimum"
    assert "fitted 32640 tokens, below the 65536 this policy accepts" in g.reason
    assert any("quantized checkpoint" in a for a in g.advice)


def test_a_fitted_context_the_policy_accepts_is_a_boot() -> None:
    d = classify_file(str(AUTOFIT))
    for floor in (1024, 32640):
        with pytest.raises(NothingToPlan):
            plan(d, _config(AUTOFIT), Policy(min_max_model_len=floor))


def test_gpu_advice_names_fewer_seqs_more_of_the_card_and_eager() -> None:
    log = V.lines(
        V.banner("0.32.0"),
        V.model_loading(14.99),
        V.graph_groups(),
        V.graph_estimate(0.53),
        V.available_kv("1.2"),
        V.profiling_enabled(0.9, 0.53, 31.36),
        V.auto_fit_reduced(131072, 9824, 1.2),
        V.server_started(),
    )
    d = classify(log)
    assert d.facts.auto_fit_max_model_len == 9824
    env = {"MAX_MODEL_LEN": "auto", "GPU_MEMORY_UTILIZATION": "0.9", "MAX_CONCURRENCY": "30"}
    g = plan(
        d,
        LaunchConfig.from_env(env),
        Policy.from_env({**env, "VLLM_BOOTDIAG_MIN_MAX_MODEL_LEN": "16k"}),
    )
    assert isinstance(g, GiveUp)
    assert g.advice[0].startswith("Lower --max-num-seqs to 32")
    assert g.advice[1].startswith(
        "Raise --gpu-memory-utilization from 0.9 (up to this policy's 0.95)"
    )
    assert g.advice[2].startswith("--enforce-eager returns the 0.53 GiB")


def test_plan_cli_json_and_text_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(AUTOFIT), "--min-max-model-len", "65536", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "give_up" and data["cause"] == "auto_fit_below_minimum"
    assert main(["plan", str(AUTOFIT), "--min-max-model-len", "65536"]) == 0
    out = capsys.readouterr().out
    assert "give up: auto_fit_below_minimum: the server booted" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    assert main(["plan", str(AUTOFIT), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "booted"
