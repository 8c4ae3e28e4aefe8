"""The launch values vLLM rejects at startup, checked before a launch is planned
or made: a relaunch of such values would fail the same way whatever the log says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .launch_names import CUDAGRAPH_MODES

if TYPE_CHECKING:
    from .launch import LaunchConfig


def launch_problems(c: LaunchConfig) -> list[str]:
    """Values vLLM would reject at startup, as sentences (empty when none)."""
    out: list[str] = []
    g = c.gpu_memory_utilization
    if g is not None and not 0 < g <= 1:
        out.append(f"gpu_memory_utilization {g} is not in (0, 1]")
    for name in ("max_num_seqs", "max_num_batched_tokens", "tensor_parallel_size", "block_size"):
        v = getattr(c, name)
        if v is not None and v < 1:
            out.append(f"{name} {v} is below 1")
    if isinstance(c.max_model_len, int) and c.max_model_len < 1:
        out.append(f"max_model_len {c.max_model_len} is below 1")
    if c.max_cudagraph_capture_size is not None and c.max_cudagraph_capture_size < 1:
        out.append("max_cudagraph_capture_size is below 1")
    if c.cudagraph_capture_sizes is not None and any(s < 1 for s in c.cudagraph_capture_sizes):
        out.append("a cudagraph capture size is below 1")
    if c.cudagraph_mode is not None and c.cudagraph_mode not in CUDAGRAPH_MODES:
        out.append(f"cudagraph_mode {c.cudagraph_mode[:40]!r} is not one of vLLM's modes")
    if c.kv_cache_memory_bytes is not None and c.kv_cache_memory_bytes < 1:
        out.append("kv_cache_memory_bytes is below 1")
    if c.port is not None and not 0 < c.port < 65536:
        out.append(f"port {c.port} is not in 1-65535")
    mbt = c.max_num_batched_tokens
    if c.max_num_seqs is None and mbt is not None and mbt < 256:
        out.append(f"max_num_batched_tokens {mbt} is below vLLM's default max_num_seqs (256)")
    if c.max_num_seqs is not None and mbt is not None and mbt < c.max_num_seqs:
        out.append(f"max_num_batched_tokens {mbt} is below max_num_seqs {c.max_num_seqs}")
    return out
