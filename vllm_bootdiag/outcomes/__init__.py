"""What a boot log says happened: one frozen model per outcome, split by category.

Every outcome carries the numbers vLLM printed (None where that release did not
print one), the evidence lines, its category, whether a plain restart on the
same launch config can succeed, and what the planner does with it (`PLAN`).

The list of kinds is written once: defining a class with a `kind` literal in one
of the category modules registers it. The discriminated union (so a Diagnosis
round-trips through JSON), `OUTCOME_TYPES`, `field_names` and `build` are all
derived from that registry. A new category module needs one import line here.
"""

from __future__ import annotations

import operator
from functools import cache, lru_cache, reduce
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, TypeAdapter

from .. import quick_build

# Import order is the order of OUTCOME_TYPES (and of the union).
from . import (
    access,
    config,
    cpu_reservation,
    device_oom,
    distributed,
    environment,
    install,
    lifecycle,
    memory,
    model_files,
    platform,
)
from .access import GatedModel, ModelNotFound, RevisionNotFound
from .base import (
    REGISTRY,
    Category,
    Count,
    Evidence,
    GiB,
    Names,
    OutcomeBase,
    Plan,
    _Outcome,
)
from .config import InvalidArgument, MaxModelLenExceedsModel, UnsupportedArchitecture
from .cpu_reservation import CpuMemoryReservationExceeded
from .device_oom import DeviceOom
from .distributed import DistributedInitFailed
from .environment import DiskFull
from .install import BrokenInstall
from .lifecycle import Booted, EngineDied, Unknown
from .memory import (
    AutoFitFailed,
    CudaGraphCaptureOom,
    CudaOomNumbers,
    InsufficientFreeMemory,
    KvCacheShortfall,
    NoKvCacheMemory,
    ProfilingOom,
    WeightLoadOom,
)
from .model_files import ArchitectureInspectionFailed, ModelFilesUnreadable
from .platform import (
    AttentionBackendUnsupported,
    DriverTooOld,
    GpuArchUnsupported,
    InsufficientDevices,
    NoAccelerator,
)

_MODULES = (
    memory,
    cpu_reservation,
    device_oom,
    config,
    access,
    model_files,
    environment,
    platform,
    distributed,
    install,
    lifecycle,
)

_ORDER = [m.__name__ for m in _MODULES]

OUTCOME_TYPES: dict[str, type[_Outcome]] = dict(
    sorted(
        REGISTRY.items(),
        key=lambda kv: _ORDER.index(kv[1].__module__) if kv[1].__module__ in _ORDER else 99,
    )
)
"""kind -> model class; the rule table validates its outcome names against it."""

if TYPE_CHECKING:
    Outcome = _Outcome
else:
    Outcome = Annotated[reduce(operator.or_, OUTCOME_TYPES.values()), Field(discriminator="kind")]
"""Any outcome, discriminated on `kind` (statically: the common base class)."""

OutcomeKind = str

CUDA_OOM_KINDS = frozenset(
    {"cuda_graph_capture_oom", "weight_load_oom", "profiling_oom", "device_oom"}
)
"""Device-OOM kinds: the three attributed phases, and `device_oom` where the phase is unknown."""


@lru_cache(maxsize=1)
def _adapter() -> TypeAdapter[Any]:
    return TypeAdapter(Outcome)


def __getattr__(name: str) -> Any:
    """`outcome_adapter` is built on first use: a TypeAdapter over the union costs
    milliseconds that `import vllm_bootdiag` should not pay."""
    if name == "outcome_adapter":
        return _adapter()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def field_names(kind: str) -> frozenset[str]:
    """The number fields a rule's named groups may fill for an outcome kind."""
    return frozenset(OUTCOME_TYPES[kind].model_fields) - {"kind", "rule_id", "evidence"}


def build(kind: str, **fields: Any) -> _Outcome:
    """Make an outcome of `kind` from a rule's named groups (strings are converted): what
    `model_validate` gives, without building a validator where that is certain."""
    return quick_build.build(OUTCOME_TYPES[kind], {"kind": kind, **fields})


__all__ = [
    "CUDA_OOM_KINDS",
    "OUTCOME_TYPES",
    "ArchitectureInspectionFailed",
    "AttentionBackendUnsupported",
    "AutoFitFailed",
    "Booted",
    "BrokenInstall",
    "Category",
    "Count",
    "CpuMemoryReservationExceeded",
    "CudaGraphCaptureOom",
    "CudaOomNumbers",
    "DeviceOom",
    "DiskFull",
    "DistributedInitFailed",
    "DriverTooOld",
    "EngineDied",
    "Evidence",
    "GatedModel",
    "GiB",
    "GpuArchUnsupported",
    "InsufficientDevices",
    "InsufficientFreeMemory",
    "InvalidArgument",
    "KvCacheShortfall",
    "MaxModelLenExceedsModel",
    "ModelFilesUnreadable",
    "ModelNotFound",
    "Names",
    "NoAccelerator",
    "NoKvCacheMemory",
    "Outcome",
    "OutcomeBase",
    "OutcomeKind",
    "Plan",
    "ProfilingOom",
    "RevisionNotFound",
    "Unknown",
    "UnsupportedArchitecture",
    "WeightLoadOom",
    "_Outcome",
    "build",
    "field_names",
]
