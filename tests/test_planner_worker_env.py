"""The planner fed the way a serving worker feeds it: its own environment.

The boot logs here are rendered from vLLM 0.32.0's own format strings (file:line
in the 0.32.0 wheel, cited at each template) for the measured scenario of the
issue: an 8B bf16 model on a 32 GB card, 14.99 GiB of weights, 128 KiB of KV per
token, utilization 0.95, MAX_NUM_SEQS=256. The same memory state is rendered in
the V1 runner's wording (`Estimated CUDA graph memory`) and in Model Runner V2's
(the profiling capture's `Graph capturing finished`), and planned from an env
file through `plan --env-file`, as a worker would.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from vllm_bootdiag import Policy, classify, plan
from vllm_bootdiag.cli.remediation import main
from vllm_bootdiag.launch import LaunchConfig
from vllm_bootdiag.planning import POLICY_ENV_NAMES, Attempt, PolicyError, Relaunch

GIB = 1 << 30
KV_PER_TOKEN = 128 << 10  # 8B Llama: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes
BLOCK = 16
TOTAL_GIB = 31.36
UTIL = 0.95
BEFORE_GRAPHS_GIB = 13.23
"""What the requested memory leaves for KV at 256 seqs before the graph figure is taken."""


def _format_gib(b: float) -> str:
    """vllm/utils/mem_utils.py:30 format_gib."""
    return f"{round(b / GIB, 2)}"


def _rec(proc: str, level: str, clock: str, src: str, msg: str) -> str:
    return f"({proc}) {level} 11-29 {clock} [{src}] {msg}"


def render(max_model_len: int, graph_gib: float, runner: str) -> str:
    """One failed 0.32.0 boot: the KV check of `max_model_len` tokens with `graph_gib`
    reserved for graphs (vLLM subtracts it: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1,
    0.32's default)."""
    available = round((BEFORE_GRAPHS_GIB - graph_gib) * GIB)
    needed = math.ceil(max_model_len / BLOCK) * BLOCK * KV_PER_TOKEN
    est = available // (BLOCK * KV_PER_TOKEN) * BLOCK  # estimate_max_model_len: whole blocks
    equiv = round(UTIL - graph_gib / TOTAL_GIB, 4)
    suggested = min(round(UTIL + graph_gib / TOTAL_GIB, 4), 1.0)
    api, eng = "APIServer pid=2210", "EngineCore pid=2300"
    lines = [
        # vllm/entrypoints/utils.py banner (api_utils.py:347 in 0.32.0)
        _rec(
            api,
            "INFO",
            "16:18:01",
            "api_utils.py:347",
            " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.32.0",
        ),
        # vllm/v1/engine/core.py:133 "Initializing a V1 LLM engine (v%s) with config: %s"
        _rec(
            eng,
            "INFO",
            "16:18:09",
            "core.py:133",
            "Initializing a V1 LLM engine (v0.32.0) with config: "
            f"model='meta-llama/Llama-3.1-8B-Instruct', max_seq_len={max_model_len}",
        ),
    ]
    if runner == "v1":
        lines += [
            # vllm/v1/worker/gpu_model_runner.py:5149
            _rec(
                eng,
                "INFO",
                "16:18:34",
                "gpu_model_runner.py:5149",
                "Model loading took 14.99 GiB memory and 21.338710 seconds",
            ),
            # gpu_model_runner.py:6369 "Profiling CUDA graph memory: %s"
            _rec(
                eng,
                "INFO",
                "16:19:24",
                "gpu_model_runner.py:6369",
                "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)",
            ),
            # gpu_model_runner.py:6474 "Estimated CUDA graph memory: %.2f GiB total"
            _rec(
                eng,
                "INFO",
                "16:19:31",
                "gpu_model_runner.py:6474",
                f"Estimated CUDA graph memory: {graph_gib:.2f} GiB total",
            ),
        ]
    else:
        lines += [
            # vllm/v1/worker/gpu/model_runner.py:424
            _rec(
                eng,
                "INFO",
                "16:18:34",
                "model_runner.py:424",
                "Model loading took 14.99 GiB memory and 21.338710 seconds",
            ),
            # gpu/model_runner.py:1127, from profile_cudagraph_memory's throwaway capture
            _rec(
                eng,
                "INFO",
                "16:19:31",
                "model_runner.py:1127",
                f"Graph capturing finished in 3 secs, took {graph_gib:.2f} GiB",
            ),
        ]
    lines += [
        # vllm/v1/worker/gpu_worker.py:759 "Available KV cache memory: %s GiB"
        _rec(
            eng,
            "INFO",
            "16:19:31",
            "gpu_worker.py:759",
            f"Available KV cache memory: {_format_gib(available)} GiB",
        ),
        # gpu_worker.py:774, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on
        _rec(
            eng,
            "INFO",
            "16:19:31",
            "gpu_worker.py:774",
            "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
            f"--gpu-memory-utilization={UTIL:.4f} is equivalent to --gpu-memory-utilization="
            f"{equiv:.4f} without CUDA graph memory profiling. To maintain the same effective "
            f"KV cache size as before, increase --gpu-memory-utilization to {suggested:.4f}. "
            "To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
        ),
        # vllm/v1/engine/core.py:1510 logger.exception
        _rec(eng, "ERROR", "16:19:32", "core.py:1510", "EngineCore failed to start."),
        # vllm/v1/core/kv_cache_utils.py:1030 _check_enough_kv_cache_memory
        _rec(
            eng,
            "ERROR",
            "16:19:32",
            "core.py:1510",
            "ValueError: To serve at least one request with the model's max seq len "
            f"({max_model_len}), ({_format_gib(needed)} GiB KV cache is needed, which is "
            "larger than the available KV cache memory "
            f"({_format_gib(available)} GiB). Based on the available memory, the estimated "
            f"maximum model length is {est}. Try increasing `gpu_memory_utilization` (which "
            "also controls CPU memory on the CPU backend) or decreasing `max_model_len` when "
            "initializing the engine. See https://docs.vllm.ai/en/latest/configuration/"
            "conserving_memory/ for more details.",
        ),
    ]
    return "\n".join(lines) + "\n"


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
    needed = math.ceil(max_model_len / BLOCK) * BLOCK * KV_PER_TOKEN
    est = available // (BLOCK * KV_PER_TOKEN) * BLOCK
    suggested = min(round(0.9 + graph_gib / TOTAL_GIB, 4), 1.0)
    api, eng = "APIServer pid=2210", "EngineCore_DP0 pid=2300"
    lines = [
        _rec(api, "INFO", "16:18:01", "utils.py:299", " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.18.0"),
        # 0.18.0 vllm/v1/engine/core.py:103
        _rec(
            eng,
            "INFO",
            "16:18:09",
            "core.py:103",
            "Initializing a V1 LLM engine (v0.18.0) with config: "
            f"model='meta-llama/Llama-3.1-8B-Instruct', max_seq_len={max_model_len}",
        ),
        # 0.18.0 gpu_model_runner.py:4566, :5607, :5686
        _rec(
            eng,
            "INFO",
            "16:18:34",
            "gpu_model_runner.py:4566",
            "Model loading took 14.99 GiB memory and 21.338710 seconds",
        ),
        _rec(
            eng,
            "INFO",
            "16:19:24",
            "gpu_model_runner.py:5607",
            "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)",
        ),
        _rec(
            eng,
            "INFO",
            "16:19:31",
            "gpu_model_runner.py:5686",
            f"Estimated CUDA graph memory: {graph_gib:.2f} GiB total",
        ),
        # 0.18.0 gpu_worker.py:456, :490 (the estimate off: the default)
        _rec(
            eng,
            "INFO",
            "16:19:31",
            "gpu_worker.py:456",
            f"Available KV cache memory: {_format_gib(available)} GiB",
        ),
        _rec(
            eng,
            "INFO",
            "16:19:31",
            "gpu_worker.py:490",
            "In v0.19, CUDA graph memory profiling will be enabled by default "
            "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for "
            "CUDA graph memory during KV cache allocation. To try it now, set "
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization "
            f"from 0.9000 to {suggested:.4f} to maintain the same effective KV cache size.",
        ),
        # 0.18.0 core.py:1099; kv_cache_utils.py:641 (KV1-d: "models's", no CPU note)
        _rec(eng, "ERROR", "16:19:32", "core.py:1099", "EngineCore failed to start."),
        _rec(
            eng,
            "ERROR",
            "16:19:32",
            "core.py:1099",
            "ValueError: To serve at least one request with the models's max seq len "
            f"({max_model_len}), ({_format_gib(needed)} GiB KV cache is needed, which is "
            f"larger than the available KV cache memory ({_format_gib(available)} GiB). "
            f"Based on the available memory, the estimated maximum model length is {est}. "
            "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine. See https://docs.vllm.ai/en/latest/configuration/"
            "conserving_memory/ for more details.",
        ),
    ]
    return "\n".join(lines) + "\n"


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
    warning = _rec(
        "EngineCore pid=2300",
        "WARNING",
        "16:19:31",
        "gpu_worker.py:791",
        "CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). "
        "Without it, CUDA graph memory is not accounted for during KV cache allocation, "
        "which may require lowering --gpu-memory-utilization to avoid OOM. Consider "
        "re-enabling it (the default as of v0.21.0) and increasing --gpu-memory-utilization "
        "from 0.9500 to 0.9596.",
    )
    text = text.replace("[gpu_worker.py:759]", "[gpu_worker.py:759]", 1) + warning + "\n"
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
    equiv = round(util - graph_gib / TOTAL_GIB, 4)
    suggested = min(round(util + graph_gib / TOTAL_GIB, 4), 1.0)
    eng = "EngineCore pid=2300"
    return (
        "\n".join(
            [
                _rec(
                    "APIServer pid=2210",
                    "INFO",
                    "16:18:01",
                    "api_utils.py:347",
                    " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.32.0",
                ),
                _rec(
                    eng,
                    "INFO",
                    "16:18:34",
                    "gpu_model_runner.py:5149",
                    "Model loading took 14.99 GiB memory and 21.338710 seconds",
                ),
                _rec(
                    eng,
                    "INFO",
                    "16:19:31",
                    "gpu_model_runner.py:6474",
                    f"Estimated CUDA graph memory: {graph_gib:.2f} GiB total",
                ),
                _rec(
                    eng,
                    "INFO",
                    "16:19:31",
                    "gpu_worker.py:759",
                    f"Available KV cache memory: {available_gib} GiB",
                ),
                _rec(
                    eng,
                    "INFO",
                    "16:19:31",
                    "gpu_worker.py:774",
                    "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
                    f"--gpu-memory-utilization={util:.4f} is equivalent to "
                    f"--gpu-memory-utilization={equiv:.4f} without CUDA graph memory profiling. "
                    "To maintain the same effective KV cache size as before, increase "
                    f"--gpu-memory-utilization to {suggested:.4f}. To disable, set "
                    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
                ),
                _rec(eng, "ERROR", "16:19:32", "core.py:1510", "EngineCore failed to start."),
                _rec(
                    eng,
                    "ERROR",
                    "16:19:32",
                    "core.py:1510",
                    "ValueError: Cannot auto-fit max_model_len: not enough GPU memory available "
                    "to serve even a single token. Try increasing `gpu_memory_utilization`.",
                ),
            ]
        )
        + "\n"
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
    # Without a known concurrency the fallback covers it too; without fewer seqs, eager.
    r2 = plan(d, LaunchConfig.from_env({**env, "MAX_NUM_SEQS": "32"}), Policy.from_env(env))
    assert isinstance(r2, Relaunch) and r2.step == "enforce_eager"


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
