"""What a launch asks of memory, per vLLM release: the values vLLM uses where the
config leaves a setting unset, and an order on configs by memory.

Every relaunch must need strictly less memory than the launch it follows (a
property test holds the planner to it), so "less" is defined here, once.
"""

from __future__ import annotations

import math

from packaging.version import Version

from ..launch import LaunchConfig
from .releases import graph_sets

DEFAULT_MAX_NUM_SEQS = 256
"""vLLM's default on most GPUs (1024 on >=70 GiB cards in newer releases; both
give the same default largest capture size, 512)."""
DEFAULT_BLOCK_SIZE = 16
MAX_CAPTURE_SIZE = 512
AUTO_MAX_MODEL_LEN_SINCE = Version("0.14")
GPU_UTIL_092_SINCE = Version("0.20")
MIN_BATCHED_TOKENS = 256


def at_least(version: Version | None, floor: Version) -> bool:
    return version is not None and version >= floor


def effective_gpu_memory_utilization(config: LaunchConfig, version: Version | None) -> float:
    """The explicit value, else the release's default (0.9; 0.92 from 0.20, assumed
    when the version is unknown, the larger of the two)."""
    if config.gpu_memory_utilization is not None:
        return config.gpu_memory_utilization
    if version is not None and version < GPU_UTIL_092_SINCE:
        return 0.9
    return 0.92


def effective_max_num_seqs(config: LaunchConfig) -> int:
    return config.max_num_seqs if config.max_num_seqs is not None else DEFAULT_MAX_NUM_SEQS


def effective_capture_max(config: LaunchConfig) -> int:
    """The largest CUDA-graph batch size: 0 in eager mode, else explicit, else
    min(2 * max_num_seqs, 512)."""
    if config.enforce_eager:
        return 0
    if config.max_cudagraph_capture_size is not None:
        return config.max_cudagraph_capture_size
    if config.cudagraph_capture_sizes:
        return max(config.cudagraph_capture_sizes)
    return min(2 * effective_max_num_seqs(config), MAX_CAPTURE_SIZE)


def seqs_for(concurrency: int) -> int:
    """max_num_seqs for a worker that runs `concurrency` requests at once: rounded
    up to a multiple of 8, the step of vLLM's capture sizes (30 -> 32)."""
    return max(8, math.ceil(concurrency / 8) * 8)


def recommend_defaults(concurrency: int, base: LaunchConfig | None = None) -> LaunchConfig:
    """The launch a worker should start from: max_num_seqs tied to its concurrency.

    vLLM's default (256, or 1024 on large cards) sizes CUDA graphs and the
    sampler warm-up for batches the worker never sends; at the worker's own
    concurrency the graphs are kept, throughput is the same, the boot is faster
    and more memory is left for context, so fewer boots need a relaunch at all.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    config = base if base is not None else LaunchConfig()
    return config.model_copy(update={"max_num_seqs": seqs_for(concurrency)})


def len_key(value: int | str | None) -> float:
    """Order max_model_len by memory: unset (the model's full context) is the most,
    `auto` the least (it fits whatever is left)."""
    if value is None:
        return math.inf
    if value == "auto":
        return 0.0
    return float(value)


def memory_dimensions(config: LaunchConfig, version: Version | None) -> dict[str, float]:
    """Each launch setting that moves memory, as a number where lower needs less."""
    return {
        "max_model_len": len_key(config.max_model_len),
        "gpu_memory_utilization": effective_gpu_memory_utilization(config, version),
        "max_num_seqs": float(effective_max_num_seqs(config)),
        "max_num_batched_tokens": float(config.max_num_batched_tokens)
        if config.max_num_batched_tokens is not None
        else math.inf,
        "cuda_graph_capture": float(effective_capture_max(config)),
        "cuda_graph_sets": float(graph_sets(config, version)),
        "kv_cache_memory_bytes": float(config.kv_cache_memory_bytes)
        if config.kv_cache_memory_bytes is not None
        else math.inf,
    }


def needs_less_memory(
    old: LaunchConfig, new: LaunchConfig, version: Version | None, raised: bool = False
) -> bool:
    """True when `new` is no larger than `old` in every memory setting and smaller in one.

    `raised`: a step that gives vLLM more of the card (a higher gpu_memory_utilization,
    vLLM's own fix for some failures) counts that rise as the progress, every other
    setting still no larger."""
    a, b = memory_dimensions(old, version), memory_dimensions(new, version)
    util = "gpu_memory_utilization"
    if raised:
        rest = [k for k in a if k != util]
        return b[util] > a[util] and all(b[k] <= a[k] for k in rest)
    return all(b[k] <= a[k] for k in a) and any(b[k] < a[k] for k in a)
