"""The CPU backend's reservation check (0.33.0+): the worker outgrew its share.

On the CPU backend `--gpu-memory-utilization` is the fraction of the NUMA
node's memory reserved for the worker. 0.33.0 checks, after loading, whether
the worker's own footprint already fills that reservation; if so nothing is
left for the KV cache and freeing memory elsewhere cannot help. vLLM prints the
smallest utilization that would leave room; the planner raises the reservation
above it (within its cap) or sets the KV size explicitly, and never lowers it.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from .base import Category, GiB, Plan, _Outcome


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
    """The utilization vLLM says to exceed (`increase ... to more than 0.42`)."""
