"""The CPU backend's reservation check (0.33.0+): the worker outgrew its share.

On the CPU backend `--gpu-memory-utilization` is the fraction of the NUMA
node's memory reserved for the worker. 0.33.0 checks, after loading, whether
the worker's own footprint already fills that reservation; if so nothing is
left for the KV cache and freeing memory elsewhere cannot help. vLLM prints the
smallest utilization that would leave room; the planner raises the reservation
above it (within its cap) or sets the KV size explicitly, and never lowers it.
"""

import math
from typing import Any, ClassVar, Literal

from pydantic import model_validator

from .base import Category, GiB, Plan, _Outcome, _to_gib


class CpuMemoryReservationExceeded(_Outcome):
    """The CPU worker already uses more than the memory reserved for it on its node."""

    CATEGORY = Category.MEMORY
    PLAN: ClassVar[Plan] = "memory"
    kind: Literal["cpu_memory_reservation_exceeded"] = "cpu_memory_reservation_exceeded"
    used_gib: GiB | None = None
    """What the worker process holds (weights and runtime)."""
    reserved_gib: GiB | None = None
    """What `--gpu-memory-utilization` reserves for it on the node."""
    numa_node: int | None = None
    min_gpu_memory_utilization: float | None = None
    """The utilization vLLM says to exceed (`increase ... to more than 0.42`); before
    0.33 it is worked out the way 0.33 prints it (ceil(used / total, 1%))."""
    shortfall_gib: GiB | None = None
    """How far the use exceeds the reservation: before 0.33 vLLM printed it as a
    negative KV request (`requested memory for kv (-0.64/0.43 GiB)`)."""
    node_total_gib: GiB | None = None

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        """Fill what 0.32 left implicit: the use (reservation + shortfall) and the
        smallest utilization that covers it, as 0.33's cpu_worker.py computes it."""
        if not isinstance(data, dict):
            return data
        num = {k: _to_gib(data.get(k)) for k in ("used_gib", "reserved_gib", "shortfall_gib")}
        num["node_total_gib"] = _to_gib(data.get("node_total_gib"))
        if not all(isinstance(v, (int, float)) or v is None for v in num.values()):
            return data
        out = dict(data)
        used = num["used_gib"]
        if used is None and num["reserved_gib"] is not None and num["shortfall_gib"] is not None:
            used = round(abs(num["shortfall_gib"]) + num["reserved_gib"], 6)
            out["used_gib"] = used
        total = num["node_total_gib"]
        if out.get("min_gpu_memory_utilization") is None and used is not None and total:
            out["min_gpu_memory_utilization"] = math.ceil(used / total * 100) / 100
        return out
