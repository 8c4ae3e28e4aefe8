"""Fewer seqs: max_num_seqs down to the worker's concurrency.

It costs nothing the worker uses (throughput matched at 1/8/30 requests on 0.32),
so plan() adds it to every memory relaunch (`with_fewer_seqs`). What it frees is a
guess (smaller graphs, a smaller sampler warm-up), counted conservatively.
"""

from __future__ import annotations

from dataclasses import dataclass

from .context import Ctx, Step, update
from .graphs import graph_share
from .memory import MAX_CAPTURE_SIZE, effective_capture_max, effective_max_num_seqs, seqs_for
from .releases import default_max_num_seqs


@dataclass(frozen=True)
class SeqsCut:
    """max_num_seqs down to the worker's concurrency, and what that frees."""

    current: int
    target: int
    known: bool
    """The concurrency came from the policy (else the fallback is a guess)."""
    frees: float | None
    """The graph memory counted as freed (conservative), None without a graph figure."""
    scaled: float | None
    """The same figure scaled by the largest capture size (an upper guess)."""
    basis: str

    def why(self, conc: int | None) -> str:
        if self.known:
            return f"max_num_seqs {self.current} is above the {conc} requests the worker runs"
        return (
            f"max_num_seqs {self.current} -> {self.target}, the fallback for an unknown "
            f"concurrency (set MAX_CONCURRENCY)"
        )


def seqs_target(ctx: Ctx) -> int:
    """max_num_seqs for the worker: its concurrency rounded up to 8, else the fallback."""
    conc = ctx.policy.max_concurrency
    return seqs_for(conc) if conc is not None else ctx.policy.fallback_max_num_seqs


def largest_capture(ctx: Ctx) -> int:
    """The largest batch the failed boot captured: as printed, else as configured."""
    return ctx.diagnosis.facts.cuda_graph_largest_capture or effective_capture_max(ctx.config)


def seqs_cut(ctx: Ctx) -> SeqsCut | None:
    """The fewer-seqs change for this launch, or None when seqs is not above the target."""
    conc = ctx.policy.max_concurrency
    target = seqs_target(ctx)
    cfg = ctx.config
    current = effective_max_num_seqs(cfg)
    if cfg.max_num_seqs is None:
        # The release's real default: on the CPU backend 128 x ranks, not 256, and a
        # "cut" to the concurrency above it would raise it.
        current = default_max_num_seqs(
            ctx.version, ctx.diagnosis.facts.device, cfg.tensor_parallel_size or 1
        )
    if target >= current:
        return None
    graph = ctx.graph
    g = graph.reserved_gib
    explicit = cfg.max_cudagraph_capture_size is not None or bool(cfg.cudagraph_capture_sizes)
    if g is None or explicit:
        basis = (
            "guess: the capture sizes are set explicitly, fewer seqs leaves them"
            if g is not None
            else f"guess: no graph memory counted ({graph.basis})"
        )
        return SeqsCut(current, target, conc is not None, None, None, basis)
    printed = ctx.diagnosis.facts.cuda_graph_largest_capture
    cap_old = largest_capture(ctx)
    cap_new = min(2 * target, MAX_CAPTURE_SIZE, cap_old)
    scaled = round(g * (1 - cap_new / cap_old), 3)
    frees = round(g * (1 - graph_share(cap_new, cap_old)), 3)
    basis = (
        f"guess: of the {g:g} GiB graph figure ({graph.basis}), largest capture {cap_old}"
        f"{' as printed' if printed else ''} -> {cap_new}, {frees:g} GiB is counted "
        f"(scaling says {scaled:g}; graphs do not shrink in proportion); the sampler's "
        f"per-sequence memory it also frees is not printed, so not counted"
    )
    return SeqsCut(current, target, conc is not None, frees, scaled, basis)


def lower_seqs_step(ctx: Ctx, gap: float | None, why: str, for_graphs: bool = True) -> Step | None:
    """max_num_seqs down to the worker's concurrency alone: graphs kept, the pool shrinks
    (and the sampler warm-up runs fewer dummy requests, eager or not). With a gap it is
    proposed alone only where its conservative figure covers the gap; elsewhere plan()
    adds it to whatever else the gap needs."""
    cfg = ctx.config
    s = seqs_cut(ctx)
    if s is None or (for_graphs and cfg.enforce_eager):
        return None
    if gap is not None and (s.frees is None or s.frees < gap):
        return None
    return Step(
        "lower_max_num_seqs",
        update(cfg, max_num_seqs=s.target),
        f"{s.why(ctx.policy.max_concurrency)}; {s.target} "
        f"{'still ' if cfg.enforce_eager else 'keeps CUDA graphs and '}{why}",
        s.frees,
        s.basis,
    )


def with_fewer_seqs(ctx: Ctx, step: Step) -> Step:
    """`step` with max_num_seqs at the concurrency too, where seqs is above it: fewer
    seqs costs nothing the worker uses and frees memory (graphs, sampler warm-up)."""
    s = seqs_cut(ctx)
    if s is None or effective_max_num_seqs(step.config) <= s.target:
        return step
    return Step(
        f"lower_max_num_seqs+{step.name}",
        update(step.config, max_num_seqs=s.target),
        f"{step.reason}; and {s.why(ctx.policy.max_concurrency)}: {s.target} frees more "
        f"(smaller graphs, a smaller sampler warm-up) at no cost",
        step.frees_gib,
        step.estimate,
    )
