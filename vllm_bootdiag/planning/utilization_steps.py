"""Steps that give vLLM more of the card: raise gpu_memory_utilization, up to the
policy's cap, where vLLM's own message names the fix.

`Cannot auto-fit max_model_len` says "Try increasing `gpu_memory_utilization`";
the CPU backend's reservation check (0.33) prints the utilization to exceed.
Under `--max-model-len auto` vLLM subtracts the graph estimate and the profiling
peak before fitting, so a small deficit can also be covered by fewer seqs or
eager mode. Utilization is never lowered here.
"""

from __future__ import annotations

import math

from .. import outcomes
from ..diagnosis import Diagnosis
from ..launch import LaunchConfig
from .card import ONE_TOKEN_GIB, card_gib, raise_step
from .context import Ctx, Step, give_up_memory, memory_advice, update
from .graph_steps import eager_step, graph_keeping_steps
from .memory import effective_gpu_memory_utilization
from .results import GiveUp
from .seqs_steps import lower_seqs_step


def auto_fit_failed(ctx: Ctx) -> list[Step] | GiveUp:
    """Auto-fit found no length: cover the deficit with fewer seqs, more of the card, or
    eager mode, sized where the log says how much is missing; else give up with the
    complete advice (vLLM's own one-flag fix first)."""
    fixed = ctx.config.kv_cache_memory_bytes
    space = ctx.config.env_vars().get("VLLM_CPU_KVCACHE_SPACE")
    if fixed is not None or space:
        what = (
            f"--kv-cache-memory-bytes {fixed}"
            if fixed is not None
            else (f"VLLM_CPU_KVCACHE_SPACE={space}")
        )
        return give_up_memory(
            ctx,
            f"{what} fixes the KV cache below one token: raise it, or unset it so "
            f"gpu_memory_utilization sizes the cache",
        )
    avail = ctx.diagnosis.facts.available_kv_cache_gib
    deficit = round(-avail + ONE_TOKEN_GIB, 3) if avail is not None and avail <= 0 else None
    steps: list[Step] = []
    seqs = lower_seqs_step(ctx, deficit, "frees graph memory auto-fit can use")
    if seqs is not None and deficit is not None:
        steps.append(seqs)
    current = effective_gpu_memory_utilization(ctx.config, ctx.version)
    cap = ctx.policy.max_gpu_memory_utilization
    if current < cap:
        total = card_gib(ctx)
        frees = round((cap - current) * total, 3) if total else None
        if deficit is not None and frees is not None and frees >= deficit:
            steps.append(
                raise_step(
                    ctx,
                    cap,
                    "vLLM's own fix for auto-fit is more gpu_memory_utilization",
                    frees,
                    "from the log: the card's size from the graph-profiling line",
                )
            )
    if deficit is not None:
        steps += graph_keeping_steps(ctx, deficit)
    eager = eager_step(ctx, deficit)
    if eager is not None and deficit is not None:
        steps.append(eager)
    if steps:
        return steps
    advice = (
        f"Raise --gpu-memory-utilization (vLLM's own fix), above {current:g}; this "
        f"policy allows at most {cap:g}.",
        *memory_advice(ctx),
    )
    short = f" ({deficit:g} GiB short)" if deficit is not None else ""
    return GiveUp(
        cause=ctx.diagnosis.primary.kind,
        reason=f"--max-model-len auto found no length that fits, not even one token{short}, "
        f"and no step within the policy covers it",
        advice=advice,
    )


def implied_config(diagnosis: Diagnosis, config: LaunchConfig) -> LaunchConfig:
    """The launch with the utilization the CPU reservation check implies, where the launch
    given does not say it (a tail without vLLM's non-default args): the node is the used
    memory over vLLM's printed minimum, so the reservation over it is the utilization the
    boot had, not the release's GPU default, which would make raising it look a lowering."""
    o = diagnosis.primary
    if (
        not isinstance(o, outcomes.CpuMemoryReservationExceeded)
        or config.gpu_memory_utilization is not None
        or not (o.min_gpu_memory_utilization and o.used_gib and o.reserved_gib)
    ):
        return config
    used = round(o.min_gpu_memory_utilization * o.reserved_gib / o.used_gib, 3)
    return update(config, gpu_memory_utilization=used)


def cpu_reservation(ctx: Ctx) -> list[Step] | GiveUp:
    """The CPU worker outgrew its reservation: raise it above vLLM's printed minimum
    (with room for a KV cache), within the cap; lowering can only make it worse."""
    o = ctx.diagnosis.primary
    assert isinstance(o, outcomes.CpuMemoryReservationExceeded)
    current = effective_gpu_memory_utilization(ctx.config, ctx.version)
    floor = o.min_gpu_memory_utilization
    if floor is None and o.used_gib and o.reserved_gib:
        floor = current * o.used_gib / o.reserved_gib
    cap = ctx.policy.max_gpu_memory_utilization
    kv_hint = (
        f"set the KV size explicitly (--kv-cache-memory-bytes or VLLM_CPU_KVCACHE_SPACE) so "
        f"the worker's {o.used_gib:g} GiB plus the KV cache fit the node"
        if o.used_gib
        else "set the KV size explicitly (--kv-cache-memory-bytes or VLLM_CPU_KVCACHE_SPACE)"
    )
    if floor is not None:
        # Above the minimum by a margin that leaves the KV cache some room.
        target = min(cap, math.ceil(round((floor + 0.05) * 100, 6)) / 100)
        if target > max(floor, current):
            node = o.reserved_gib / current if o.reserved_gib and current else None
            return [
                raise_step(
                    ctx,
                    target,
                    f"the worker already fills its reservation; vLLM asks for more than "
                    f"{floor:.2f}",
                    round((target - current) * node, 3) if node else None,
                    "from the log: the reservation and its utilization",
                )
            ]
    return give_up_memory(
        ctx,
        f"the CPU worker needs more than {floor:.2f} of the node's memory and the policy "
        f"allows {cap:g}: {kv_hint}"
        if floor is not None
        else f"the CPU worker fills its reservation: {kv_hint}",
    )
