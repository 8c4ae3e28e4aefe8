"""The relaunch budget: launches and boot seconds, across attempts."""

from __future__ import annotations

from .context import Ctx


def budget_spent(ctx: Ctx, attempts_made: int) -> str | None:
    """Why the budget forbids another launch, or None."""
    p = ctx.policy
    if attempts_made >= p.max_attempts:
        return f"{attempts_made} of {p.max_attempts} launches used"
    if p.max_boot_seconds is not None:
        known = [a.seconds for a in ctx.history if a.seconds is not None]
        used = sum(known)
        if used >= p.max_boot_seconds:
            return f"{used:.0f} of {p.max_boot_seconds:.0f} boot seconds used"
        if known and used + sum(known) / len(known) > p.max_boot_seconds:
            return (
                f"{used:.0f} of {p.max_boot_seconds:.0f} boot seconds used; another boot "
                f"(about {sum(known) / len(known):.0f} s) would not fit"
            )
    return None
