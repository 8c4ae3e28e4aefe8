"""A device out-of-memory whose boot phase the log does not show.

An OOM is attributed to weight loading, profiling or graph capture from its
traceback frames and the last boot-phase line. When neither is in the tail (a
paste of the error line alone, a worker that kept three lines) the phase is
unknown, and saying so beats guessing: each phase has a different remedy.
"""

from typing import ClassVar, Literal

from .base import Category, Plan, _Outcome
from .memory import CudaOomNumbers


class DeviceOom(_Outcome, CudaOomNumbers):
    """The device (CUDA, ROCm, XPU) ran out of memory at a boot phase the log does not show."""

    CATEGORY = Category.MEMORY
    PLAN: ClassVar[Plan] = "memory"
    PART_OF: ClassVar[frozenset[str]] = frozenset(
        {"cuda_graph_capture_oom", "weight_load_oom", "profiling_oom"}
    )
    """Kinds whose match this one's numbers complete: the allocator text split over two
    lines, whose second half has no frames (so no phase) of its own."""
    kind: Literal["device_oom"] = "device_oom"
    device: str | None = None
    """`CUDA`, `HIP` or `XPU`, as the allocator names itself."""
    phase_hint: str | None = None
