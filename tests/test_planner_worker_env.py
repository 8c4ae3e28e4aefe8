"""The planner fed the way a serving worker feeds it: its own environment.

The boot logs here are rendered from vLLM 0.32.0's own format strings (file:line
in the 0.32.0 wheel, cited at each builder in tests/fakes/vllm_lines.py) for the measured scenario of the
issue: an 8B bf16 model on a 32 GB card, 14.99 GiB of weights, 128 KiB of KV per
token, utilization 0.95, MAX_NUM_SEQS=256. The same memory state is rendered in
the V1 runner's wording (`Estimated CUDA graph memory`) and in Model Runner V2's
(the profiling capture's `Graph capturing finished`), and planned from an env
file through `plan --env-file`, as a worker would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import vllm_lines as V

from vllm_bootdiag import Policy, classify, plan
from vllm_bootdiag.cli.remediation import main
from vllm_bootdiag.launch import LaunchConfig
from vllm_bootdiag.planning import POLICY_ENV_NAMES, Attempt, PolicyError, Relaunch

GIB = V.GIB
KV_PER_TOKEN = 128 << 10  # 8B Llama: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes
BLOCK = 16
TOTAL_GIB = 31.36
UTIL = 0.95
BEFORE_GRAPHS_GIB = 13.23
"""What the requested memory leaves for KV at 256 seqs before the graph figure is taken."""


def render(max_model_len: int, graph_gib: float, runner: str) -> str:
    """One failed 0.32.0 boot of the scenario (see V.kv_shortfall_boot)."""
    return V.kv_shortfall_boot(
        max_model_len,
        graph_gib,
        before_graphs_gib=BEFORE_GRAPHS_GIB,
        kv_per_token=KV_PER_TOKEN,
        util=UTIL,
        total_gib=TOTAL_GIB,
        runner=runner,
    )


WORKER_ENV = {
    "MODEL_NAME": "meta-llama/Llama-3.1-8B-Instruct",
    "MAX_CONCURRENCY": "30",
    "MAX_NUM_SEQS": "256",
    "GPU_MEMORY_UTILIZATION": "0.95",
}


def _plan_from_env_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], log: str, env: dict[str, str]
) -> dict[str, object]:
    log_path = tmp_path / "boot.log"
    log_path.write_text(log, encoding="utf-8")
    env_path = tmp_path / "worker.env"
    env_path.write_text("".join(f"{k}={v}\n" for k, v in env.items()), encoding="utf-8")
    code = main(["plan", str(log_path), "--env-file", str(env_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


SCENARIOS = [
    # (MAX_MODEL_LEN, graph GiB, the GiB gap, vLLM's estimate, the cut it rounds to)
    (108440, 0.30, 0.31, 105920, 105472),
    (108440, 0.53, 0.54, 104032, 103424),
    (110000, 0.53, 0.73, 104032, 103424),
    (112000, 0.53, 0.97, 104032, 103424),
]


@pytest.mark.parametrize("runner", ["v1", "mrv2"])
@pytest.mark.parametrize(("length", "graphs", "gap", "estimate", "cut"), SCENARIOS)
def test_worker_env_plan_keeps_graphs_and_lowers_seqs_with_the_cut(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    runner: str,
    length: int,
    graphs: float,
    gap: float,
    estimate: int,
    cut: int,
) -> None:
    log = render(length, graphs, runner)
    d = classify(log)
    assert d.primary.kind == "kv_cache_shortfall" and d.vllm_version == "0.32.0"
    o = d.primary
    assert o.needed_gib is not None and o.available_gib is not None
    assert round(o.needed_gib - o.available_gib, 2) == gap
    assert o.estimated_max_model_len == estimate
    data = _plan_from_env_file(tmp_path, capsys, log, {**WORKER_ENV, "MAX_MODEL_LEN": str(length)})
    # Neither fewer seqs (half the graph figure counted) nor eager (the graph figure)
    # covers the gap: a cut to vLLM's own estimate, with seqs at the concurrency.
    assert data["kind"] == "relaunch"
    assert data["step"] == "lower_max_num_seqs+lower_max_model_len"
    env = data["env"]
    assert isinstance(env, dict)
    assert env["MAX_NUM_SEQS"] == "32"  # MAX_CONCURRENCY=30, rounded up to a multiple of 8
    assert env["MAX_MODEL_LEN"] == str(cut)
    assert env["GPU_MEMORY_UTILIZATION"] == "0.95"  # as asked, not capped below
    assert "ENFORCE_EAGER" not in env
    assert "above the 30 requests the worker runs" in str(data["reason"])
    kinds = [g["kind"] for g in data["degradations"]]  # type: ignore[attr-defined]
    assert kinds == ["shorter_context"]


@pytest.mark.parametrize("runner", ["v1", "mrv2"])
def test_without_max_concurrency_seqs_still_go_down_before_eager(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], runner: str
) -> None:
    env = {k: v for k, v in WORKER_ENV.items() if k != "MAX_CONCURRENCY"}
    env["MAX_MODEL_LEN"] = "108440"
    data = _plan_from_env_file(tmp_path, capsys, render(108440, 0.30, runner), env)
    env_out = data["env"]
    assert isinstance(env_out, dict)
    assert env_out["MAX_NUM_SEQS"] == "64"  # the documented fallback
    assert "ENFORCE_EAGER" not in env_out
    assert "set MAX_CONCURRENCY" in str(data["reason"])
    kinds = [g["kind"] for g in data["degradations"]]  # type: ignore[attr-defined]
    assert "lower_concurrency" in kinds


def render_018(max_model_len: int, graph_gib: float) -> str:
    """A failed 0.18.0 boot: the estimate printed, not subtracted (the 0.18 default,
    VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0), so the KV check had all 13.23 GiB."""
    available = round(BEFORE_GRAPHS_GIB * GIB)
    needed = V.kv_bytes(max_model_len, KV_PER_TOKEN, BLOCK)
    est = available // (BLOCK * KV_PER_TOKEN) * BLOCK
    suggested = min(round(0.9 + graph_gib / TOTAL_GIB, 4), 1.0)
    eng = V.ENGINE_018
    return V.lines(
        V.banner("0.18.0", "utils.py:299"),
        V.engine_init("0.18.0", max_model_len, "core.py:103", eng),
        V.model_loading(14.99, "gpu_model_runner.py:4566", eng),
        V.graph_groups(src="gpu_model_runner.py:5607", proc=eng),
        V.graph_estimate(graph_gib, "gpu_model_runner.py:5686", eng),
        V.available_kv(V.format_gib(available), "gpu_worker.py:456", eng),
        V.profiling_will_be_enabled(0.9, suggested),
        V.failed_to_start("core.py:1099", eng),
        V.kv_check_error(max_model_len, needed, available, est, "0.18.0", eng),
    )


def test_018_estimate_printed_but_not_subtracted_never_goes_eager() -> None:
    """0.18 printed 0.53 GiB of graphs that the KV check never paid for: eager would free
    nothing there, so even a policy that prefers eager gets the cut."""
    d = classify(render_018(108440, 0.53))
    assert d.vllm_version == "0.18.0" and d.primary.kind == "kv_cache_shortfall"
    assert d.facts.cuda_graph_profiling == "will be enabled"
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "108440", "GPU_MEMORY_UTILIZATION": "0.9"}
    policy = Policy.from_env({**env, "VLLM_BOOTDIAG_MAX_CONTEXT_CUT_BEFORE_EAGER": "0"})
    r = plan(d, LaunchConfig.from_env(env), policy)
    assert isinstance(r, Relaunch)
    assert r.step == "lower_max_num_seqs+lower_max_model_len"
    assert not r.config.enforce_eager and r.config.max_num_seqs == 32
    assert r.config.max_model_len == 107520  # vLLM's 108368, rounded
    assert "not subtracted" in r.reason  # fewer seqs' share: no graph memory counted
    # 0.32 with the same figure subtracted says so instead.
    r2 = plan(classify(render(108440, 0.53, "v1")), LaunchConfig.from_env(env), policy)
    assert isinstance(r2, Relaunch)
    assert "(the log: CUDA graph memory profiling is enabled)" in r2.reason


def test_032_with_estimate_env_0_plans_from_the_env_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 in the worker's env: the 0.32 log prints
    the estimate, then a WARNING (gpu_worker.py:791) instead of the INFO line."""
    log = render(108440, 0.30, "v1")
    lines = [
        line for line in log.splitlines() if "CUDA graph memory profiling is enabled" not in line
    ]
    # Not subtracted: the KV check had the 0.30 GiB too (12.93 + 0.30 = 13.23 GiB).
    text = "\n".join(lines).replace("12.93 GiB", "13.23 GiB").replace("105920", "108368")
    warning = V.profiling_disabled_warning(0.95, 0.9596)
    text = text + "\n" + warning + "\n"
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "108440", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "0"}
    data = _plan_from_env_file(tmp_path, capsys, text, env)
    assert data["step"] == "lower_max_num_seqs+lower_max_model_len"
    out_env = data["env"]
    assert isinstance(out_env, dict)
    assert "ENFORCE_EAGER" not in out_env and out_env["MAX_NUM_SEQS"] == "32"
    assert out_env["MAX_MODEL_LEN"] == "107520"
    assert out_env["VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"] == "0"  # carried on
    assert "ESTIMATE_CUDAGRAPHS=0 in the launch's environment" in str(data["reason"])


def test_seqs_alone_where_its_conservative_share_covers_the_gap() -> None:
    # 1.10 GiB of graphs and a 0.31 GiB gap: half the figure (0.55) covers it. (The
    # card holds the same 13.23 GiB before graphs; the length is chosen for the gap.)
    log = render(108440, 0.30, "v1").replace("0.30 GiB total", "1.10 GiB total")
    d = classify(log)
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "108440"}
    r = plan(d, LaunchConfig.from_env(env), Policy.from_env(env))
    assert isinstance(r, Relaunch)
    assert r.step == "lower_max_num_seqs" and r.config.max_num_seqs == 32
    assert r.config.max_model_len == 108440 and not r.config.enforce_eager
    assert r.degradations == ()


def test_an_asked_utilization_above_the_cap_is_kept() -> None:
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "108440", "GPU_MEMORY_UTILIZATION": "0.97"}
    r = plan(classify(render(108440, 0.30, "v1")), LaunchConfig.from_env(env), Policy.from_env(env))
    assert isinstance(r, Relaunch)
    assert r.config.gpu_memory_utilization == 0.97


# --- Policy.from_env -------------------------------------------------------------------


def test_policy_from_env_reads_every_name() -> None:
    env = {
        "MAX_CONCURRENCY": "30",
        "VLLM_BOOTDIAG_MAX_ATTEMPTS": "3",
        "VLLM_BOOTDIAG_MAX_BOOT_SECONDS": "900",
        "VLLM_BOOTDIAG_MIN_MAX_MODEL_LEN": "8k",
        "VLLM_BOOTDIAG_ALLOW_EAGER": "false",
        "VLLM_BOOTDIAG_MAX_GPU_MEMORY_UTILIZATION": "0.9",
        "VLLM_BOOTDIAG_FALLBACK_MAX_NUM_SEQS": "48",
        "VLLM_BOOTDIAG_MAX_CONTEXT_CUT_BEFORE_EAGER": "0.2",
    }
    assert set(env) == set(POLICY_ENV_NAMES.values())
    p = Policy.from_env(env)
    assert p == Policy(
        max_concurrency=30,
        max_attempts=3,
        max_boot_seconds=900.0,
        min_max_model_len=8000,
        allow_eager=False,
        max_gpu_memory_utilization=0.9,
        fallback_max_num_seqs=48,
        max_context_cut_before_eager=0.2,
    )


def test_policy_from_env_empty_is_the_default_and_overrides_win() -> None:
    assert Policy.from_env({}) == Policy()
    assert Policy.from_env({"MAX_CONCURRENCY": " "}) == Policy()
    assert Policy.from_env({"VLLM_BOOTDIAG_MAX_BOOT_SECONDS": "none"}).max_boot_seconds is None
    p = Policy.from_env({"MAX_CONCURRENCY": "30"}, max_concurrency=8, max_attempts=None)
    assert p.max_concurrency == 8 and p.max_attempts == 4


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("MAX_CONCURRENCY", "abc", "MAX_CONCURRENCY: not an integer"),
        ("MAX_CONCURRENCY", "0", "MAX_CONCURRENCY: Input should be greater than or equal to 1"),
        ("MAX_CONCURRENCY", "-3", "MAX_CONCURRENCY"),
        ("MAX_CONCURRENCY", "9" * 5000, "MAX_CONCURRENCY: value too long"),
        ("MAX_CONCURRENCY", "1e3", "MAX_CONCURRENCY: not an integer"),
        ("VLLM_BOOTDIAG_MAX_BOOT_SECONDS", "nan", "not a finite number"),
        ("VLLM_BOOTDIAG_MAX_BOOT_SECONDS", "inf", "not a finite number"),
        ("VLLM_BOOTDIAG_MAX_BOOT_SECONDS", "1e999", "not a finite number"),
        ("VLLM_BOOTDIAG_MAX_GPU_MEMORY_UTILIZATION", "1.5", "less than or equal to 1"),
        ("VLLM_BOOTDIAG_ALLOW_EAGER", "maybe", "not a boolean"),
    ],
)
def test_policy_from_env_hostile_values_are_one_line_errors(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(PolicyError, match=message) as e:
        Policy.from_env({name: value})
    assert "\n" not in str(e.value)


def test_plan_env_file_with_a_bad_policy_value_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_path = tmp_path / "boot.log"
    log_path.write_text(render(108440, 0.30, "v1"), encoding="utf-8")
    env_path = tmp_path / "worker.env"
    env_path.write_text("MAX_CONCURRENCY=lots\n", encoding="utf-8")
    assert main(["plan", str(log_path), "--env-file", str(env_path)]) == 2
    err = capsys.readouterr().err
    assert "bad policy: MAX_CONCURRENCY: not an integer" in err
    assert len(err.strip().splitlines()) == 1


def test_plan_flag_overrides_the_env_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log_path = tmp_path / "boot.log"
    log_path.write_text(render(108440, 0.30, "v1"), encoding="utf-8")
    env_path = tmp_path / "worker.env"
    env_path.write_text("MAX_CONCURRENCY=30\nMAX_MODEL_LEN=108440\n", encoding="utf-8")
    code = main(
        ["plan", str(log_path), "--env-file", str(env_path), "--max-concurrency", "8", "--json"]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out)["env"]["MAX_NUM_SEQS"] == "8"


def render_auto(util: float, available_gib: float, graph_gib: float) -> str:
    """A failed 0.32.0 boot under --max-model-len auto: KV memory at `util`, then
    kv_cache_utils.py:2454's ValueError (raised under core.py:1510)."""
    return V.lines(
        V.banner("0.32.0"),
        V.model_loading(14.99),
        V.graph_estimate(graph_gib),
        V.available_kv(str(available_gib)),
        V.profiling_enabled(util, graph_gib, TOTAL_GIB),
        V.failed_to_start(),
        V.auto_fit_error(),
    )


def test_auto_fit_at_045_raises_utilization_to_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 0.45 x 31.36 GiB = 14.1 GiB asked, under the 14.99 GiB of weights alone.
    log = render_auto(0.45, -2.55, 0.53)
    assert classify(log).primary.kind == "auto_fit_failed"
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "auto", "GPU_MEMORY_UTILIZATION": "0.45"}
    data = _plan_from_env_file(tmp_path, capsys, log, env)
    assert data["kind"] == "relaunch"
    assert data["step"] == "lower_max_num_seqs+raise_gpu_memory_utilization"
    out = data["env"]
    assert isinstance(out, dict)
    assert out["GPU_MEMORY_UTILIZATION"] == "0.95" and out["MAX_NUM_SEQS"] == "32"
    assert out["MAX_MODEL_LEN"] == "auto" and "ENFORCE_EAGER" not in out
    # (0.95 - 0.45) x the card's 31.3 GiB (from the graph line): far over the 2.56 short
    assert data["expected_to_free_gib"] == pytest.approx(15.6, abs=0.1)


def test_auto_fit_small_deficit_at_the_cap_keeps_graphs_when_fewer_seqs_cover_it() -> None:
    # -0.12 GiB with 0.53 GiB of graphs at 0.95 (the cap): half the graph figure covers it.
    d = classify(render_auto(0.95, -0.12, 0.53))
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "auto"}
    r = plan(d, LaunchConfig.from_env(env), Policy.from_env(env))
    assert isinstance(r, Relaunch)
    assert r.step == "lower_max_num_seqs" and r.config.max_num_seqs == 32
    assert not r.config.enforce_eager and r.config.gpu_memory_utilization == 0.95
    # Seqs already at the concurrency: the full decode graphs go (a quarter of 0.53 GiB
    # counted, 0.13 for the 0.13 short), graphs and torch.compile kept; then eager.
    at32 = LaunchConfig.from_env({**env, "MAX_NUM_SEQS": "32"})
    r2 = plan(d, at32, Policy.from_env(env))
    assert isinstance(r2, Relaunch) and r2.step == "piecewise_cudagraphs"
    assert r2.config.cudagraph_mode == "PIECEWISE" and not r2.config.enforce_eager
    assert r2.env()["CUDAGRAPH_MODE"] == "PIECEWISE"
    hist = [Attempt(config=at32), Attempt(config=r2.config, step=r2.step)]
    r3 = plan(d, r2.config, Policy.from_env(env), hist)
    assert isinstance(r3, Relaunch) and r3.step == "enforce_eager"


def test_auto_fit_that_nothing_covers_gives_up_with_vllms_own_fix_first() -> None:
    d = classify(render_auto(0.95, -3.0, 0.53))
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "auto", "MAX_NUM_SEQS": "32"}
    g = plan(d, LaunchConfig.from_env(env), Policy.from_env(env))
    assert not isinstance(g, Relaunch)
    assert "3.01 GiB short" in g.reason
    assert g.advice[0].startswith("Raise --gpu-memory-utilization (vLLM's own fix)")
    assert any("quantized checkpoint" in a for a in g.advice)


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"MAX_NUM_SEQS": "0"}, "max_num_seqs 0 is below 1"),
        ({"GPU_MEMORY_UTILIZATION": "nan"}, "gpu_memory_utilization nan is not in (0, 1]"),
        ({"GPU_MEMORY_UTILIZATION": "inf"}, "gpu_memory_utilization inf is not in (0, 1]"),
        ({"GPU_MEMORY_UTILIZATION": "1.5"}, "gpu_memory_utilization 1.5 is not in (0, 1]"),
        ({"PORT": "-1"}, "port -1 is not in 1-65535"),
        ({"MAX_NUM_BATCHED_TOKENS": "1"}, "below vLLM's default max_num_seqs"),
    ],
)
def test_invalid_launch_values_are_reported_not_relaunched(
    env: dict[str, str], problem: str
) -> None:
    d = classify(render(108440, 0.30, "v1"))
    worker = {**WORKER_ENV, "MAX_MODEL_LEN": "108440", **env}
    if "MAX_NUM_SEQS" not in env and "MAX_NUM_BATCHED_TOKENS" in env:
        del worker["MAX_NUM_SEQS"]
    g = plan(d, LaunchConfig.from_env(worker), Policy.from_env(worker))
    assert not isinstance(g, Relaunch)
    assert g.cause == "invalid_launch" and problem in g.reason
    assert not any("quantized" in a for a in g.advice)


def test_plan_json_keys_do_not_come_and_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "108440"}
    data = _plan_from_env_file(tmp_path, capsys, render(108440, 0.30, "v1"), env)
    seqs = next(c for c in data["changes"] if c["field"] == "max_num_seqs")  # type: ignore[union-attr]
    assert "old" in seqs  # unset before: null, not missing
    env2 = {**env, "MAX_NUM_SEQS": ""}
    data2 = _plan_from_env_file(tmp_path, capsys, render(108440, 0.30, "v1"), env2)
    assert set(data) == set(data2)


def test_the_seconds_budget_predicts_the_boot_fewer_graphs_make() -> None:
    """MRv2's profiling capture took 158 s of a 251 s boot at 256 seqs: at 32 seqs most
    of it goes, so a 400 s budget still has room (the mean of past boots said no)."""
    log = render(108440, 0.30, "mrv2").replace(
        "Graph capturing finished in 3 secs", "Graph capturing finished in 158 secs"
    )
    d = classify(log)
    assert d.facts.cuda_graph_seconds == 158
    env = {**WORKER_ENV, "MAX_MODEL_LEN": "108440", "VLLM_BOOTDIAG_MAX_BOOT_SECONDS": "400"}
    config = LaunchConfig.from_env(env)
    history = [Attempt(config=config, outcome="kv_cache_shortfall", seconds=251.0)]
    r = plan(d, config, Policy.from_env(env), history)
    assert isinstance(r, Relaunch) and r.config.max_num_seqs == 32
    # 158 x (1 - 64/512) = 138 s saved: about 113 s, 364 of 400. A 350 s budget refuses,
    # and says what it predicted.
    g = plan(d, config, Policy.from_env({**env, "VLLM_BOOTDIAG_MAX_BOOT_SECONDS": "350"}), history)
    assert not isinstance(g, Relaunch) and g.cause == "budget"
    assert "about 113 s: the last boot's 251 s less 138 s of the 158 s graph capture" in g.reason
