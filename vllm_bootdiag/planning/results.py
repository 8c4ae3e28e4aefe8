"""What plan() answers: a Relaunch or a GiveUp, the Attempts it was given, and
what each relaunch gives up (Degradation), as models a worker can serialize."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from ..launch import LaunchConfig

DegradationKind = Literal[
    "eager_mode",
    "shorter_context",
    "lower_concurrency",
    "lower_batched_tokens",
    "fewer_cuda_graphs",
    "smaller_kv_cache",
]


class Degradation(BaseModel):
    """Something the relaunched server does worse than the one asked for."""

    model_config = ConfigDict(frozen=True)
    kind: DegradationKind
    message: str


class Change(BaseModel):
    """One setting the relaunch changes."""

    model_config = ConfigDict(frozen=True)
    field: str
    old: Any
    new: Any


class Attempt(BaseModel):
    """One launch: its config, what the boot ended in, how long it took."""

    model_config = ConfigDict(frozen=True)
    config: LaunchConfig
    outcome: str | None = None
    seconds: float | None = None
    step: str | None = None
    """The plan step that produced this config (None for the first launch)."""
    exit_code: int | None = None


class Relaunch(BaseModel):
    """Launch this config next."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["relaunch"] = "relaunch"
    config: LaunchConfig
    step: str
    reason: str
    expected_to_free_gib: float | None = None
    estimate: str = ""
    """How `expected_to_free_gib` was reached, and whether it is a guess."""
    changes: tuple[Change, ...] = ()
    degradations: tuple[Degradation, ...] = ()
    """Everything the new config gives up against the first launch, cumulative."""
    attempt: int = 2

    def argv(self) -> list[str]:
        return self.config.to_argv()

    def env(self) -> dict[str, str]:
        return self.config.to_env()


class GiveUp(BaseModel):
    """Stop relaunching: no launch flag fixes this on this footprint, or the budget is spent."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["give_up"] = "give_up"
    cause: str
    """The outcome kind, or `budget` when the relaunch budget is spent."""
    reason: str
    advice: tuple[str, ...] = ()


Plan = Annotated[Union[Relaunch, GiveUp], Field(discriminator="kind")]  # noqa: UP007


class NothingToPlan(ValueError):
    """plan() was asked about a boot that succeeded."""
