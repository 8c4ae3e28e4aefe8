"""Steps for out-of-memory failures outside the KV check: graph capture, the
profiling pass, free memory below the asked share, weights that do not fit."""

from __future__ import annotations

import math

from .. import outcomes
from .context import Ctx, Step, give_up_memory, memory_advice, update
from .graph_steps import piecewise_for_oom, smaller_capture_for_oom
from .kv_steps import lower_batched_tokens_step
from .memory import (
    effective_gpu_memory_utilization,
)
from .results import GiveUp
from .seqs_steps import lower_seqs_step


def graph_capture_oom(ctx: Ctx) -> list[Step] | GiveUp:
    cfg = ctx.config
    steps: list[Step] = []
    s1 = lower_seqs_step(ctx, None, "captures smaller graphs")
    if s1:
        steps.append(s1)
    smaller = smaller_capture_for_oom(ctx)
    if smaller:
        steps.append(smaller)
    piecewise = piecewise_for_oom(ctx)
    if piecewise:
        steps.append(piecewise)
    if ctx.policy.allow_eager and not cfg.enforce_eager:
        steps.append(
            Step(
                "enforce_eager",
                update(cfg, enforce_eager=True),
                "eager mode captures no CUDA graphs at all",
                None,
                "all of the graph pool",
            )
        )
    if steps:
        return steps
    advice = (
        "Lower --gpu-memory-utilization so the KV cache leaves room for the graphs "
        "(vLLM's own hint).",
        *memory_advice(ctx),
    )
    return GiveUp(
        cause=ctx.diagnosis.primary.kind,
        reason="CUDA-graph capture ran out of memory and eager mode is not allowed or already on",
        advice=advice,
    )


def profiling_oom(ctx: Ctx) -> list[Step] | GiveUp:
    o = ctx.diagnosis.primary
    steps: list[Step] = []
    # The sampler warm-up wraps the torch OOM: either line may be the primary.
    sampler = any(
        isinstance(m, outcomes.ProfilingOom) and m.dummy_requests is not None
        for m in (o, *ctx.diagnosis.matches)
    )
    if sampler:
        s = lower_seqs_step(
            ctx, None, "warms the sampler up with fewer dummy requests", for_graphs=False
        )
        if s:
            steps.append(s)
    mbt = lower_batched_tokens_step(ctx)
    if mbt:
        steps.append(mbt)
    return steps or give_up_memory(
        ctx, "the profiling pass ran out of memory at the smallest batched-token setting"
    )


def insufficient_free(ctx: Ctx) -> list[Step] | GiveUp:
    o = ctx.diagnosis.primary
    assert isinstance(o, outcomes.InsufficientFreeMemory)
    lowered = effective_gpu_memory_utilization(
        ctx.config, ctx.version
    ) < effective_gpu_memory_utilization(ctx.original, ctx.version)
    if "lower_gpu_memory_utilization" in ctx.steps_taken() or lowered:
        return give_up_memory(
            ctx,
            "less memory is free than asked for, again after lowering "
            "gpu_memory_utilization once: another process holds it",
        )
    if o.gpu_memory_utilization is None and o.requested_gib is not None and o.free_gib:
        return _kv_request_over_free(ctx, o)
    if o.free_gib is None or not o.total_gib:
        return give_up_memory(
            ctx, "less memory is free than asked for, and the log does not say how much is free"
        )
    target = math.floor((o.free_gib / o.total_gib - 0.02) * 100) / 100
    current = effective_gpu_memory_utilization(ctx.config, ctx.version)
    if target < 0.05 or target >= current:
        return give_up_memory(ctx, f"only {o.free_gib:g} of {o.total_gib:g} GiB is free")
    return [
        Step(
            "lower_gpu_memory_utilization",
            update(ctx.config, gpu_memory_utilization=target),
            f"{o.free_gib:g} of {o.total_gib:g} GiB is free at startup; ask for {target:g} "
            f"instead of {current:g}",
            round((current - target) * o.total_gib, 3),
            "from the log: free and total memory",
        )
    ]


def _kv_request_over_free(ctx: Ctx, o: outcomes.InsufficientFreeMemory) -> list[Step] | GiveUp:
    """A fixed KV-cache size (--kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE) above what
    is free: shrink the explicit flag to fit, once; an env var is the worker's to change."""
    assert o.free_gib is not None and o.requested_gib is not None
    fits_gib = math.floor(o.free_gib * 0.9 * 100) / 100
    cfg = ctx.config
    if cfg.kv_cache_memory_bytes is None or "lower_kv_cache_memory_bytes" in ctx.steps_taken():
        return give_up_memory(
            ctx,
            f"the KV cache asks for {o.requested_gib:g} GiB and only "
            f"{o.free_gib:g} GiB is free: set VLLM_CPU_KVCACHE_SPACE or "
            f"--kv-cache-memory-bytes to at most {fits_gib:g} GiB",
        )
    target = min(int(fits_gib * 2**30), cfg.kv_cache_memory_bytes - 1)
    if target < 1:
        return give_up_memory(ctx, f"only {o.free_gib:g} GiB is free")
    return [
        Step(
            "lower_kv_cache_memory_bytes",
            update(cfg, kv_cache_memory_bytes=target),
            f"the KV cache asks for {o.requested_gib:g} GiB and {o.free_gib:g} GiB is "
            f"free; ask for {fits_gib:g} GiB",
            round(o.requested_gib - fits_gib, 3),
            "from the log: free memory and the KV request",
        )
    ]


def no_relaunch_fits(ctx: Ctx) -> GiveUp:
    o = ctx.diagnosis.primary
    reason = {
        "auto_fit_failed": "--max-model-len auto found no length that fits, not even one "
        "token: no relaunch on this footprint can fit it",
        "weight_load_oom": "the weights alone do not fit: no launch flag shrinks them",
    }.get(o.kind, o.summary())
    return give_up_memory(ctx, reason)
