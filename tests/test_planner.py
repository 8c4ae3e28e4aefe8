"""plan(): one handler per outcome, steps sized by the log's numbers, typed degradations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_bootdiag import classify, outcomes
from vllm_bootdiag.launch import LaunchConfig
from vllm_bootdiag.planning import (
    HANDLERS,
    Attempt,
    GiveUp,
    NothingToPlan,
    Policy,
    Relaunch,
    needs_less_memory,
    plan,
    recommend_defaults,
)

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "fakes" / "logs"
CORPUS = ROOT / "corpus"

BANNER = (
    "(APIServer pid=2210) INFO 11-29 16:18:01 [api_utils.py:347]  ▄▄ ▄█ █     █     █ ▀▄▀ █  "
    "version 0.32.0\n"
)
BASE = LaunchConfig.from_argv(
    ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"]
)


def _log(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


def _relaunch(result: Relaunch | GiveUp) -> Relaunch:
    assert isinstance(result, Relaunch), result
    return result


def _give_up(result: Relaunch | GiveUp) -> GiveUp:
    assert isinstance(result, GiveUp), result
    return result


# --- KV-cache shortfall: the three steps, in order ------------------------------------


def test_small_gap_lowers_max_num_seqs_alone_where_its_conservative_share_covers_it() -> None:
    # 1.2 GiB of graphs, largest capture 512 -> 64: scaling says 1.05 GiB, counted as half
    # of the figure (0.6 GiB), which covers a 0.5 GiB gap: fewer seqs alone, graphs kept.
    d = classify(_log("kv_shortfall__small-gap.log"))
    o = d.primary.model_copy(update={"available_gib": 15.5})
    r = _relaunch(plan(d.model_copy(update={"primary": o}), BASE, Policy(max_concurrency=30)))
    assert r.step == "lower_max_num_seqs"
    assert r.config.max_num_seqs == 32
    assert r.config.enforce_eager is None
    assert r.expected_to_free_gib == pytest.approx(0.6, abs=0.001)
    assert r.estimate.startswith("guess") and "scaling says 1.05" in r.estimate
    assert r.degradations == ()
    assert [(c.field, c.old, c.new) for c in r.changes] == [("max_num_seqs", None, 32)]
    assert r.attempt == 2


def test_small_gap_fewer_seqs_is_combined_with_a_small_cut_not_eager() -> None:
    # The 0.8 GiB gap is over the 0.6 GiB counted for fewer seqs; vLLM's estimate is a 5%
    # cut, within the policy's 10% preferred over eager: both in one relaunch.
    d = classify(_log("kv_shortfall__small-gap.log"))
    r = _relaunch(plan(d, BASE, Policy(max_concurrency=30, max_gpu_memory_utilization=0.92)))
    assert r.step == "lower_max_num_seqs+lower_max_model_len"
    assert r.config.max_num_seqs == 32 and r.config.enforce_eager is None
    assert r.config.max_model_len == 123904  # 124518 rounded down to a multiple of 1024
    assert [g.kind for g in r.degradations] == ["shorter_context"]
    assert "above the 30 requests the worker runs" in r.reason


def test_small_gap_without_known_concurrency_still_lowers_seqs_to_the_fallback() -> None:
    d = classify(_log("kv_shortfall__small-gap.log"))
    r = _relaunch(plan(d, BASE, Policy(max_gpu_memory_utilization=0.92)))
    assert r.config.max_num_seqs == 64  # FALLBACK_MAX_NUM_SEQS
    assert r.config.enforce_eager is None
    assert "set MAX_CONCURRENCY" in r.reason
    assert [g.kind for g in r.degradations] == ["shorter_context", "lower_concurrency"]
    # A cut above the policy's preference: eager (it covers the gap) comes first, seqs too.
    r2 = _relaunch(
        plan(d, BASE, Policy(max_context_cut_before_eager=0.01, max_gpu_memory_utilization=0.92))
    )
    assert r2.step == "lower_max_num_seqs+enforce_eager"
    assert r2.config.enforce_eager is True and r2.config.max_num_seqs == 64
    assert r2.expected_to_free_gib == 1.2
    assert "1.5-2x lower throughput" in r2.degradations[0].message


def test_small_gap_without_eager_lowers_context_to_vllm_estimate_rounded() -> None:
    d = classify(_log("kv_shortfall__small-gap.log"))
    r = _relaunch(
        plan(
            d, BASE, Policy(allow_eager=False, max_concurrency=256, max_gpu_memory_utilization=0.92)
        )
    )
    assert r.step == "lower_max_model_len"
    assert r.config.max_model_len == 123904  # 124518 rounded down to a multiple of 1024
    assert [g.kind for g in r.degradations] == ["shorter_context"]
    assert "123904" in r.degradations[0].message and "131072" in r.degradations[0].message


def test_second_shortfall_after_lower_seqs_prefers_a_tiny_cut_to_eager() -> None:
    first = BASE
    second = BASE.model_copy(update={"max_num_seqs": 32})
    history = [
        Attempt(config=first, outcome="kv_cache_shortfall", seconds=251.0),
        Attempt(
            config=second, outcome="kv_cache_shortfall", seconds=80.0, step="lower_max_num_seqs"
        ),
    ]
    d = classify(_log("kv_shortfall__tiny-gap-after-seqs.log"))
    r = _relaunch(
        plan(d, second, Policy(max_concurrency=30, max_gpu_memory_utilization=0.92), history)
    )
    # a 0.6% cut (130252 of vLLM's estimate) costs less than eager's throughput
    assert r.step == "lower_max_model_len"
    assert r.config.max_num_seqs == 32 and r.config.enforce_eager is None
    assert r.config.max_model_len == 130048
    assert r.attempt == 3
    assert [g.kind for g in r.degradations] == ["shorter_context"]
    r2 = _relaunch(
        plan(
            d,
            second,
            Policy(
                max_concurrency=30, max_context_cut_before_eager=0, max_gpu_memory_utilization=0.92
            ),
            history,
        )
    )
    assert r2.step == "enforce_eager" and r2.config.enforce_eager is True


def test_big_gap_skips_steps_that_cannot_cover_it() -> None:
    # gap 3.5 GiB; graphs hold 1.2 GiB: neither fewer seqs nor eager can cover it.
    d = classify(_log("kv_shortfall__big-gap.log"))
    r = _relaunch(plan(d, BASE, Policy(max_concurrency=30)))
    assert r.step == "lower_max_num_seqs+lower_max_model_len"
    assert r.config.max_model_len == 102400
    # fewer seqs goes along: it costs nothing and its saving is slack, not spent on context
    assert r.config.max_num_seqs == 32 and r.config.enforce_eager is None
    assert r.expected_to_free_gib == pytest.approx(3.5, abs=0.01)


def test_estimate_is_not_a_fixed_point_second_shortfall_lowers_again() -> None:
    shorter = BASE.model_copy(update={"max_model_len": 102400})
    history = [
        Attempt(config=BASE, outcome="kv_cache_shortfall"),
        Attempt(config=shorter, outcome="kv_cache_shortfall", step="lower_max_model_len"),
    ]
    d = classify(_log("kv_shortfall__after-shorter-len.log"))
    r = _relaunch(plan(d, shorter, Policy(max_concurrency=256), history))
    assert r.step == "lower_max_model_len"
    assert r.config.max_model_len == 97280  # 97484 rounded down
    assert "asked for 131072" in r.degradations[0].message  # relative to the first launch


def test_context_floor_is_never_crossed() -> None:
    d = classify(_log("kv_shortfall__big-gap.log"))
    g = _give_up(plan(d, BASE, Policy(min_max_model_len=110000, allow_eager=False)))
    assert g.cause == "kv_cache_shortfall"
    assert "102400 tokens fit, below the accepted 110000" in g.reason
    assert any("--kv-cache-dtype fp8" in a and "8 GiB instead of 16" in a for a in g.advice)
    assert any("--tensor-parallel-size 2" in a for a in g.advice)


def test_negative_available_combines_eager_with_a_shorter_context() -> None:
    cfg = BASE.model_copy(update={"max_model_len": 32768})
    d = classify(_log("kv_shortfall__negative-available.log"))
    r = _relaunch(plan(d, cfg, Policy()))
    # -0.5 GiB left with graphs; eager adds 2.5 GiB: 2.0 GiB holds half of 32768.
    assert r.step == "lower_max_num_seqs+enforce_eager_and_lower_max_model_len"
    assert r.config.max_num_seqs == 64
    assert r.config.enforce_eager is True and r.config.max_model_len == 16384
    assert {g.kind for g in r.degradations} == {
        "eager_mode",
        "shorter_context",
        "lower_concurrency",
    }


def test_negative_available_without_eager_gives_up_with_advice() -> None:
    cfg = BASE.model_copy(update={"max_model_len": 32768})
    d = classify(_log("kv_shortfall__negative-available.log"))
    g = _give_up(plan(d, cfg, Policy(allow_eager=False)))
    assert "-0.5 GiB is available" in g.reason
    assert any("quantized checkpoint" in a and "14.99 GiB" in a for a in g.advice)


def test_fixed_kv_bytes_means_graph_steps_free_nothing_for_kv() -> None:
    cfg = BASE.model_copy(update={"kv_cache_memory_bytes": 16 * 2**30})
    d = classify(_log("kv_shortfall__small-gap.log"))
    r = _relaunch(plan(d, cfg, Policy(max_concurrency=30, max_gpu_memory_utilization=0.92)))
    assert r.step == "lower_max_num_seqs+lower_max_model_len"
    assert "no CUDA-graph memory reserved" not in r.estimate


def test_no_graph_estimate_in_log_goes_straight_to_context() -> None:
    text = BANNER.replace("0.32.0", "0.13.0") + (
        "(EngineCore_DP0 pid=3862035) ERROR 11-25 18:39:23 [core.py:866] ValueError: To serve "
        "at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
        "needed, which is larger than the available KV cache memory (5.48 GiB). Based on the "
        "available memory, the estimated maximum model length is 44880. Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."
    )
    d = classify(text)
    assert d.primary.kind == "kv_cache_shortfall"
    r = _relaunch(plan(d, BASE, Policy(max_concurrency=30)))
    assert r.step == "lower_max_num_seqs+lower_max_model_len"
    assert r.config.max_model_len == 44032 and r.config.max_num_seqs == 32
    # 0.13 defaults gpu_memory_utilization to 0.9, under the 0.95 cap: left unset.
    assert r.config.gpu_memory_utilization is None


def test_no_estimate_printed_uses_auto_where_the_version_has_it() -> None:
    # 0.8.5/0.9.0.1 print no estimate (a vLLM bug); with no numbers at all fall back to auto.
    text = BANNER.replace("0.32.0", "0.15.0") + (
        "ERROR 05-02 10:11:12 [core.py:396] ValueError: To serve at least one request with the "
        "models's max seq len (131072), (16.0 GiB KV cache is needed, which is larger than the "
        "available KV cache memory (3.21 GiB). Try increasing `gpu_memory_utilization` or "
        "decreasing `max_model_len` when initializing the engine."
    )
    d = classify(text)
    assert d.primary.kind == "kv_cache_shortfall"
    r = _relaunch(plan(d, BASE, Policy()))
    # needed and available are printed: 131072 * 3.21 / 16 = 26296 -> 25600
    assert r.config.max_model_len == 25600
    no_numbers = outcomes.KvCacheShortfall()
    d2 = d.model_copy(update={"primary": no_numbers})
    r2 = _relaunch(plan(d2, BASE, Policy()))
    assert r2.step == "lower_max_num_seqs+auto_max_model_len" and r2.config.max_model_len == "auto"
    d3 = d2.model_copy(update={"vllm_version": "0.13.0"})
    assert isinstance(plan(d3, BASE, Policy()), GiveUp)


def test_the_utilization_cap_never_lowers_what_was_asked() -> None:
    # The cap bounds what a step raises to; 0.32's default 0.92 and an asked 0.97 stay.
    d = classify(_log("kv_shortfall__big-gap.log"))
    r = _relaunch(plan(d, BASE, Policy(max_gpu_memory_utilization=0.9)))
    assert r.config.gpu_memory_utilization is None
    asked = BASE.model_copy(update={"gpu_memory_utilization": 0.97})
    r2 = _relaunch(plan(d, asked, Policy()))
    assert r2.config.gpu_memory_utilization == 0.97
    assert "smaller_kv_cache" not in {g.kind for g in r2.degradations}


@pytest.mark.parametrize(
    ("log", "length", "expected"),
    [
        ("kv_cache_shortfall__llama1b-kvspace1__cpu.log", 131072, 31744),
        ("kv_cache_shortfall__qwen05b-kvbytes__cpu.log", 32768, 15360),
        ("kv_cache_shortfall__qwen15-kvspace1-color__cpu.log", 32768, 10240),
    ],
)
def test_real_cpu_shortfalls_lower_context(log: str, length: int, expected: int) -> None:
    path = CORPUS / "0.32.0" / log
    if not path.exists():
        pytest.skip(f"corpus log {log} not captured yet")
    d = classify(path.read_text(encoding="utf-8"))
    args = d.facts.non_default_args
    cfg = LaunchConfig.from_log_args(args) if args else LaunchConfig()
    r = _relaunch(plan(d, cfg, Policy(max_concurrency=8)))
    assert r.step == "lower_max_num_seqs+lower_max_model_len"
    assert r.config.max_model_len == expected and r.config.max_num_seqs == 8
    assert r.config.max_model_len < length


# --- other outcomes ----------------------------------------------------------------

CAPTURE_OOM = BANNER + (
    "(EngineCore pid=3120) INFO 11-29 17:01:50 [kv_cache_utils.py:2327] GPU KV cache size: "
    "135,024 tokens, Maximum concurrency for 131,072 tokens per request: 1.03x\n"
    "(EngineCore pid=3120) ERROR 11-29 17:02:10 [core.py:1510] Traceback (most recent call "
    "last):\n"
    '(EngineCore pid=3120) ERROR 11-29 17:02:10 [core.py:1510]   File "/x/vllm/v1/worker/'
    'gpu_model_runner.py", line 6581, in capture_model\n'
    "(EngineCore pid=3120) ERROR 11-29 17:02:10 [core.py:1510] torch.OutOfMemoryError: CUDA out "
    "of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 31.36 GiB of which "
    "1.05 GiB is free. Including non-PyTorch memory, this process has 30.30 GiB memory in use. "
    "Of the allocated memory 27.60 GiB is allocated by PyTorch, with 1.21 GiB allocated in "
    "private pools (e.g., CUDA Graphs), and 1.37 GiB is reserved by PyTorch but unallocated.\n"
)


def test_graph_capture_oom_order_seqs_then_piecewise_then_eager() -> None:
    d = classify(CAPTURE_OOM)
    assert d.primary.kind == "cuda_graph_capture_oom"
    policy = Policy(max_concurrency=30)
    r1 = _relaunch(plan(d, BASE, policy))
    assert r1.step == "lower_max_num_seqs" and r1.config.max_num_seqs == 32
    hist = [Attempt(config=BASE), Attempt(config=r1.config, step=r1.step)]
    # 0.32.0 captures FULL_AND_PIECEWISE by default: one set of graphs, torch.compile kept.
    r2 = _relaunch(plan(d, r1.config, policy, hist))
    assert r2.step == "piecewise_cudagraphs" and r2.config.cudagraph_mode == "PIECEWISE"
    assert not r2.config.enforce_eager
    assert '"cudagraph_mode":"PIECEWISE"' in " ".join(r2.argv())
    assert r2.env()["CUDAGRAPH_MODE"] == "PIECEWISE"
    assert "keeps torch.compile" in r2.reason
    assert [g.kind for g in r2.degradations] == ["fewer_cuda_graphs"]
    hist.append(Attempt(config=r2.config, step=r2.step))
    r3 = _relaunch(plan(d, r2.config, policy, hist))
    assert r3.step == "enforce_eager"
    hist.append(Attempt(config=r3.config, step=r3.step))
    g = _give_up(plan(d, r3.config, policy, hist))
    assert g.cause == "cuda_graph_capture_oom"


def test_graph_capture_oom_without_concurrency_lowers_seqs_to_the_fallback_first() -> None:
    d = classify(CAPTURE_OOM)
    r0 = _relaunch(plan(d, BASE, Policy()))
    assert r0.step == "lower_max_num_seqs" and r0.config.max_num_seqs == 64
    assert [g.kind for g in r0.degradations] == ["lower_concurrency"]


def test_graph_capture_oom_at_the_concurrency_halves_capture_size_once() -> None:
    d = classify(CAPTURE_OOM)
    r1 = _relaunch(plan(d, BASE, Policy(max_concurrency=256)))
    assert r1.step == "smaller_capture_sizes"
    assert r1.config.max_cudagraph_capture_size == 256
    assert r1.degradations == ()  # batches above 256 never run with max_num_seqs 256
    hist = [Attempt(config=BASE), Attempt(config=r1.config, step=r1.step)]
    r2 = _relaunch(plan(d, r1.config, Policy(max_concurrency=256), hist))
    assert r2.step == "piecewise_cudagraphs"
    hist.append(Attempt(config=r2.config, step=r2.step))
    r3 = _relaunch(plan(d, r2.config, Policy(max_concurrency=256), hist))
    assert r3.step == "enforce_eager"
    g = _give_up(plan(d, r2.config, Policy(max_concurrency=256, allow_eager=False), hist))
    assert any("gpu-memory-utilization" in a for a in g.advice)


SAMPLER_OOM = BANNER + (
    "(EngineCore pid=3120) ERROR 11-29 17:02:10 [core.py:1510] RuntimeError: CUDA out of "
    "memory occurred when warming up sampler with 256 dummy requests. Please try lowering "
    "`max_num_seqs` or `gpu_memory_utilization` when initializing the engine.\n"
)


def test_sampler_warmup_oom_lowers_seqs_then_batched_tokens() -> None:
    d = classify(SAMPLER_OOM)
    assert d.primary.kind == "profiling_oom"
    r1 = _relaunch(plan(d, BASE, Policy(max_concurrency=30)))
    assert r1.step == "lower_max_num_seqs"
    full = Policy(max_concurrency=256)
    r2 = _relaunch(plan(d, BASE, full))
    assert r2.step == "lower_max_num_batched_tokens"
    assert r2.config.max_num_batched_tokens == 1024
    assert "1024 instead of 2048 (unset: vLLM's default below 70 GiB" in r2.reason
    assert [g.kind for g in r2.degradations] == ["lower_batched_tokens"]
    hist = [Attempt(config=BASE), Attempt(config=r2.config, step=r2.step)]
    assert isinstance(plan(d, r2.config, full, hist), GiveUp)


def test_explicit_batched_tokens_halve_down_to_max_num_seqs() -> None:
    d = classify(SAMPLER_OOM)
    cfg = BASE.model_copy(update={"max_num_batched_tokens": 8192, "max_num_seqs": 64})
    r = _relaunch(plan(d, cfg, Policy()))
    assert r.config.max_num_batched_tokens == 4096
    assert r.config.problems() == []


FREE_MEMORY = BANNER + (
    "(EngineCore pid=311) ERROR 11-29 17:10:05 [core.py:1510] ValueError: Free memory on "
    "device cuda:0 (10.2/31.36 GiB) on startup is less than desired GPU memory utilization "
    "(0.92, 28.85 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
    "processes.\n"
)


def test_insufficient_free_memory_lowers_utilization_once() -> None:
    d = classify(FREE_MEMORY)
    r = _relaunch(plan(d, BASE, Policy(max_concurrency=256)))
    assert r.step == "lower_gpu_memory_utilization"
    assert r.config.gpu_memory_utilization == 0.3  # 10.2/31.36 = 0.325, less a margin
    assert [g.kind for g in r.degradations] == ["smaller_kv_cache"]
    hist = [Attempt(config=BASE), Attempt(config=r.config, step=r.step)]
    g = _give_up(plan(d, r.config, Policy(), hist))
    assert "another process holds it" in g.reason
    assert any("Free the GPU" in a for a in g.advice)


def test_real_cpu_kv_request_over_free_memory_gives_concrete_size() -> None:
    path = CORPUS / "0.32.0" / "insufficient_free_memory__kvspace-over-ram__cpu.log"
    if not path.exists():
        pytest.skip("corpus log not captured yet")
    d = classify(path.read_text(encoding="utf-8"))
    g = _give_up(plan(d, LaunchConfig(), Policy()))
    assert "at most 13.14 GiB" in g.reason
    cfg = LaunchConfig(kv_cache_memory_bytes=64 * 2**30)
    r = _relaunch(plan(d, cfg, Policy()))
    assert r.config.kv_cache_memory_bytes == int(13.14 * 2**30)


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (
            "(EngineCore pid=4410) ERROR 11-29 16:40:02 [core.py:1510] ValueError: Cannot auto-fit "
            "max_model_len: not enough GPU memory available to serve even a single token. Try "
            "increasing `gpu_memory_utilization`.",
            "auto_fit_failed",
        ),
        (
            "(EngineCore pid=3120) ERROR 11-29 17:01:40 [gpu_model_runner.py:5139] Failed to load "
            "model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory "
            "for weights, increasing --tensor-parallel-size, or using --quantization. (original "
            "error: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total capacity "
            "of 23.52 GiB of which 512.75 MiB is free.)",
            "weight_load_oom",
        ),
    ],
)
def test_no_relaunch_can_fit_these_on_the_same_footprint(line: str, kind: str) -> None:
    d = classify(BANNER + line + "\n")
    assert d.primary.kind == kind
    cfg = BASE.model_copy(update={"max_model_len": "auto", "tensor_parallel_size": 2})
    g = _give_up(plan(d, cfg, Policy()))
    assert g.cause == kind
    assert any("--tensor-parallel-size 4" in a for a in g.advice)
    assert any("fp8 KV cache" in a for a in g.advice)


def _corpus_logs() -> list[Path]:
    return sorted(CORPUS.glob("*/*.log"))


@pytest.mark.parametrize("path", _corpus_logs(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_corpus_log_gets_a_plan_of_the_right_shape(path: Path) -> None:
    d = classify(path.read_text(encoding="utf-8", errors="replace"))
    args = d.facts.non_default_args
    cfg = LaunchConfig.from_log_args(args) if args else LaunchConfig()
    if d.primary.kind == "booted":
        with pytest.raises(NothingToPlan):
            plan(d, cfg, Policy())
        return
    result = plan(d, cfg, Policy(max_concurrency=8))
    if d.primary.category in (outcomes.Category.CONFIG, outcomes.Category.ACCESS):
        assert isinstance(result, GiveUp) and result.cause == d.primary.kind
        assert result.advice, "a config or access give-up carries the remediation"
    if d.primary.kind in ("auto_fit_failed", "weight_load_oom"):
        assert isinstance(result, GiveUp)
    if isinstance(result, Relaunch):
        assert result.config.problems() == []
        # Less memory asked, a plain restart, or (a reservation vLLM says is too small) more of
        # the machine reserved, as vLLM's own message says to.
        raises = "raise_gpu_memory_utilization" in result.step.split("+")
        assert needs_less_memory(cfg, result.config, None) or result.step == "restart" or raises


def test_config_error_gives_up_with_the_models_own_limit() -> None:
    path = CORPUS / "0.32.0" / "max_model_len_exceeds_model__maxlen-over-model__cpu.log"
    d = classify(path.read_text(encoding="utf-8"))
    g = _give_up(plan(d, LaunchConfig(max_model_len=16384), Policy()))
    assert g.cause == "max_model_len_exceeds_model"
    assert g.advice[0] == "Set --max-model-len to at most 8192 (the model's own context)."


def test_unknown_failure_restarts_once_then_gives_up() -> None:
    d = classify(
        BANNER + "(EngineCore pid=9) ERROR 11-29 17:00:00 [core.py:1] "
        "FrobError: the flux capacitor is misaligned\n"
    )
    assert d.primary.kind == "unknown"
    r = _relaunch(plan(d, BASE, Policy()))
    assert r.step == "restart" and r.config == BASE and r.degradations == ()
    hist = [
        Attempt(config=BASE, outcome="unknown"),
        Attempt(config=BASE, outcome="unknown", step="restart"),
    ]
    g = _give_up(plan(d, BASE, Policy(), hist))
    assert g.cause == "unknown"
    assert "flux capacitor" in g.advice[0]


# --- budget -------------------------------------------------------------------------


def test_attempt_budget_gives_up_and_names_the_next_step() -> None:
    d = classify(_log("kv_shortfall__big-gap.log"))
    hist = [Attempt(config=BASE.model_copy(update={"max_num_seqs": n})) for n in (64, 48)]
    hist.append(Attempt(config=BASE))
    g = _give_up(plan(d, BASE, Policy(max_attempts=3), hist))
    assert g.cause == "budget"
    assert "3 of 3 launches used" in g.reason
    assert "lower_max_model_len" in g.advice[0]
    r = _relaunch(plan(d, BASE, Policy(max_attempts=4), hist))
    assert r.attempt == 4


def test_seconds_budget_counts_every_boot() -> None:
    d = classify(_log("kv_shortfall__big-gap.log"))
    hist = [Attempt(config=BASE, seconds=251.0)]
    g = _give_up(plan(d, BASE, Policy(max_boot_seconds=400), hist))
    assert "another boot (about 251 s, as the last boot) would not fit" in g.reason
    assert isinstance(plan(d, BASE, Policy(max_boot_seconds=600), hist), Relaunch)
    assert isinstance(plan(d, BASE, Policy(max_boot_seconds=None), hist), Relaunch)


def test_booted_has_nothing_to_plan() -> None:
    d = classify(_log("booted__eager.log"))
    with pytest.raises(NothingToPlan):
        plan(d, BASE, Policy())


def test_every_handled_kind_exists_and_every_kind_has_a_plan() -> None:
    assert set(HANDLERS) <= set(outcomes.OUTCOME_TYPES) - {"booted"}
    for kind, cls in outcomes.OUTCOME_TYPES.items():
        assert kind in HANDLERS or cls.PLAN in ("memory", "give_up", "restart_once"), kind


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("model_not_found", "give_up"), ("engine_died", "restart"), ("profiling_oom", "memory")],
)
def test_a_kind_without_a_handler_is_planned_by_its_plan_attribute(
    monkeypatch: pytest.MonkeyPatch, kind: str, expected: str
) -> None:
    """A kind vocab adds later has no entry in HANDLERS: its class's PLAN decides."""
    monkeypatch.delitem(HANDLERS, kind)
    primary = outcomes.OUTCOME_TYPES[kind]()
    d = classify(BANNER + "x\n").model_copy(update={"primary": primary, "matches": (primary,)})
    result = plan(d, BASE, Policy(max_concurrency=30))
    if expected == "restart":
        assert _relaunch(result).step == "restart"
        return
    g = _give_up(result)
    assert g.cause == kind
    if expected == "memory":
        assert any("quantized checkpoint" in a for a in g.advice)


# --- defaults -----------------------------------------------------------------------


@pytest.mark.parametrize(("concurrency", "seqs"), [(1, 8), (8, 8), (30, 32), (100, 104)])
def test_recommend_defaults_ties_max_num_seqs_to_concurrency(concurrency: int, seqs: int) -> None:
    assert recommend_defaults(concurrency).max_num_seqs == seqs
    kept = recommend_defaults(concurrency, BASE)
    assert kept.max_model_len == 131072 and kept.model == BASE.model


def test_recommend_defaults_rejects_zero() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        recommend_defaults(0)


# --- the `plan` command -------------------------------------------------------------


def _plan_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from vllm_bootdiag.cli.remediation import main

    code = main(["plan", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_command_prints_argv_and_env(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _plan_cli(
        capsys,
        str(LOGS / "kv_shortfall__small-gap.log"),
        "--max-concurrency",
        "30",
        "--max-gpu-memory-utilization",
        "0.92",
    )
    assert code == 0
    assert "relaunch (lower_max_num_seqs+lower_max_model_len)" in out
    assert max(map(len, out.splitlines())) <= 80
    out = out.replace(" \\\n" + " " * 8, " ")  # the argv's shell continuations, joined
    assert f"argv: vllm serve {BASE.model} --max-model-len 123904 --max-num-seqs 32" in out
    assert "MAX_NUM_SEQS=32" in out


def test_plan_command_json_with_args_and_env_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    env_file = tmp_path / "worker.env"
    env_file.write_text(
        "# worker\nexport GPU_MEMORY_UTILIZATION=0.9\nKV_CACHE_DTYPE='auto'\nMAX_CONCURRENCY=30\n"
    )
    code, out, _ = _plan_cli(
        capsys,
        str(LOGS / "kv_shortfall__big-gap.log"),
        "--json",
        "--env-file",
        str(env_file),
        "--args",
        "--max-model-len 131072 --trust-remote-code",
    )
    assert code == 0
    data = json.loads(out)
    assert data["kind"] == "relaunch" and data["step"] == "lower_max_num_seqs+lower_max_model_len"
    assert data["argv"] == [
        "vllm",
        "serve",
        BASE.model,
        "--max-model-len",
        "102400",
        "--gpu-memory-utilization",
        "0.9",
        "--max-num-seqs",
        "32",
        "--kv-cache-dtype",
        "auto",
        "--trust-remote-code",
    ]
    assert data["env"]["MAX_MODEL_LEN"] == "102400"
    assert data["degradations"][0]["kind"] == "shorter_context"


def test_plan_command_give_up_and_booted(capsys: pytest.CaptureFixture[str]) -> None:
    log = CORPUS / "0.32.0" / "model_not_found__local-path-missing__cpu.log"
    code, out, _ = _plan_cli(capsys, str(log), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["kind"] == "give_up" and data["cause"] == "model_not_found"
    code, out, _ = _plan_cli(capsys, str(LOGS / "booted__eager.log"))
    assert code == 0 and out.strip() == "booted: nothing to relaunch"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/no/such.log"], "no such file"),
        (
            [str(LOGS / "kv_shortfall__big-gap.log"), "--args", "--max-num-seqs abc"],
            "not an integer",
        ),
        ([str(LOGS / "kv_shortfall__big-gap.log"), "--args", "'unclosed"], "--args"),
        ([str(LOGS / "kv_shortfall__big-gap.log"), "--env-file", "/no/such.env"], "cannot read"),
        ([str(LOGS / "kv_shortfall__big-gap.log"), "--max-concurrency", "0"], "bad policy"),
    ],
)
def test_plan_command_input_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = _plan_cli(capsys, *args)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_real_sampler_oom_lowers_max_num_seqs_even_in_eager_mode() -> None:
    path = CORPUS / "0.32.0" / "profiling_oom__llama1b-sampler-v1__cuda.log"
    if not path.exists():
        pytest.skip("corpus log not captured yet")
    d = classify(path.read_text(encoding="utf-8"))
    args = d.facts.non_default_args
    cfg = LaunchConfig.from_log_args(args) if args else LaunchConfig()
    assert cfg.enforce_eager is True
    r = _relaunch(plan(d, cfg, Policy(max_concurrency=16)))
    assert r.step == "lower_max_num_seqs" and r.config.max_num_seqs == 16
    assert "still warms the sampler up" in r.reason
    r2 = _relaunch(plan(d, cfg, Policy(max_concurrency=256)))
    assert r2.step == "lower_max_num_batched_tokens"


def test_no_auto_fit_relaunch_when_nothing_is_available() -> None:
    d = classify(BANNER + "x\n").model_copy(
        update={"primary": outcomes.KvCacheShortfall(available_gib=-1.5), "vllm_version": "0.20.0"}
    )
    g = _give_up(plan(d, BASE, Policy()))
    assert g.cause == "kv_cache_shortfall"
    d2 = d.model_copy(update={"primary": outcomes.KvCacheShortfall(available_gib=2.0)})
    assert _relaunch(plan(d2, BASE, Policy())).config.max_model_len == "auto"


def test_free_memory_lowering_happens_once_even_without_step_names() -> None:
    d = classify(FREE_MEMORY)
    lowered = BASE.model_copy(update={"gpu_memory_utilization": 0.5})
    hist = [Attempt(config=BASE), Attempt(config=lowered)]
    g = _give_up(plan(d, lowered, Policy(), hist))
    assert "another process holds it" in g.reason


def test_printed_largest_capture_size_sizes_the_max_num_seqs_step() -> None:
    """`Profiling CUDA graph memory: ... (largest=N)` replaces the guessed capture size."""
    from vllm_bootdiag import LaunchConfig, Policy, Relaunch, classify, plan

    head = [
        "(EngineCore pid=1) INFO 11-29 16:00:00 [gpu_model_runner.py:6369] Profiling CUDA graph "
        "memory: PIECEWISE=19 (largest=128), FULL=11 (largest=64)",
        "(EngineCore pid=1) INFO 11-29 16:00:01 [gpu_model_runner.py:6474] Estimated CUDA graph "
        "memory: 1.00 GiB total",
    ]
    kv = (
        "(EngineCore pid=1) ERROR 11-29 16:00:02 [core.py:1510] ValueError: To serve at least one "
        "request with the model's max seq len (32768), (4.0 GiB KV cache is needed, which is larger "
        "than the available KV cache memory (3.6 GiB). Based on the available memory, the estimated "
        "maximum model length is 29488. Try increasing `gpu_memory_utilization` (which also controls "
        "CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine."
    )
    config = LaunchConfig.from_argv(["vllm", "serve", "m", "--max-num-seqs", "256"])
    policy = Policy(max_concurrency=8)
    with_printed = plan(classify([*head, kv], version="0.32.0"), config, policy)
    guessed = plan(classify([head[1], kv], version="0.32.0"), config, policy)
    assert isinstance(with_printed, Relaunch) and isinstance(guessed, Relaunch)
    # Graph memory taken as 3/7 fixed + 4/7 scaling with the largest capture (fitted to a
    # 70B measured at 0.5x for 64 vs 512): 128 -> 16 as printed keeps 25/32 of it, 512 ->
    # 16 by default 25/56. Only the latter covers the 0.4 GiB gap with fewer seqs alone.
    assert guessed.step == "lower_max_num_seqs" and guessed.expected_to_free_gib == 0.554
    assert with_printed.step == "lower_max_num_seqs+piecewise_cudagraphs"
    assert with_printed.config.max_num_seqs == guessed.config.max_num_seqs == 8
    # Dropping the full decode graphs is counted as a quarter of what is left.
    assert with_printed.expected_to_free_gib == 0.414  # 1 - 25/32 x 3/4
    assert with_printed.config.cudagraph_mode == "PIECEWISE"
    assert not with_printed.config.enforce_eager
    assert "0.414 GiB counted with fewer seqs" in with_printed.estimate
    assert "scaling says 0.969" in guessed.estimate  # 1.0 GiB x (1 - 16/512), the default
    assert "as printed" not in guessed.estimate


def test_a_killed_engine_says_so_and_gives_up_after_one_restart() -> None:
    """The 0.17.0 capture the kernel's OOM killer ended: one restart, then a give-up that
    names host memory, not 'no known cause'."""
    from pathlib import Path

    from vllm_bootdiag import Attempt, GiveUp, LaunchConfig, Relaunch, classify_file, plan

    log = (
        Path(__file__).resolve().parent.parent
        / "corpus/0.17.0/engine_died__kvspace-over-ram__cpu.log"
    )
    d = classify_file(log)
    config = LaunchConfig.from_argv(["vllm", "serve", "m", "--enforce-eager"])
    first = plan(d, config)
    assert isinstance(first, Relaunch) and first.step == "restart"
    assert "killed by signal 9" in first.reason and "OOM killer" in first.reason
    history = [
        Attempt(config=config, outcome="engine_died"),
        Attempt(config=config, outcome="engine_died"),
    ]
    second = plan(d, config, history=history)
    assert isinstance(second, GiveUp) and "more memory" in second.reason


def test_an_exact_fit_above_the_floor_survives_the_rounding() -> None:
    # 1500 tokens fit; rounding to 1024 would fall under the accepted 1200: keep 1488.
    d = classify(BANNER + "x\n").model_copy(
        update={
            "primary": outcomes.KvCacheShortfall(
                max_model_len=4096, needed_gib=4.0, available_gib=1.46, estimated_max_model_len=1500
            ),
        }
    )
    cfg = BASE.model_copy(update={"max_model_len": 4096, "max_num_seqs": 8})
    r = _relaunch(plan(d, cfg, Policy(min_max_model_len=1200, allow_eager=False)))
    assert r.step == "lower_max_model_len" and r.config.max_model_len == 1488


CPU_RESERVATION = BANNER.replace("0.32.0", "0.33.0") + (
    # vllm/v1/worker/cpu_worker.py:229 (0.33.0), as rule HM008 reads it
    "(EngineCore pid=2210) ERROR 12-01 10:02:11 [core.py:1142] ValueError: The worker "
    "already uses 2.31 GiB (model weights and runtime), more than the 2.2 GiB of CPU "
    "memory reserved for it on node 0, leaving none for the KV cache. On the CPU "
    "backend, the `--gpu-memory-utilization` flag controls the fraction of CPU memory "
    "reserved (despite its name). To resolve: increase `--gpu-memory-utilization` to "
    "more than 0.10, or set the KV cache size explicitly with `--kv-cache-memory-bytes` "
    "or VLLM_CPU_KVCACHE_SPACE.\n"
)


def test_cpu_reservation_raises_utilization_above_vllms_minimum() -> None:
    d = classify(CPU_RESERVATION)
    assert d.primary.kind == "cpu_memory_reservation_exceeded"
    cfg = BASE.model_copy(update={"gpu_memory_utilization": 0.094, "max_num_seqs": 8})
    r = _relaunch(plan(d, cfg, Policy()))
    assert r.step == "raise_gpu_memory_utilization"
    assert r.config.gpu_memory_utilization == 0.15  # above 0.10, with room for a KV cache
    assert r.degradations == ()
    # A cap below what vLLM needs: never lowered, the explicit KV size instead.
    g = _give_up(plan(d, cfg, Policy(max_gpu_memory_utilization=0.1)))
    assert "--kv-cache-memory-bytes" in g.reason and "more than 0.10" in g.reason
    # The CPU backend's advice: no GPU to add or free (nvidia-smi) for a node's memory.
    assert not [a for a in g.advice if "GPU" in a or "nvidia-smi" in a or "card" in a]
    assert "Use a machine (or a NUMA node) with more memory." in g.advice


def test_cpu_reservation_without_the_launchs_utilization_reads_it_from_the_log() -> None:
    """A tail that lost vLLM's non-default args (or a worker that passes no --args): the
    reservation and vLLM's minimum say the boot had about 0.095, so raising it to 0.15 is a
    raise, not a lowering of the 0.92 default (it was a give-up 'needs more than 0.10 and
    the policy allows 0.95')."""
    d = classify(CPU_RESERVATION)
    cfg = BASE.model_copy(update={"max_num_seqs": 8})
    assert cfg.gpu_memory_utilization is None
    r = _relaunch(plan(d, cfg, Policy()))
    assert r.step == "raise_gpu_memory_utilization"
    assert r.config.gpu_memory_utilization == 0.15
    assert "0.095 -> 0.15" in r.reason
    assert [(c.field, c.old, c.new) for c in r.changes] == [("gpu_memory_utilization", None, 0.15)]
    assert r.degradations == ()
    # vLLM's own fix and nothing else: no max_num_seqs cut for an unknown concurrency.
    r = _relaunch(plan(d, BASE, Policy()))
    assert r.step == "raise_gpu_memory_utilization" and r.degradations == ()
    assert [c.field for c in r.changes] == ["gpu_memory_utilization"]


@pytest.mark.parametrize(
    ("weights", "says"),
    [(14.99, "1.5-2x lower throughput"), (68.0, "0-3% measured on a 70B"), (40.0, "between")],
)
def test_eager_cost_is_stated_for_the_models_size(weights: float, says: str) -> None:
    d = classify(_log("kv_shortfall__small-gap.log"))
    d = d.model_copy(update={"facts": d.facts.model_copy(update={"model_weights_gib": weights})})
    cfg = BASE.model_copy(update={"max_num_seqs": 32})
    r = _relaunch(
        plan(
            d,
            cfg,
            Policy(
                max_concurrency=30, max_context_cut_before_eager=0, max_gpu_memory_utilization=0.92
            ),
        )
    )
    assert r.step == "enforce_eager"
    assert says in r.degradations[0].message and f"{weights:g} GiB" in r.degradations[0].message


def test_a_small_gap_takes_more_of_the_card_first_where_the_cap_allows() -> None:
    # The log's graph line: 0.92 asked, 0.9557 named (1.2 GiB of graphs): a 33.6 GiB card.
    # 0.92 -> 0.95 (the cap) adds ~1.0 GiB, over the 0.8 gap: context and graphs kept.
    d = classify(_log("kv_shortfall__small-gap.log"))
    assert d.facts.suggested_gpu_memory_utilization == 0.9557
    r = _relaunch(plan(d, BASE, Policy(max_concurrency=30)))
    assert r.step == "lower_max_num_seqs+raise_gpu_memory_utilization"
    assert r.config.gpu_memory_utilization == 0.95 and r.config.max_model_len == 131072
    assert r.expected_to_free_gib == pytest.approx(1.0, abs=0.05)
    assert r.degradations == ()
