"""What `vllm-bootdiag run` reports: one AttemptSummary per launch and the
RunSummary of the whole loop, as models a worker serializes (`json_line`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .diagnosis import Diagnosis
from .launch import LaunchConfig
from .planning import Degradation, GiveUp


class AttemptSummary(BaseModel):
    """One launch, as the run summary reports it."""

    model_config = ConfigDict(frozen=True)
    number: int
    argv: tuple[str, ...]
    config: LaunchConfig
    step: str | None = None
    reason: str | None = None
    """Why the planner chose this launch's step (None for the first launch)."""
    outcome: str
    summary: str
    seconds: float
    exit_code: int | None = None
    diagnosis: Diagnosis | None = None


class RunSummary(BaseModel):
    """What the loop did: every attempt, the config that booted, what it gave up."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["run_summary"] = "run_summary"
    result: Literal["booted", "gave_up", "stopped"]
    attempts: tuple[AttemptSummary, ...] = ()
    final_config: LaunchConfig | None = None
    final_argv: tuple[str, ...] = ()
    degradations: tuple[Degradation, ...] = ()
    give_up: GiveUp | None = None
    seconds: float = 0.0
    signal: int | None = None
    health_confirmed: bool = False

    @property
    def booted(self) -> bool:
        return self.result == "booted"

    def json_line(self) -> str:
        """One JSON line, the per-attempt diagnoses (whole evidence) left out; every other
        key is always there (null when unset), so a reader never finds one missing."""
        return self.model_dump_json(exclude={"attempts": {"__all__": {"diagnosis"}}})
