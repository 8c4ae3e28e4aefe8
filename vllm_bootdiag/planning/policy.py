"""Policy: what a worker accepts, read from its own environment.

A worker hands the planner its environment, not hand-picked flags: MAX_CONCURRENCY
is the name serving workers already set, the rest are ours (VLLM_BOOTDIAG_*), so a
relaunch is sized by the worker's real concurrency without anyone passing a flag.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..launch import LaunchConfigError, parse_bool, parse_int


class PolicyError(ValueError):
    """A policy value from the environment that is not one (one line, for the user)."""


POLICY_ENV_NAMES: dict[str, str] = {
    "max_concurrency": "MAX_CONCURRENCY",
    "max_attempts": "VLLM_BOOTDIAG_MAX_ATTEMPTS",
    "max_boot_seconds": "VLLM_BOOTDIAG_MAX_BOOT_SECONDS",
    "min_max_model_len": "VLLM_BOOTDIAG_MIN_MAX_MODEL_LEN",
    "allow_eager": "VLLM_BOOTDIAG_ALLOW_EAGER",
    "max_gpu_memory_utilization": "VLLM_BOOTDIAG_MAX_GPU_MEMORY_UTILIZATION",
    "fallback_max_num_seqs": "VLLM_BOOTDIAG_FALLBACK_MAX_NUM_SEQS",
    "max_context_cut_before_eager": "VLLM_BOOTDIAG_MAX_CONTEXT_CUT_BEFORE_EAGER",
}
"""Policy field -> the environment variable `Policy.from_env` reads it from.
`MAX_CONCURRENCY` is the name serving workers already set for their request
concurrency; the rest are ours, prefixed so they cannot collide."""

FALLBACK_MAX_NUM_SEQS = 64
"""max_num_seqs a relaunch lowers to when the worker's concurrency is unknown:
below vLLM's 256 (graphs captured up to 128 instead of 512, a smaller sampler
warm-up) yet above what most single-card workers run at once. The relaunch
states it as a `lower_concurrency` degradation; set MAX_CONCURRENCY instead."""


class Policy(BaseModel):
    """What the worker accepts: its real concurrency, the budget, the floor on context."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    max_concurrency: int | None = Field(default=None, ge=1)
    """Requests the worker really runs at once; max_num_seqs above it buys nothing."""
    max_attempts: int = Field(default=4, ge=1)
    """Launches in total, the first one included."""
    max_boot_seconds: float | None = Field(default=3600.0, gt=0, allow_inf_nan=False)
    """Seconds of booting in total, across attempts (None: no limit)."""
    min_max_model_len: int = Field(default=1024, ge=1)
    """The shortest context the operator accepts."""
    allow_eager: bool = True
    max_gpu_memory_utilization: float = Field(default=0.95, gt=0, le=1, allow_inf_nan=False)
    """The highest gpu_memory_utilization a step may raise to; an asked value above
    it is kept as asked (never lowered except by a step that says so)."""
    fallback_max_num_seqs: int = Field(default=FALLBACK_MAX_NUM_SEQS, ge=1)
    """max_num_seqs to lower to when max_concurrency is unknown (see FALLBACK_MAX_NUM_SEQS)."""
    max_context_cut_before_eager: float = Field(default=0.1, ge=0, le=1, allow_inf_nan=False)
    """A context cut up to this fraction of the asked length is preferred over eager
    mode (which costs up to 2x throughput on small models)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> Policy:
        """The policy a worker's environment describes (POLICY_ENV_NAMES); empty
        values count as unset, `overrides` (e.g. CLI flags) win. Raises PolicyError
        with one line naming the variable for a value that is not valid."""
        fields: dict[str, Any] = {}
        source: dict[str, str] = {}
        for field, name in POLICY_ENV_NAMES.items():
            text = env.get(name)
            if text is None or text.strip() == "":
                continue
            fields[field] = _policy_value(field, name, text.strip())
            source[field] = name
        for field, value in overrides.items():
            if value is not None:
                fields[field] = value
                source.pop(field, None)
        try:
            return cls.model_validate(fields)
        except ValidationError as e:
            first = e.errors()[0]
            field = ".".join(str(x) for x in first["loc"])
            raise PolicyError(f"{source.get(field, field)}: {first['msg']}") from None


def _policy_value(field: str, name: str, text: str) -> Any:
    """One env string -> the Policy field's value (`none` lifts the seconds budget)."""
    if len(text) > 64:
        raise PolicyError(f"{name}: value too long")
    try:
        if field == "allow_eager":
            return parse_bool(text, name)
        if field == "max_boot_seconds" and text.lower() in ("none", "unlimited"):
            return None
        if field in (
            "max_boot_seconds",
            "max_gpu_memory_utilization",
            "max_context_cut_before_eager",
        ):
            value = float(text)
            if not math.isfinite(value):
                raise PolicyError(f"{name}: not a finite number: {text!r}")
            return value
        return parse_int(text, name)
    except PolicyError:
        raise
    except LaunchConfigError as e:
        raise PolicyError(str(e)) from None
    except ValueError:
        raise PolicyError(f"{name}: not a number: {text!r}") from None
