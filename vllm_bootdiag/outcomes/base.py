"""The base every outcome model shares: category, retry and plan policy, evidence.

A concrete outcome (a subclass with a `kind` literal) registers itself when its
class is created, so the list of kinds is written once: by defining the class.
The union, `OUTCOME_TYPES`, `field_names` and `build` are derived from that
registry in `outcomes/__init__.py`.
"""

# No `from __future__ import annotations` here: pydantic evaluates a string annotation of
# a base class again for every subclass (36 kinds x 10 fields); real objects it reads as is.
import enum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, computed_field, model_validator

from ..text.wrappers import Lazy


class Category(str, enum.Enum):
    """Who can fix it: memory sizing, the config, access to the model, the machine."""

    MEMORY = "memory"
    CONFIG = "config"
    ACCESS = "access"
    ENVIRONMENT = "environment"
    LIFECYCLE = "lifecycle"
    UNKNOWN = "unknown"


Plan = Literal["memory", "give_up", "restart_once"]
"""What the planner does with a kind it has no handler for: `memory` (a memory
handler exists), `give_up` (give up with the rule's remediation as advice),
`restart_once` (one plain relaunch on the same config)."""

_UNITS = {"b": 1 / 2**30, "bytes": 1 / 2**30, "kib": 1 / 2**20, "mib": 1 / 2**10, "gib": 1.0}
_SIZE = Lazy(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_NAME = Lazy(r"[A-Za-z_][\w.]*")
"""A class or architecture name (compiled once: `regex.findall` with the pattern's text
looks it up in regex's cache on every call, at three times the search's cost)."""


def _to_gib(value: Any) -> Any:
    """'3.0', '966.00 MiB', '2.5 GiB', 12 -> GiB as a float; other input is left to pydantic."""
    if isinstance(value, str):
        # `3.0`, what a rule reads most: `_SIZE`'s answer (unit GiB) without its match
        plain = value[-1:].isdigit() and value[:1].isdigit() and value.isascii()
        if plain and value.replace(".", "", 1).isdigit():
            point = value.find(".")
            if point < 0 or len(value) - point <= 7:
                # six decimals or fewer: the float is within half a millionth of them (or,
                # past 2**33, a step apart wider than a millionth), so rounding it to six
                # gives it back: `round` (half the cost) left out
                return float(value)
            return round(float(value), 6)
        m = _SIZE.match(value)
        if m:
            unit = m[2].lower() or "gib"
            if unit in _UNITS:
                return round(float(m[1]) * _UNITS[unit], 6)
    return value


def _to_int(value: Any) -> Any:
    """'1,135,957' -> 1135957 (vLLM formats token counts with commas)."""
    if isinstance(value, str):
        return value.replace(",", "").replace("_", "").strip()
    return value


def _to_names(value: Any) -> Any:
    """ "['A', 'B']" or 'A, B' -> ('A', 'B')."""
    if isinstance(value, str):
        return tuple(_NAME.findall(value))
    return value


GiB = Annotated[float, BeforeValidator(_to_gib)]
Count = Annotated[int, BeforeValidator(_to_int)]
Names = Annotated[tuple[str, ...], BeforeValidator(_to_names)]


class Evidence(BaseModel):
    """A line that supports an outcome (1-based, in the original input's numbering)."""

    model_config = ConfigDict(frozen=True, defer_build=True)
    line: int
    text: str


REGISTRY: dict[str, type["_Outcome"]] = {}
"""kind -> model class, in definition order (filled as outcome modules are imported)."""

_COMPUTED = ("category", "retry_same_config_can_succeed")


class _Outcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    CATEGORY: ClassVar[Category] = Category.UNKNOWN
    RETRYABLE: ClassVar[bool] = False
    RANK: ClassVar[int] = 50
    """Root-cause precedence: a cause (50) beats an echo of it (10)."""
    FAILURE: ClassVar[bool] = True
    """False for an outcome that is not a failure (the server came up)."""
    PLAN: ClassVar[Plan] = "give_up"
    """The planner's fallback for a kind without a handler of its own."""
    CONTEXT: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(outcome field, `BootFacts` field) pairs: the boot's fact fills the field when
    the rule's line lacks it (a model name printed at the start, the port bound)."""

    KV_VERDICT: ClassVar[bool] = False
    """vLLM's own verdict on the KV cache's size: where a rule read one, the KV budget on
    the progress lines (which stands in for a verdict cut off the tail) is not read."""

    PART_OF: ClassVar[frozenset[str]] = frozenset()
    """Kinds this one is a part of (its numbers fill theirs where they lack them)."""

    READS_BELOW: ClassVar[Literal["pydantic_errors"] | None] = None
    """Where the lines under the rule's line hold this kind's details: `pydantic_errors`
    (the field and message pydantic prints under `N validation error for X`)."""

    if TYPE_CHECKING:
        kind: str

    rule_id: str | None = None
    evidence: tuple[Evidence, ...] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("kind")
        if field is None or not isinstance(field.default, str):
            return
        kind = field.default
        if kind in REGISTRY and REGISTRY[kind] is not cls:
            raise TypeError(f"outcome kind {kind!r} is defined twice")
        REGISTRY[kind] = cls

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        """Accept our own JSON back: category and retryability are derived, not input."""
        if isinstance(data, dict) and (_COMPUTED[0] in data or _COMPUTED[1] in data):
            data = {k: v for k, v in data.items() if k not in _COMPUTED}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def category(self) -> Category:
        return self.CATEGORY

    @computed_field  # type: ignore[prop-decorator]
    @property
    def retry_same_config_can_succeed(self) -> bool:
        return self.RETRYABLE

    @property
    def is_failure(self) -> bool:
        return True

    def summary(self) -> str:
        """One line for humans: the kind and its numbers."""
        numbers = {
            k: v
            for k, v in self.model_dump(exclude={"kind", "rule_id", "evidence"}).items()
            if v is not None and k not in _COMPUTED
        }
        kind: str = getattr(self, "kind", "")
        if not numbers:
            return kind
        return kind + ": " + ", ".join(f"{k}={_show(v)}" for k, v in numbers.items())


OutcomeBase = _Outcome
"""The public name of the base class (for type annotations and isinstance)."""


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(x) for x in value)
    return str(value)
