"""What a boot log says happened: one frozen model per outcome.

Every outcome carries the numbers vLLM printed (None where that release did not
print one), the evidence lines, its category, and whether a plain restart on the
same launch config can succeed. They form a union discriminated on `kind`, so a
Diagnosis round-trips through JSON.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar, Literal

import regex
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    computed_field,
    model_validator,
)


class Category(str, enum.Enum):
    """Who can fix it: memory sizing, the config, access to the model, the machine."""

    MEMORY = "memory"
    CONFIG = "config"
    ACCESS = "access"
    ENVIRONMENT = "environment"
    LIFECYCLE = "lifecycle"
    UNKNOWN = "unknown"


_UNITS = {"b": 1 / 2**30, "bytes": 1 / 2**30, "kib": 1 / 2**20, "mib": 1 / 2**10, "gib": 1.0}
_SIZE = regex.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def _to_gib(value: Any) -> Any:
    """'3.0', '966.00 MiB', '2.5 GiB', 12 -> GiB as a float; other input is left to pydantic."""
    if isinstance(value, str):
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
        return tuple(regex.findall(r"[A-Za-z_][\w.]*", value))
    return value


GiB = Annotated[float, BeforeValidator(_to_gib)]
Count = Annotated[int, BeforeValidator(_to_int)]
Names = Annotated[tuple[str, ...], BeforeValidator(_to_names)]


class Evidence(BaseModel):
    """A line of the tail that supports an outcome (1-based within the tail)."""

    model_config = ConfigDict(frozen=True)
    line: int
    text: str


class _Outcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    CATEGORY: ClassVar[Category] = Category.UNKNOWN
    RETRYABLE: ClassVar[bool] = False
    RANK: ClassVar[int] = 50
    """Root-cause precedence: a cause (50) beats an echo of it (10)."""

    rule_id: str | None = None
    evidence: tuple[Evidence, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        """Accept our own JSON back: category and retryability are derived, not input."""
        if isinstance(data, dict) and (
            "category" in data or "retry_same_config_can_succeed" in data
        ):
            data = {
                k: v
                for k, v in data.items()
                if k not in ("category", "retry_same_config_can_succeed")
            }
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
            if v is not None and k not in ("category", "retry_same_config_can_succeed")
        }
        kind: str = getattr(self, "kind", "")
        if not numbers:
            return kind
        return kind + ": " + ", ".join(f"{k}={_show(v)}" for k, v in numbers.items())


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(x) for x in value)
    return str(value)


class CudaOomNumbers(BaseModel):
    """The numbers in PyTorch's `CUDA out of memory. Tried to allocate ...` text."""

    tried_to_allocate_gib: GiB | None = None
    gpu_index: int | None = None
    total_capacity_gib: GiB | None = None
    free_gib: GiB | None = None
    private_pools_gib: GiB | None = None


# --- memory -------------------------------------------------------------------


class KvCacheShortfall(_Outcome):
    """One request of max_model_len tokens does not fit in the KV cache."""

    CATEGORY = Category.MEMORY
    kind: Literal["kv_cache_shortfall"] = "kv_cache_shortfall"
    max_model_len: Count | None = None
    needed_gib: GiB | None = None
    available_gib: GiB | None = None
    estimated_max_model_len: Count | None = None
    kv_cache_tokens: Count | None = None
    """The V0 engine states capacity in tokens instead of GiB."""


class NoKvCacheMemory(_Outcome):
    """Nothing at all is left for the KV cache after weights and activations."""

    CATEGORY = Category.MEMORY
    kind: Literal["no_kv_cache_memory"] = "no_kv_cache_memory"
    available_gib: GiB | None = None


class AutoFitFailed(_Outcome):
    """`--max-model-len auto` could not fit even one token."""

    CATEGORY = Category.MEMORY
    kind: Literal["auto_fit_failed"] = "auto_fit_failed"
    available_gib: GiB | None = None


class CudaGraphCaptureOom(_Outcome, CudaOomNumbers):
    """CUDA ran out of memory while capturing CUDA graphs."""

    CATEGORY = Category.MEMORY
    kind: Literal["cuda_graph_capture_oom"] = "cuda_graph_capture_oom"
    phase_hint: str | None = None


class WeightLoadOom(_Outcome, CudaOomNumbers):
    """The weights alone do not fit on the device(s)."""

    CATEGORY = Category.MEMORY
    kind: Literal["weight_load_oom"] = "weight_load_oom"
    phase_hint: str | None = None


class ProfilingOom(_Outcome, CudaOomNumbers):
    """CUDA OOM in the profiling forward pass or the sampler/pooler warm-up."""

    CATEGORY = Category.MEMORY
    kind: Literal["profiling_oom"] = "profiling_oom"
    dummy_requests: Count | None = None
    phase_hint: str | None = None


class InsufficientFreeMemory(_Outcome):
    """Less memory is free at startup than the launch asks for.

    On a GPU another process holds part of it; on the CPU backend the node has
    less free memory than the KV space requested.
    """

    CATEGORY = Category.MEMORY
    RETRYABLE = True
    kind: Literal["insufficient_free_memory"] = "insufficient_free_memory"
    device: str | None = None
    free_gib: GiB | None = None
    total_gib: GiB | None = None
    gpu_memory_utilization: float | None = None
    requested_gib: GiB | None = None


# --- config -------------------------------------------------------------------


class MaxModelLenExceedsModel(_Outcome):
    """--max-model-len is longer than the model's own context."""

    CATEGORY = Category.CONFIG
    kind: Literal["max_model_len_exceeds_model"] = "max_model_len_exceeds_model"
    max_model_len: Count | None = None
    derived_max_model_len: Count | None = None
    derived_from: str | None = None


class InvalidArgument(_Outcome):
    """A flag or config value vLLM rejected before loading anything."""

    CATEGORY = Category.CONFIG
    kind: Literal["invalid_argument"] = "invalid_argument"
    argument: str | None = None
    """The flag or config field, as vLLM named it."""
    message: str | None = None
    config: str | None = None
    """The config class that rejected it (`CacheConfig`), when pydantic says so."""


class UnsupportedArchitecture(_Outcome):
    """The model's architecture is not one this vLLM implements."""

    CATEGORY = Category.CONFIG
    kind: Literal["unsupported_architecture"] = "unsupported_architecture"
    architectures: Names = ()


# --- access -------------------------------------------------------------------


class ModelNotFound(_Outcome):
    """No such model: a wrong id or path, or an offline hub with no cached copy."""

    CATEGORY = Category.ACCESS
    kind: Literal["model_not_found"] = "model_not_found"
    model: str | None = None
    message: str | None = None


class GatedModel(_Outcome):
    """The model is gated or private and the token does not grant access."""

    CATEGORY = Category.ACCESS
    kind: Literal["gated_model"] = "gated_model"
    model: str | None = None


class RevisionNotFound(_Outcome):
    """The requested revision (branch, tag, commit) does not exist."""

    CATEGORY = Category.ACCESS
    kind: Literal["revision_not_found"] = "revision_not_found"
    revision: str | None = None
    model: str | None = None


# --- environment and lifecycle -------------------------------------------------


class DiskFull(_Outcome):
    """No space left on a device while downloading or compiling."""

    CATEGORY = Category.ENVIRONMENT
    kind: Literal["disk_full"] = "disk_full"
    path: str | None = None


class EngineDied(_Outcome):
    """A worker or engine process vanished without printing a cause.

    A negative exit code is the signal that killed it (-9: the kernel's OOM
    killer, most often). A restart may succeed if the pressure was transient.
    """

    CATEGORY = Category.LIFECYCLE
    RETRYABLE = True
    RANK = 20
    kind: Literal["engine_died"] = "engine_died"
    process: str | None = None
    exit_code: int | None = None


class Booted(_Outcome):
    """The API server came up."""

    CATEGORY = Category.LIFECYCLE
    RETRYABLE = True
    RANK = 5
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
    kind: Literal["unknown"] = "unknown"
    last_error_line: str | None = None
    last_error_line_number: int | None = None

    @property
    def is_failure(self) -> bool:
        return self.last_error_line is not None


Outcome = Annotated[
    (
        KvCacheShortfall
        | NoKvCacheMemory
        | AutoFitFailed
        | CudaGraphCaptureOom
        | WeightLoadOom
        | ProfilingOom
        | InsufficientFreeMemory
        | MaxModelLenExceedsModel
        | InvalidArgument
        | UnsupportedArchitecture
        | ModelNotFound
        | GatedModel
        | RevisionNotFound
        | DiskFull
        | EngineDied
        | Booted
        | Unknown
    ),
    Field(discriminator="kind"),
]

OUTCOME_TYPES: dict[str, type[_Outcome]] = {
    t.model_fields["kind"].default: t
    for t in (
        KvCacheShortfall,
        NoKvCacheMemory,
        AutoFitFailed,
        CudaGraphCaptureOom,
        WeightLoadOom,
        ProfilingOom,
        InsufficientFreeMemory,
        MaxModelLenExceedsModel,
        InvalidArgument,
        UnsupportedArchitecture,
        ModelNotFound,
        GatedModel,
        RevisionNotFound,
        DiskFull,
        EngineDied,
        Booted,
        Unknown,
    )
}
"""kind -> model class; the rule table validates its outcome names against it."""

OutcomeKind = str

CUDA_OOM_KINDS = frozenset({"cuda_graph_capture_oom", "weight_load_oom", "profiling_oom"})

outcome_adapter: TypeAdapter[Outcome] = TypeAdapter(Outcome)


def field_names(kind: str) -> frozenset[str]:
    """The number fields a rule's named groups may fill for an outcome kind."""
    return frozenset(OUTCOME_TYPES[kind].model_fields) - {"kind", "rule_id", "evidence"}


def build(kind: str, **fields: Any) -> _Outcome:
    """Make an outcome of `kind` from a rule's named groups (strings are converted)."""
    return OUTCOME_TYPES[kind].model_validate({"kind": kind, **fields})
