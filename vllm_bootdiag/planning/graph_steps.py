"""Steps that give back CUDA-graph memory, cheapest first: graphs only up to the
worker's own batch, piecewise graphs only, then eager mode (no graphs at all).

The first two keep torch.compile and the graphs the worker's batches use; eager
(from 0.32 also torch.compile off, config/vllm.py:1691-1693) costs ~1.5-2x
throughput on small models. Each is offered only where the release has the
setting (releases.py) and where vLLM took the graph memory from the KV budget
before the check (graphs.py): elsewhere it frees nothing the check saw.
"""

from __future__ import annotations

from typing import Any

from .context import Ctx, Step, update
from .graphs import FULL_GRAPHS_SHARE, graph_share
from .memory import MAX_CAPTURE_SIZE, effective_capture_max, effective_max_num_seqs
from .releases import (
    CUDAGRAPH_MODE_SINCE,
    capture_size_fields,
    compilation_steered,
    default_cudagraph_mode,
    graph_sets,
    has,
)
from .seqs_steps import largest_capture, seqs_cut

CAPTURE_STEP = "smaller_cudagraph_capture_size"
PIECEWISE_STEP = "piecewise_cudagraphs"


def graph_keeping_steps(ctx: Ctx, gap: float | None) -> list[Step]:
    """Graph-keeping steps before eager, each counted with the fewer seqs plan() adds
    to it, and offered where that count covers `gap` (all of them when the gap is not
    known), cheapest first: a smaller largest capture, PIECEWISE, then both."""
    cfg = ctx.config
    g = ctx.graph.reserved_gib
    if g is None or cfg.enforce_eager or compilation_steered(cfg):
        return []
    cut = seqs_cut(ctx)
    seqs = cut.target if cut is not None else effective_max_num_seqs(cfg)
    cap_old = largest_capture(ctx)
    cap_seqs = min(effective_capture_max(cfg), 2 * seqs, MAX_CAPTURE_SIZE, cap_old)
    base = g * (1 - graph_share(cap_seqs, cap_old))
    candidates: list[tuple[str, dict[str, Any], float, str]] = []
    capture = _capture_change(ctx, seqs, cap_seqs)
    mode = _piecewise_change(ctx)
    if capture is not None:
        fields, new_cap = capture
        frees = g * (1 - graph_share(new_cap, cap_old))
        candidates.append((CAPTURE_STEP, fields, frees, _capture_why(cap_seqs, new_cap)))
    if mode is not None:
        frees = g * (1 - graph_share(cap_seqs, cap_old) * (1 - FULL_GRAPHS_SHARE))
        candidates.append((PIECEWISE_STEP, mode, frees, _piecewise_why(ctx)))
    if capture is not None and mode is not None:
        fields, new_cap = capture
        frees = g * (1 - graph_share(new_cap, cap_old) * (1 - FULL_GRAPHS_SHARE))
        why = f"{_capture_why(cap_seqs, new_cap)}; and {_piecewise_why(ctx)}"
        candidates.append((f"{CAPTURE_STEP}+{PIECEWISE_STEP}", {**fields, **mode}, frees, why))
    steps: list[Step] = []
    for name, fields, frees, why in candidates:
        frees = round(frees, 3)
        if frees <= round(base, 3) or (gap is not None and frees < gap):
            continue
        cover = f", counted to cover the {gap:g} GiB gap" if gap is not None else ""
        steps.append(
            Step(
                name,
                update(cfg, **fields),
                f"{why}{cover}",
                frees,
                f"guess: of the {ctx.graph.at_least}{g:g} GiB graph figure ({ctx.graph.basis}), "
                f"{frees:g} GiB counted{' with fewer seqs' if cut else ''} (graph memory taken as "
                f"3/7 fixed + 4/7 scaling with the largest capture; the full decode graphs "
                f"as a quarter of it)",
            )
        )
    return steps


def _capture_change(ctx: Ctx, seqs: int, cap_seqs: int) -> tuple[dict[str, Any], int] | None:
    """Capture graphs only up to the worker's max_num_seqs (decode batches never exceed
    it); None where that is no smaller, or the release has no way to say it."""
    new_cap = max(8, seqs)
    if new_cap >= cap_seqs:
        return None
    fields = capture_size_fields(ctx.config, ctx.version, new_cap)
    return (fields, new_cap) if fields is not None else None


def _capture_why(cap: int, new_cap: int) -> str:
    return (
        f"CUDA graphs captured up to batch {new_cap} instead of {cap}: keeps torch.compile "
        f"and a graph for every decode batch the worker runs; only mixed prefill batches "
        f"of more than {new_cap} tokens run without one"
    )


def _piecewise_change(ctx: Ctx) -> dict[str, Any] | None:
    """cudagraph_mode PIECEWISE where the launch captures two sets (FULL_AND_PIECEWISE,
    the default from 0.11.0) and the release has the setting (0.10.1)."""
    if not has(ctx.version, CUDAGRAPH_MODE_SINCE) or graph_sets(ctx.config, ctx.version) < 2:
        return None
    return {"cudagraph_mode": "PIECEWISE"}


def _piecewise_why(ctx: Ctx) -> str:
    mode = ctx.config.cudagraph_mode or default_cudagraph_mode(ctx.version)
    return (
        f"cudagraph_mode PIECEWISE instead of {mode}: keeps torch.compile and piecewise "
        f"CUDA graphs for every batch size, drops the full decode graphs (costs some "
        f"decode speed, attention running between graph pieces; far less than eager mode)"
    )


def piecewise_for_oom(ctx: Ctx) -> Step | None:
    """Graph capture ran out of memory: capture one set of graphs instead of two."""
    mode = _piecewise_change(ctx)
    if mode is None or ctx.config.enforce_eager or compilation_steered(ctx.config):
        return None
    return Step(
        PIECEWISE_STEP,
        update(ctx.config, **mode),
        f"{_piecewise_why(ctx)}: one set of graphs to capture instead of two",
        None,
        "guess: the full decode graphs' share of the graph pool",
    )


def smaller_capture_for_oom(ctx: Ctx) -> Step | None:
    """Graph capture itself ran out of memory: halve the largest capture, in the way
    this release accepts (max_cudagraph_capture_size from 0.11.1, a size list before)."""
    cfg, orig = ctx.config, ctx.original
    cap = effective_capture_max(cfg)
    if cap <= 8 or effective_capture_max(orig) != cap:
        return None
    half = max(8, cap // 2 // 8 * 8)
    fields = capture_size_fields(cfg, ctx.version, half)
    if fields is None:
        fields = {"max_cudagraph_capture_size": half}
        if cfg.cudagraph_capture_sizes:
            fields["cudagraph_capture_sizes"] = tuple(
                s for s in cfg.cudagraph_capture_sizes if s <= half
            ) or (half,)
    return Step(
        "smaller_capture_sizes",
        update(cfg, **fields),
        f"capture CUDA graphs up to batch {half} instead of {cap}: a smaller graph pool",
        None,
        "guess: the graph pool scales with the largest capture size",
    )


def eager_step(ctx: Ctx, gap: float | None) -> Step | None:
    """Eager mode, where the graph memory vLLM subtracted before the KV check covers
    `gap`: where it printed a figure but did not subtract it, eager frees nothing."""
    graph = ctx.graph
    g = graph.reserved_gib
    if not ctx.policy.allow_eager or ctx.config.enforce_eager or g is None:
        return None
    if gap is not None and g < gap:
        return None
    return Step(
        "enforce_eager",
        update(ctx.config, enforce_eager=True),
        f"eager mode returns the {graph.at_least}{g:g} GiB reserved for CUDA graphs to the KV "
        f"cache" + (f", covering the {gap:g} GiB gap" if gap is not None else ""),
        g,
        f"from the log: {graph.basis}",
    )
