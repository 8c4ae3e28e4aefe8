"""Config outcomes: a flag or the model's config that this launch cannot use.

A relaunch on the same config fails the same way; the planner gives up with the
rule's remediation unless a handler can change the flag (`max_model_len`).
"""

from typing import Literal

from .base import Category, Count, Names, _Outcome


class _Config(_Outcome):
    CATEGORY = Category.CONFIG


class MaxModelLenExceedsModel(_Config):
    """--max-model-len is longer than the model's own context."""

    kind: Literal["max_model_len_exceeds_model"] = "max_model_len_exceeds_model"
    max_model_len: Count | None = None
    derived_max_model_len: Count | None = None
    derived_from: str | None = None


class InvalidArgument(_Config):
    """A flag or config value vLLM rejected before loading anything."""

    READS_BELOW = "pydantic_errors"
    kind: Literal["invalid_argument"] = "invalid_argument"
    argument: str | None = None
    """The flag or config field, as vLLM named it."""
    message: str | None = None
    config: str | None = None
    """The config class that rejected it (`CacheConfig`), when pydantic says so."""


class UnsupportedArchitecture(_Config):
    """The model's architecture is not one this vLLM implements."""

    kind: Literal["unsupported_architecture"] = "unsupported_architecture"
    architectures: Names = ()
