"""Steps for a KV cache that cannot hold one request (or any): fewer seqs, a
context cut or eager mode, sized by the numbers vLLM printed.

Fewer seqs costs nothing the worker uses, so plan() adds it to every memory
relaunch (`with_fewer_seqs`); what it frees is a guess, counted conservatively.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import outcomes
from .card import card_gib, raise_step
from .context import Ctx, Step, give_up_memory, round_len, update
from .memory import (
    AUTO_MAX_MODEL_LEN_SINCE,
    DEFAULT_BLOCK_SIZE,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    MAX_CAPTURE_SIZE,
    MIN_BATCHED_TOKENS,
    at_least,
    effective_capture_max,
    effective_gpu_memory_utilization,
    effective_max_num_seqs,
    len_key,
    seqs_for,
)
from .results import GiveUp

GRAPH_SHRINK_CREDIT = 0.5
"""At most this share of the graph figure is counted as freed by fewer seqs: graph
memory does not scale with the largest capture size (on a 70B, graphs at 32 seqs
measured ~0.5x those at 256, where scaling says 0.125x)."""


@dataclass(frozen=True)
class _Seqs:
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


def seqs_cut(ctx: Ctx) -> _Seqs | None:
    """The fewer-seqs change for this launch, or None when seqs is not above the target."""
    conc = ctx.policy.max_concurrency
    target = seqs_for(conc) if conc is not None else ctx.policy.fallback_max_num_seqs
    cfg = ctx.config
    current = effective_max_num_seqs(cfg)
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
        return _Seqs(current, target, conc is not None, None, None, basis)
    printed = ctx.diagnosis.facts.cuda_graph_largest_capture
    cap_old = printed or effective_capture_max(cfg)
    cap_new = min(2 * target, MAX_CAPTURE_SIZE, cap_old)
    share = 1 - cap_new / cap_old
    scaled = round(g * share, 3)
    frees = round(g * min(share, GRAPH_SHRINK_CREDIT), 3)
    basis = (
        f"guess: of the {g:g} GiB graph figure ({graph.basis}), largest capture {cap_old}"
        f"{' as printed' if printed else ''} -> {cap_new}, {frees:g} GiB is counted "
        f"(scaling says {scaled:g}; graphs do not shrink in proportion); the sampler's "
        f"per-sequence memory it also frees is not printed, so not counted"
    )
    return _Seqs(current, target, conc is not None, frees, scaled, basis)


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


def _fit_len(fit: int, length: int, block: int, floor: int) -> int:
    """A fitting length rounded down to 1024 (or the block), below the asked one; an
    exact fit above the floor is kept at the floor rather than lost to the rounding."""
    new_len = min(round_len(fit, block), round_len(length - 1, block))
    if new_len < floor <= min(fit, length - 1):
        new_len = max(floor, min(fit, length - 1) // block * block)
    return new_len


def kv_shortfall(ctx: Ctx) -> list[Step] | GiveUp:
    o = ctx.diagnosis.primary
    assert isinstance(o, outcomes.KvCacheShortfall)
    cfg = ctx.config
    length = o.max_model_len or (cfg.max_model_len if isinstance(cfg.max_model_len, int) else None)
    needed, avail = o.needed_gib, o.available_gib
    gap = needed - avail if needed is not None and avail is not None else None
    steps: list[Step] = []
    # Once the context was shortened, a new shortfall is the estimate's own error (it is
    # not a fixed point): lower again from the new estimate rather than turn graphs off.
    shortened = len_key(cfg.max_model_len) < len_key(ctx.original.max_model_len)
    eager: Step | None = None
    if gap is not None and not shortened:
        s1 = lower_seqs_step(ctx, gap, f"frees enough for the {gap:g} GiB gap")
        if s1:
            steps.append(s1)
        more = _more_of_the_card(ctx, gap)
        if more:
            steps.append(more)
        eager = eager_step(ctx, gap)
    fit, source = _fitting_len(o, length, avail)
    block = cfg.block_size or DEFAULT_BLOCK_SIZE
    floor = ctx.policy.min_max_model_len
    cut: Step | None = None
    later: list[Step] = []
    if fit is not None and length is not None:
        # Sized from vLLM's own figures only: what fewer seqs (added by plan()) frees
        # is a guess, left as slack rather than spent on context.
        new_len = _fit_len(fit, length, block, floor)
        if new_len >= floor:
            cut = Step(
                "lower_max_model_len",
                update(cfg, max_model_len=new_len),
                f"about {fit} tokens fit in the KV cache ({source}); {new_len} is that "
                f"rounded down (asked for {length})",
                round(needed * (1 - new_len / length), 3) if needed else None,
                "KV memory scales with the context length",
            )
        elif ctx.policy.allow_eager and ctx.graph_gib is not None and needed and avail is not None:
            g = ctx.graph_gib
            fit2 = int(length * (avail + g) / needed)
            len2 = _fit_len(fit2, length, block, floor)
            if len2 >= floor:
                later.append(
                    Step(
                        "enforce_eager_and_lower_max_model_len",
                        update(cfg, enforce_eager=True, max_model_len=len2),
                        f"only {fit} tokens fit with CUDA graphs, below the accepted {floor}; "
                        f"eager mode adds {g:g} GiB, enough for {len2}",
                        round(g + needed * (1 - len2 / length), 3),
                        "from the log: graph memory plus KV memory scaled by length",
                    )
                )
    elif (
        fit is None
        and (avail is None or avail > 0)
        and cfg.max_model_len != "auto"
        and at_least(ctx.version, AUTO_MAX_MODEL_LEN_SINCE)
    ):
        later.append(
            Step(
                "auto_max_model_len",
                update(cfg, max_model_len="auto"),
                "the log gives no fitting length; --max-model-len auto lets vLLM "
                "pick the longest that fits",
                None,
                "unknown: vLLM sizes it at boot",
            )
        )
    # A small context cut costs less than eager mode (up to 2x throughput): the policy
    # says how small.
    small_cut = (
        cut is not None
        and length is not None
        and isinstance(cut.config.max_model_len, int)
        and 1 - cut.config.max_model_len / length <= ctx.policy.max_context_cut_before_eager
    )
    ordered = [cut, eager] if small_cut else [eager, cut]
    steps += [s for s in ordered if s is not None] + later
    if steps:
        return steps
    reason = "the KV cache cannot hold one request"
    if length is not None and needed is not None and avail is not None:
        reason = (
            f"one {length}-token request needs {needed:g} GiB of KV cache and "
            f"{avail:g} GiB is available"
        )
        if fit is not None:
            reason += f"; about {fit} tokens fit, below the accepted {floor}"
    return give_up_memory(ctx, reason)


def _more_of_the_card(ctx: Ctx, gap: float) -> Step | None:
    """vLLM's own fix ("Try increasing `gpu_memory_utilization`"), where the asked value
    is under the policy's cap and the card's size (from the graph-profiling line) says
    the rise covers the gap; up to the value that line names, if that covers it."""
    current = effective_gpu_memory_utilization(ctx.config, ctx.version)
    cap = ctx.policy.max_gpu_memory_utilization
    total = card_gib(ctx)
    if total is None or current >= cap:
        return None
    named = ctx.diagnosis.facts.suggested_gpu_memory_utilization
    for target in sorted({t for t in (named, cap) if t is not None and current < t <= cap}):
        frees = round((target - current) * total, 3)
        if frees >= gap:
            return raise_step(
                ctx,
                target,
                f"{frees:g} GiB more of the {total:.1f} GiB card covers the {gap:g} GiB gap",
                frees,
                "from the log: the card's size from the graph-profiling line",
            )
    return None


def _fitting_len(
    o: outcomes.KvCacheShortfall, length: int | None, avail: float | None
) -> tuple[int | None, str]:
    """The longest context that fits, and where that figure comes from: vLLM's
    estimate, the V0 engine's token count, or length * available / needed."""
    if o.estimated_max_model_len is not None:
        return max(o.estimated_max_model_len, 0), "vLLM's estimate"
    if o.kv_cache_tokens is not None:
        return max(o.kv_cache_tokens, 0), "the tokens the KV cache holds"
    if length and o.needed_gib and avail is not None:
        return max(int(length * avail / o.needed_gib), 0), "needed vs available memory"
    return None, ""


def no_kv_memory(ctx: Ctx) -> list[Step] | GiveUp:
    o = ctx.diagnosis.primary
    avail = getattr(o, "available_gib", None)
    gap = -avail if avail is not None and avail <= 0 else None
    steps = [
        s for s in (lower_seqs_step(ctx, gap, "shrinks the graph pool"), eager_step(ctx, gap)) if s
    ]
    mbt = lower_batched_tokens_step(ctx)
    if mbt:
        steps.append(mbt)
    return steps or give_up_memory(
        ctx, "weights and activations leave nothing for the KV cache on this footprint"
    )


def lower_batched_tokens_step(ctx: Ctx) -> Step | None:
    """Halve max_num_batched_tokens: the profiling pass's activation peak shrinks with it."""
    cfg = ctx.config
    current = cfg.max_num_batched_tokens or DEFAULT_MAX_NUM_BATCHED_TOKENS
    floor = max(MIN_BATCHED_TOKENS, cfg.max_num_seqs or 1024)
    target = max(current // 2 // 256 * 256, floor)
    if target >= current:
        return None
    guess = (
        ""
        if cfg.max_num_batched_tokens
        else f" (unset: vLLM's default taken as {DEFAULT_MAX_NUM_BATCHED_TOKENS})"
    )
    return Step(
        "lower_max_num_batched_tokens",
        update(cfg, max_num_batched_tokens=target),
        f"the profiling forward pass runs max_num_batched_tokens tokens at once; "
        f"{target} instead of {current}{guess} lowers its activation peak",
        None,
        "guess: the activation peak scales with the batched tokens",
    )
