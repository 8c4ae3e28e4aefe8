"""The relaunch budget: launches, and boot seconds across attempts.

The next boot is predicted from the last one and what the step changes: graph
capture is the phase that scales with the capture sizes (158 s of a 251 s boot at
256 seqs, 2-3 s at 32, measured on 0.32), so a step that captures fewer or no
graphs (smaller sizes, one set instead of two) saves that share of the `Graph
capturing finished in N secs` the log printed.
"""

from __future__ import annotations

from ..launch import LaunchConfig
from .context import Ctx
from .memory import effective_capture_max
from .releases import graph_sets


def next_boot_seconds(ctx: Ctx, config: LaunchConfig) -> tuple[float, str] | None:
    """The predicted seconds of booting `config`, and how; None with no boot timed."""
    timed = [a.seconds for a in ctx.history if a.seconds is not None]
    if not timed:
        return None
    last = timed[-1]
    graph = ctx.diagnosis.facts.cuda_graph_seconds
    cap_old, cap_new = effective_capture_max(ctx.config), effective_capture_max(config)
    sets_old, sets_new = graph_sets(ctx.config, ctx.version), graph_sets(config, ctx.version)
    kept = (cap_new / cap_old) * (sets_new / sets_old) if cap_old > 0 and sets_old > 0 else 1.0
    if graph is None or graph <= 0 or kept >= 1:
        return last, f"about {last:.0f} s, as the last boot"
    saved = min(graph * (1 - kept), last)
    what = f"largest capture {cap_old} -> {cap_new}"
    if sets_new < sets_old:
        what += f", graph sets {sets_old} -> {sets_new}"
    return last - saved, (
        f"about {last - saved:.0f} s: the last boot's {last:.0f} s less {saved:.0f} s of the "
        f"{graph:.0f} s graph capture ({what})"
    )


def budget_spent(ctx: Ctx, attempts_made: int, config: LaunchConfig | None = None) -> str | None:
    """Why the budget forbids launching `config` next, or None."""
    p = ctx.policy
    if attempts_made >= p.max_attempts:
        return f"{attempts_made} of {p.max_attempts} launches used"
    if p.max_boot_seconds is not None:
        used = sum(a.seconds for a in ctx.history if a.seconds is not None)
        if used >= p.max_boot_seconds:
            return f"{used:.0f} of {p.max_boot_seconds:.0f} boot seconds used"
        predicted = next_boot_seconds(ctx, config if config is not None else ctx.config)
        if predicted is not None and used + predicted[0] > p.max_boot_seconds:
            return (
                f"{used:.0f} of {p.max_boot_seconds:.0f} boot seconds used; another boot "
                f"({predicted[1]}) would not fit"
            )
    return None
