"""Lifecycle outcomes: a process died without a cause, the server came up, or nothing matched.

`unknown` is an answer with retry semantics, not None: its last error-looking
line is the best lead a person has.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from .base import Category, Plan, _Outcome


class EngineDied(_Outcome):
    """A worker or engine process vanished without printing a cause.

    A negative exit code is the signal that killed it (-9: the kernel's OOM
    killer, most often). A restart may succeed if the pressure was transient.
    """

    CATEGORY = Category.LIFECYCLE
    RETRYABLE = True
    RANK = 20
    PLAN: ClassVar[Plan] = "restart_once"
    kind: Literal["engine_died"] = "engine_died"
    process: str | None = None
    exit_code: int | None = None


class Booted(_Outcome):
    """The API server came up."""

    CATEGORY = Category.LIFECYCLE
    RETRYABLE = True
    RANK = 5
    CONTEXT = (("port", "port"),)
    kind: Literal["booted"] = "booted"
    port: int | None = None

    @property
    def is_failure(self) -> bool:
        return False


class Unknown(_Outcome):
    """Nothing we know matched; the last error-looking line is the best lead."""

    CATEGORY = Category.UNKNOWN
    RETRYABLE = True
    RANK = 0
    PLAN: ClassVar[Plan] = "restart_once"
    kind: Literal["unknown"] = "unknown"
    last_error_line: str | None = None
    last_error_line_number: int | None = None

    @property
    def is_failure(self) -> bool:
        return self.last_error_line is not None
