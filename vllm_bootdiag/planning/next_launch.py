"""plan(): the next launch after a failed boot, or why to stop.

Each outcome kind has a handler; a handler proposes steps in order, sized from
the log, and plan() takes the first one that is valid for vLLM, new, needs less
memory and fits the budget. A kind without a handler is planned by its outcome
class's PLAN ("memory", "give_up", "restart_once").

Invariants (property-tested): no relaunch beyond the budget, no config twice
(the one exception is a single plain restart after an unexplained failure,
which counts against the budget), every other relaunch needs strictly less
memory, and every value is one vLLM accepts.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import outcomes, versions
from ..diagnosis import Diagnosis
from ..launch import LaunchConfig
from .budget import budget_spent
from .card import RAISE
from .context import Ctx, Handler, Step, give_up_memory, memory_advice, update
from .degradations import degradations
from .fitted import fitted_below_minimum
from .kv_steps import kv_shortfall, no_kv_memory
from .memory import (
    effective_gpu_memory_utilization,
    needs_less_memory,
)
from .oom_steps import graph_capture_oom, insufficient_free, no_relaunch_fits, profiling_oom
from .other_steps import config_or_access, restart
from .policy import Policy
from .results import Attempt, Change, GiveUp, NothingToPlan, Relaunch
from .seqs_steps import with_fewer_seqs
from .utilization_steps import auto_fit_failed, cpu_reservation, implied_config

HANDLERS: dict[str, Handler] = {
    "kv_cache_shortfall": kv_shortfall,
    "no_kv_cache_memory": no_kv_memory,
    "auto_fit_failed": auto_fit_failed,
    "cpu_memory_reservation_exceeded": cpu_reservation,
    "weight_load_oom": no_relaunch_fits,
    "cuda_graph_capture_oom": graph_capture_oom,
    "profiling_oom": profiling_oom,
    "insufficient_free_memory": insufficient_free,
    "max_model_len_exceeds_model": config_or_access,
    "invalid_argument": config_or_access,
    "unsupported_architecture": config_or_access,
    "model_not_found": config_or_access,
    "gated_model": config_or_access,
    "revision_not_found": config_or_access,
    "disk_full": config_or_access,
    "engine_died": restart,
    "unknown": restart,
}
"""Outcome kind -> handler. A kind not listed is planned by its class's PLAN."""


def _memory_without_handler(ctx: Ctx) -> GiveUp:
    """A memory kind the planner has no steps for yet: the memory advice, never a guess."""
    return give_up_memory(ctx, ctx.diagnosis.primary.summary())


BY_PLAN: dict[str, Handler] = {
    "memory": _memory_without_handler,
    "give_up": config_or_access,
    "restart_once": restart,
}
"""The outcome class's PLAN -> the handler for a kind without one of its own."""


def handler_for(outcome: object) -> Handler:
    """The kind's own handler, else the one its class's PLAN names (give up if none)."""
    kind = getattr(outcome, "kind", "")
    if kind in HANDLERS:
        return HANDLERS[kind]
    return BY_PLAN.get(getattr(type(outcome), "PLAN", "give_up"), config_or_access)


def _vet(ctx: Ctx, step: Step, tried: set[LaunchConfig]) -> LaunchConfig | None:
    """The step's config under the policy's gpu_memory_utilization cap, or None when it
    repeats a config, is not valid for vLLM, or does not lower memory."""
    cfg = step.config
    # A step may raise utilization up to the cap; an asked value above it stays as asked.
    cap = max(
        ctx.policy.max_gpu_memory_utilization,
        effective_gpu_memory_utilization(ctx.config, ctx.version),
    )
    if effective_gpu_memory_utilization(cfg, ctx.version) > cap:
        cfg = update(cfg, gpu_memory_utilization=cap)
    if cfg.problems():
        return None
    if step.name == "restart" and cfg == ctx.config:
        return cfg
    raised = RAISE in step.name.split("+")
    if cfg in tried or not needs_less_memory(ctx.config, cfg, ctx.version, raised):
        return None
    return cfg


def plan(
    diagnosis: Diagnosis,
    config: LaunchConfig,
    policy: Policy | None = None,
    history: Sequence[Attempt] = (),
) -> Relaunch | GiveUp:
    """The next launch after the boot `diagnosis` describes, or why to stop.

    `config` is the launch that produced the log. `history` is every launch made
    so far, oldest first; it may end with `config`'s own attempt (the supervisor
    passes it so) or not, and `config` counts as launched either way.
    Raises NothingToPlan when the diagnosis shows a boot that succeeded, unless vLLM's
    auto-fit booted it on a context below `policy.min_max_model_len`: that is a
    GiveUp (cause `auto_fit_below_minimum`, see fitted.py).
    """
    policy = policy or Policy()
    if diagnosis.primary.kind == "booted":
        short = fitted_below_minimum(diagnosis, config, policy)
        if short is not None:
            return short
        raise NothingToPlan("the boot succeeded: nothing to relaunch")
    invalid = config.problems()
    if invalid and diagnosis.primary.category != outcomes.Category.CONFIG:
        # A relaunch of these values would fail the same way, whatever the log says.
        return GiveUp(
            cause="invalid_launch",
            reason="the launch has values vLLM rejects: " + "; ".join(invalid),
            advice=tuple(f"Fix it: {p}." for p in invalid),
        )
    hist = tuple(history)
    if not hist or hist[-1].config != config:
        hist = (*hist, Attempt(config=config, outcome=diagnosis.primary.kind))
    version = versions.parse_version(diagnosis.vllm_version) if diagnosis.vllm_version else None
    ctx = Ctx(diagnosis, implied_config(diagnosis, config), policy, hist, version)
    result = handler_for(diagnosis.primary)(ctx)
    if isinstance(result, GiveUp):
        return result
    tried = {a.config for a in hist}
    memory = diagnosis.primary.category == outcomes.Category.MEMORY
    # The CPU reservation check names its own fix (more of the node, or an explicit KV
    # size): the relaunch does that, and cuts no concurrency vLLM did not ask to cut.
    own_fix = isinstance(diagnosis.primary, outcomes.CpuMemoryReservationExceeded)
    for step in result:
        if memory and not own_fix:
            step = with_fewer_seqs(ctx, step)
        cfg = _vet(ctx, step, tried)
        if cfg is None:
            continue
        spent = budget_spent(ctx, len(hist), cfg)
        if spent is not None:
            advice: tuple[str, ...] = (
                f"The next step would have been {step.name}: {step.reason}.",
            )
            if diagnosis.primary.category == outcomes.Category.MEMORY:
                advice += memory_advice(ctx)
            return GiveUp(
                cause="budget",
                reason=f"relaunch budget spent ({spent}); last "
                f"outcome: {diagnosis.primary.summary()}",
                advice=advice,
            )
        changes = tuple(
            Change(field=k, old=a, new=b) for k, (a, b) in cfg.changes_from(config).items()
        )
        reason = step.reason
        graph = ctx.graph
        if memory and graph.printed_gib is not None and graph.basis not in step.estimate:
            reason += f" (CUDA graphs: {graph.basis})"
        return Relaunch(
            config=cfg,
            step=step.name,
            reason=reason,
            expected_to_free_gib=step.frees_gib,
            estimate=step.estimate,
            changes=changes,
            degradations=degradations(
                implied_config(diagnosis, ctx.original),
                cfg,
                policy,
                version,
                diagnosis.facts.model_weights_gib,
                diagnosis.facts.device,
            ),
            attempt=len(hist) + 1,
        )
    reason = (
        "every step for this failure was tried or cannot cover it: " + diagnosis.primary.summary()
    )
    if diagnosis.primary.category == outcomes.Category.MEMORY:
        return give_up_memory(ctx, reason)
    return GiveUp(
        cause=diagnosis.primary.kind,
        reason=reason,
        advice=(diagnosis.remediation,) if diagnosis.remediation else (),
    )
