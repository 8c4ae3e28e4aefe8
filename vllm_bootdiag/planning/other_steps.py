"""Config and access errors (give up with the rule's remediation) and failures
without a known cause (one plain restart, then give up)."""

from __future__ import annotations

from .. import outcomes
from .context import Ctx, Step
from .results import GiveUp


def config_or_access(ctx: Ctx) -> GiveUp:
    o = ctx.diagnosis.primary
    advice: list[str] = []
    if isinstance(o, outcomes.MaxModelLenExceedsModel) and o.derived_max_model_len:
        advice.append(
            f"Set --max-model-len to at most {o.derived_max_model_len} (the model's own context)."
        )
    if ctx.diagnosis.remediation:
        advice.append(ctx.diagnosis.remediation)
    evidence = o.evidence[0].text if o.evidence else ""
    reason = evidence[:300] if evidence else o.summary()
    return GiveUp(cause=o.kind, reason=reason, advice=tuple(advice))


def restart(ctx: Ctx) -> list[Step] | GiveUp:
    """No cause found: let the platform restart the same config, once."""
    o = ctx.diagnosis.primary
    launches = sum(1 for a in ctx.history if a.config == ctx.config) or 1
    last = getattr(o, "last_error_line", None)
    if not o.retry_same_config_can_succeed:
        # An unknown whose last error is deterministic (an import, a missing symbol):
        # the same launch runs the same code and fails the same way.
        return GiveUp(
            cause=o.kind,
            reason="the last error is deterministic: a plain restart fails the same way",
            advice=tuple(
                x
                for x in (f"Last error line: {last}" if last else "", ctx.diagnosis.remediation)
                if x
            ),
        )
    if launches >= 2:
        advice = [f"Last error line: {last}"] if last else []
        if ctx.diagnosis.remediation:
            advice.append(ctx.diagnosis.remediation)
        return GiveUp(
            cause=o.kind,
            reason=(
                "killed again on a plain restart: give the host (or container) more memory"
                if isinstance(o, outcomes.EngineDied)
                else "failed again on a plain restart with no known cause"
            ),
            advice=tuple(advice),
        )
    if isinstance(o, outcomes.EngineDied):
        code = (
            f" (exit code {o.exit_code}: killed by signal {-o.exit_code})"
            if (o.exit_code is not None and o.exit_code < 0)
            else ""
        )
        why = (
            f"the {o.process or 'engine'} process died without printing a cause{code}, most "
            "often the kernel's OOM killer; a plain restart may succeed if the memory pressure "
            "was transient (counted against the budget)"
        )
    else:
        why = (
            "no known cause; a plain restart may succeed if it was transient (counted "
            "against the budget)"
        )
    return [Step("restart", ctx.config, why, 0.0, "nothing changes")]
