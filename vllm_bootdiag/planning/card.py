"""More of the card: the card's size as the log implies it, and the step that raises
gpu_memory_utilization (never above the policy's cap, never below what was asked)."""

from __future__ import annotations

from .context import Ctx, Step, update
from .memory import effective_gpu_memory_utilization

RAISE = "raise_gpu_memory_utilization"
ONE_TOKEN_GIB = 0.01
"""What `not enough ... to serve even a single token` needs at the least: one block."""


def card_gib(ctx: Ctx) -> float | None:
    """The card's memory, from the graph-profiling line: the utilization it suggests is
    the asked one plus estimate / total (gpu_worker.py), so total = estimate / delta."""
    f = ctx.diagnosis.facts
    figure = f.cuda_graph_estimate_gib or f.cuda_graph_gib
    now, suggested = f.graph_profiling_gpu_memory_utilization, f.suggested_gpu_memory_utilization
    if not figure or now is None or suggested is None or not now < suggested < 1.0:
        return None
    return figure / (suggested - now + 0.00005)  # the delta is rounded to 4 places: err low


def card_total_gib(ctx: Ctx) -> float | None:
    """The card's memory from any line that gives it: the graph-profiling line, else the
    failure's own `total capacity` / total figure."""
    total = card_gib(ctx)
    if total is not None:
        return total
    o = ctx.diagnosis.primary
    for name in ("total_capacity_gib", "total_gib"):
        value = getattr(o, name, None)
        if isinstance(value, (int, float)) and value > 0:
            return float(value)
    return None


def raise_step(ctx: Ctx, target: float, why: str, frees: float | None, basis: str) -> Step:
    current = effective_gpu_memory_utilization(ctx.config, ctx.version)
    return Step(
        RAISE,
        update(ctx.config, gpu_memory_utilization=target),
        f"{why}: gpu_memory_utilization {current:g} -> {target:g} (the policy's cap is "
        f"{ctx.policy.max_gpu_memory_utilization:g})",
        frees,
        basis,
    )
