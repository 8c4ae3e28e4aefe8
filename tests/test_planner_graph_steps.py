"""Graph-keeping steps before eager, per release, and vLLM's real default batch size.

Logs are corpus boots or lines rendered from vLLM's own format strings (the
builders in tests/fakes/vllm_lines.py cite file:line); the release facts tested
here are the table in vllm_bootdiag/planning/releases.py, read from each wheel.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import vllm_lines as V
from packaging.version import Version

from vllm_bootdiag import Policy, classify, classify_file, plan
from vllm_bootdiag.launch import LaunchConfig
from vllm_bootdiag.planning import Attempt, GiveUp, Relaunch
from vllm_bootdiag.planning.releases import (
    capture_size_fields,
    default_batched_tokens,
    default_cudagraph_mode,
    graph_sets,
)

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_PER_TOKEN = 128 << 10  # 8B Llama bf16
TOTAL_GIB = 31.36
BEFORE_GRAPHS_GIB = 13.23


def render_32seqs(max_model_len: int, graph_gib: float) -> str:
    """A failed 0.32.0 boot of the 8B at MAX_NUM_SEQS=32: graphs up to 64 (2 x 32), 11
    piecewise sizes ([1, 2, 4] + 8..64) and 7 full decode sizes (up to 32)."""
    return V.kv_shortfall_boot(
        max_model_len, graph_gib, groups=((11, 64), (7, 32)), batched_tokens=2048
    )


ENV = {
    "MODEL_NAME": "meta-llama/Llama-3.1-8B-Instruct",
    "MAX_CONCURRENCY": "30",
    "MAX_NUM_SEQS": "32",
    "GPU_MEMORY_UTILIZATION": "0.95",
}


def _plan(log: str, env: dict[str, str], history: list[Attempt] | None = None) -> Relaunch:
    config = LaunchConfig.from_env(env)
    r = plan(classify(log), config, Policy.from_env(env), history or [])
    assert isinstance(r, Relaunch), r
    return r


def test_seqs_already_at_the_concurrency_piecewise_keeps_graphs_before_eager_or_a_cut() -> None:
    # 104,860 tokens need 12.80 GiB, 12.70 is there: 0.10 short. A quarter of the 0.53 GiB
    # figure (the full decode graphs) covers it; a smaller capture (64 -> 32) alone
    # counts 0.04 (graph memory is mostly the first, largest capture).
    log = render_32seqs(104860, 0.53)
    o = classify(log).primary
    assert o.kind == "kv_cache_shortfall"
    assert round(o.needed_gib - o.available_gib, 2) == 0.1  # type: ignore[attr-defined,operator]
    r = _plan(log, {**ENV, "MAX_MODEL_LEN": "104860"})
    assert r.step == "piecewise_cudagraphs"
    assert r.config.cudagraph_mode == "PIECEWISE" and not r.config.enforce_eager
    assert r.config.max_model_len == 104860 and r.config.max_num_seqs == 32
    assert r.expected_to_free_gib == 0.133  # 0.53 x (1 - 3/4)
    assert "keeps torch.compile and piecewise CUDA graphs" in r.reason
    assert "drops the full decode graphs" in r.reason  # what it costs
    assert r.env()["CUDAGRAPH_MODE"] == "PIECEWISE"
    argv = r.argv()
    assert argv[argv.index("--compilation-config") + 1] == '{"cudagraph_mode":"PIECEWISE"}'
    assert [d.kind for d in r.degradations] == ["fewer_cuda_graphs"]


def test_a_larger_gap_takes_the_smaller_capture_with_piecewise() -> None:
    # 0.15 short: piecewise alone counts 0.133, with graphs only up to 32 0.161.
    r = _plan(render_32seqs(105180, 0.53), {**ENV, "MAX_MODEL_LEN": "105180"})
    assert r.step == "smaller_cudagraph_capture_size+piecewise_cudagraphs"
    assert r.config.max_cudagraph_capture_size == 32 and r.config.cudagraph_mode == "PIECEWISE"
    assert r.expected_to_free_gib == 0.161
    assert "only mixed prefill batches of more than 32 tokens run without one" in r.reason


def test_a_gap_no_graph_keeping_step_covers_goes_to_the_small_cut_then_eager() -> None:
    # 0.46 short (2.7% of the context): over anything graph-keeping counts, and the cut
    # is small enough that the default policy prefers it to eager.
    r = _plan(render_32seqs(108000, 0.53), {**ENV, "MAX_MODEL_LEN": "108000"})
    assert r.step == "lower_max_model_len" and r.config.cudagraph_mode is None
    # Asked to cut nothing before eager: eager (the 0.53 GiB covers the gap) before the cut.
    env = {**ENV, "MAX_MODEL_LEN": "108000", "VLLM_BOOTDIAG_MAX_CONTEXT_CUT_BEFORE_EAGER": "0"}
    assert _plan(render_32seqs(108000, 0.53), env).step == "enforce_eager"


def test_piecewise_is_not_offered_where_the_launch_steers_compilation() -> None:
    log = render_32seqs(104860, 0.53)
    env = {**ENV, "MAX_MODEL_LEN": "104860"}
    for argv in (
        ["vllm", "serve", "m", "--max-num-seqs", "32", "-O", '{"mode": 3}'],
        ["vllm", "serve", "m", "--max-num-seqs", "32", "-cc.cudagraph_mode", "full"],
        ["vllm", "serve", "m", "--max-num-seqs", "32", "--compilation-config", "3"],
    ):
        config = LaunchConfig.from_argv([*argv, "--max-model-len", "104860"])
        r = plan(classify(log), config, Policy.from_env(env))
        assert isinstance(r, Relaunch) and r.config.cudagraph_mode is None, argv


def test_018_estimate_not_subtracted_offers_no_graph_keeping_step() -> None:
    """0.18 printed the figure without taking it from the KV budget: fewer graphs free
    nothing the check saw, so the plan is the cut (as eager is never chosen there)."""
    log = render_32seqs(104860, 0.53).replace("0.32.0", "0.18.0")
    lines = [x for x in log.splitlines() if "profiling is enabled" not in x]
    lines.insert(-2, V.profiling_will_be_enabled(0.95, 0.9669))
    d = classify("\n".join(lines))
    assert d.vllm_version == "0.18.0" and d.facts.cuda_graph_profiling == "will be enabled"
    r = plan(d, LaunchConfig.from_env({**ENV, "MAX_MODEL_LEN": "104860"}), Policy.from_env(ENV))
    assert isinstance(r, Relaunch)
    assert r.step == "lower_max_model_len" and r.config.cudagraph_mode is None


def test_piecewise_then_eager_then_give_up_and_the_budget_counts_half_the_capture() -> None:
    """Each step once; the seconds budget predicts half the graph capture gone when one
    set of graphs is captured instead of two."""
    log = V.lines(*render_32seqs(104860, 0.53).splitlines()[:-1]).replace(
        V.graph_estimate(0.53), V.graph_estimate(0.53) + "\n" + V.mrv2_capture(0.53, 100)
    ) + V.kv_check_error(
        104860,
        V.kv_bytes(104860, KV_PER_TOKEN),
        round((BEFORE_GRAPHS_GIB - 0.53) * V.GIB),
        104032,
    )
    env = {**ENV, "MAX_MODEL_LEN": "104860", "VLLM_BOOTDIAG_MAX_BOOT_SECONDS": "1000"}
    d = classify(log)
    assert d.facts.cuda_graph_seconds == 100
    base = LaunchConfig.from_env(env)
    hist = [Attempt(config=base, outcome="kv_cache_shortfall", seconds=300.0)]
    r1 = plan(d, base, Policy.from_env(env), hist)
    assert isinstance(r1, Relaunch) and r1.step == "piecewise_cudagraphs"
    # 300 s + 250 s predicted (100 s of capture, half of it gone) fit 1000, not 540; the
    # refusal says what was predicted.
    g = plan(d, base, Policy.from_env({**env, "VLLM_BOOTDIAG_MAX_BOOT_SECONDS": "540"}), hist)
    assert isinstance(g, GiveUp) and g.cause == "budget"
    assert "about 250 s" in g.reason and "graph sets 2 -> 1" in g.reason
    hist.append(Attempt(config=r1.config, outcome="kv_cache_shortfall", step=r1.step))
    r2 = plan(d, r1.config, Policy.from_env(env), hist)
    assert isinstance(r2, Relaunch) and r2.step == "lower_max_model_len"


# --- the release table -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "mode", "sets"),
    [
        ("0.9.2", None, 1),  # V1 captures piecewise graphs; no mode setting yet
        ("0.10.0", None, 1),  # config.py:4115 has full_cuda_graph, not cudagraph_mode
        ("0.10.1.1", "PIECEWISE", 1),
        ("0.10.2", "PIECEWISE", 1),
        ("0.11.0", "FULL_AND_PIECEWISE", 2),
        ("0.32.0", "FULL_AND_PIECEWISE", 2),
    ],
)
def test_default_cudagraph_mode_per_release(version: str, mode: str | None, sets: int) -> None:
    v = Version(version)
    assert default_cudagraph_mode(v) == mode
    assert graph_sets(LaunchConfig(), v) == sets
    assert graph_sets(LaunchConfig(enforce_eager=True), v) == 0
    assert graph_sets(LaunchConfig(cudagraph_mode="NONE"), v) == 0


def test_capture_size_fields_use_what_the_release_accepts() -> None:
    # 0.11.1 added max_cudagraph_capture_size (config/compilation.py:448); before it the
    # list vLLM builds itself ([1, 2, 4] + multiples of 8, scheduler.py:81).
    cfg = LaunchConfig()
    assert capture_size_fields(cfg, Version("0.11.1"), 32) == {"max_cudagraph_capture_size": 32}
    assert capture_size_fields(cfg, Version("0.10.2"), 32) == {
        "cudagraph_capture_sizes": (1, 2, 4, 8, 16, 24, 32)
    }
    assert capture_size_fields(cfg, None, 32) is None  # never guess a key
    listed = LaunchConfig(cudagraph_capture_sizes=(1, 8, 64, 128))
    assert capture_size_fields(listed, Version("0.32.0"), 64) == {
        "cudagraph_capture_sizes": (1, 8, 64)
    }


def test_the_default_batched_tokens_table_matches_every_corpus_cpu_boot() -> None:
    """Every corpus boot that printed its `Chunked prefill` line on the CPU backend
    without setting the value: the table gives what vLLM printed (2048 x TP from 0.10)."""
    checked = 0
    for log in sorted(CORPUS.glob("*/*__cpu.log")):
        text = log.read_text(encoding="utf-8", errors="replace")
        if "Chunked prefill is enabled" not in text:
            continue
        d = classify_file(str(log))
        args = d.facts.non_default_args
        config = LaunchConfig.from_log_args(args) if args else LaunchConfig()
        printed = d.facts.max_num_batched_tokens
        if config.max_num_batched_tokens is not None or printed is None or not d.vllm_version:
            continue
        got = default_batched_tokens(
            Version(d.vllm_version), "cpu", None, config.tensor_parallel_size or 1, None
        )
        assert got.tokens == printed, log.name
        checked += 1
    assert checked >= 10


def test_default_batched_tokens_gpu_tiers_never_overstate() -> None:
    v32, v27 = Version("0.32.0"), Version("0.27.1")
    assert default_batched_tokens(v32, "cuda", 31.4, 1, None).tokens == 2048
    assert default_batched_tokens(v32, "cuda", 180.0, 1, None).tokens == 16384
    assert default_batched_tokens(v27, "cuda", 180.0, 1, None).tokens == 2048  # no tier yet
    # 80 GiB: 8192 on an H100 but 2048 on an A100: the smaller, so a halving never raises it.
    h = default_batched_tokens(v32, "cuda", 79.2, 1, None)
    assert h.tokens == 2048 and "A100" in h.basis
    assert default_batched_tokens(Version("0.8.5"), "cuda", 79.2, 1, None).tokens == 8192
    assert default_batched_tokens(v32, "cuda", 79.2, 1, 8192).tokens == 8192  # as printed


def test_a_profiling_oom_halves_the_batched_tokens_the_boot_printed() -> None:
    log = CORPUS / "0.17.0" / "profiling_oom__llama1b-sampler__cuda.log"
    d = classify_file(str(log))
    assert d.facts.max_num_batched_tokens == 2048
    args = d.facts.non_default_args
    assert args is not None
    r = plan(d, LaunchConfig.from_log_args(args), Policy(max_concurrency=256))
    assert isinstance(r, Relaunch) and r.step == "lower_max_num_batched_tokens"
    assert r.config.max_num_batched_tokens == 1024
    assert "the boot's own value, from its `Chunked prefill` line" in r.reason


def test_the_cpu_backends_default_seqs_are_never_raised_by_a_cut() -> None:
    """vLLM's CPU backend serves 128 x ranks seqs by default (0.32.0 arg_utils.py:2979-2982),
    not 256: a worker running 200 at once gets no "cut" to 200, which would raise it."""
    log = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
    d = classify_file(str(log))
    assert d.facts.device == "cpu"
    args = d.facts.non_default_args
    config = LaunchConfig.from_log_args(args) if args else LaunchConfig()
    assert config.max_num_seqs is None
    many = plan(d, config, Policy(max_concurrency=200))
    assert isinstance(many, Relaunch) and many.config.max_num_seqs is None
    few = plan(d, config, Policy(max_concurrency=30))
    assert isinstance(few, Relaunch) and few.config.max_num_seqs == 32
    assert "max_num_seqs 128 is above the 30 requests" in few.reason
