"""Steps for a KV cache that cannot hold one request (or any), sized by the numbers
vLLM printed, in the order of what they cost: fewer seqs (free), more of the card
(within the policy), graphs kept but fewer (graph_steps.py), a small context cut
where the policy prefers it to eager, eager mode, then a larger context cut.

Fewer seqs costs nothing the worker uses, so plan() adds it to every memory
relaunch (`with_fewer_seqs`); what it frees is a guess, counted conservatively.
"""

from __future__ import annotations

from .. import outcomes
from .card import card_gib, card_total_gib, raise_step
from .context import Ctx, Step, give_up_memory, round_len, update
from .graph_steps import eager_step, graph_keeping_steps
from .memory import (
    AUTO_MAX_MODEL_LEN_SINCE,
    DEFAULT_BLOCK_SIZE,
    MIN_BATCHED_TOKENS,
    at_least,
    effective_gpu_memory_utilization,
    len_key,
)
from .releases import default_batched_tokens
from .results import GiveUp
from .seqs_steps import lower_seqs_step


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
    keeping: list[Step] = []
    if gap is not None and not shortened:
        s1 = lower_seqs_step(ctx, gap, f"frees enough for the {gap:g} GiB gap")
        if s1:
            steps.append(s1)
        more = _more_of_the_card(ctx, gap)
        if more:
            steps.append(more)
        keeping = graph_keeping_steps(ctx, gap)
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
    ordered = [*keeping, cut, eager] if small_cut else [*keeping, eager, cut]
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
    seqs = lower_seqs_step(ctx, gap, "shrinks the graph pool")
    steps = [s for s in (seqs, *graph_keeping_steps(ctx, gap), eager_step(ctx, gap)) if s]
    mbt = lower_batched_tokens_step(ctx)
    if mbt:
        steps.append(mbt)
    return steps or give_up_memory(
        ctx, "weights and activations leave nothing for the KV cache on this footprint"
    )


def lower_batched_tokens_step(ctx: Ctx) -> Step | None:
    """Halve max_num_batched_tokens: the profiling pass's activation peak shrinks with it."""
    cfg = ctx.config
    if cfg.max_num_batched_tokens:
        current, guess = cfg.max_num_batched_tokens, ""
    else:
        default = default_batched_tokens(
            ctx.version,
            ctx.diagnosis.facts.device,
            card_total_gib(ctx),
            cfg.tensor_parallel_size or 1,
            ctx.diagnosis.facts.max_num_batched_tokens,
        )
        current, guess = default.tokens, f" (unset: {default.basis})"
    floor = max(MIN_BATCHED_TOKENS, cfg.max_num_seqs or 1024)
    target = max(current // 2 // 256 * 256, floor)
    if target >= current:
        return None
    return Step(
        "lower_max_num_batched_tokens",
        update(cfg, max_num_batched_tokens=target),
        f"the profiling forward pass runs max_num_batched_tokens tokens at once; "
        f"{target} instead of {current}{guess} lowers its activation peak",
        None,
        "guess: the activation peak scales with the batched tokens",
    )
