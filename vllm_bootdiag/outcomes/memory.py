"""Memory outcomes: the launch asks for more device or host memory than there is.

The planner has a handler for each (`PLAN = "memory"`): shorter context, eager
mode, a smaller KV cache, lower utilization.
"""

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from .base import Category, Count, GiB, Plan, _Outcome


class _Memory(_Outcome):
    CATEGORY = Category.MEMORY
    PLAN: ClassVar[Plan] = "memory"


class CudaOomNumbers(BaseModel):
    """The numbers in PyTorch's `CUDA out of memory. Tried to allocate ...` text."""

    model_config = ConfigDict(defer_build=True)  # a mixin: its kinds are what is validated
    tried_to_allocate_gib: GiB | None = None
    gpu_index: int | None = None
    total_capacity_gib: GiB | None = None
    free_gib: GiB | None = None
    private_pools_gib: GiB | None = None


class KvCacheShortfall(_Memory):
    """One request of max_model_len tokens does not fit in the KV cache."""

    KV_VERDICT = True
    kind: Literal["kv_cache_shortfall"] = "kv_cache_shortfall"
    max_model_len: Count | None = None
    needed_gib: GiB | None = None
    available_gib: GiB | None = None
    estimated_max_model_len: Count | None = None
    kv_cache_tokens: Count | None = None
    """The V0 engine states capacity in tokens instead of GiB."""


class NoKvCacheMemory(_Memory):
    """Nothing at all is left for the KV cache after weights and activations."""

    KV_VERDICT = True
    CONTEXT = (("available_gib", "available_kv_cache_gib"),)
    kind: Literal["no_kv_cache_memory"] = "no_kv_cache_memory"
    available_gib: GiB | None = None


class AutoFitFailed(_Memory):
    """`--max-model-len auto` could not fit even one token."""

    KV_VERDICT = True
    CONTEXT = (("available_gib", "available_kv_cache_gib"),)
    kind: Literal["auto_fit_failed"] = "auto_fit_failed"
    available_gib: GiB | None = None


class CudaGraphCaptureOom(_Memory, CudaOomNumbers):
    """CUDA ran out of memory while capturing CUDA graphs."""

    kind: Literal["cuda_graph_capture_oom"] = "cuda_graph_capture_oom"
    phase_hint: str | None = None


class WeightLoadOom(_Memory, CudaOomNumbers):
    """The weights alone do not fit on the device(s)."""

    kind: Literal["weight_load_oom"] = "weight_load_oom"
    phase_hint: str | None = None


class ProfilingOom(_Memory, CudaOomNumbers):
    """CUDA OOM in the profiling forward pass or the sampler/pooler warm-up."""

    kind: Literal["profiling_oom"] = "profiling_oom"
    dummy_requests: Count | None = None
    phase_hint: str | None = None


class InsufficientFreeMemory(_Memory):
    """Less memory is free at startup than the launch asks for.

    On a GPU another process holds part of it; on the CPU backend the node has
    less free memory than the KV space requested.
    """

    RETRYABLE = True
    kind: Literal["insufficient_free_memory"] = "insufficient_free_memory"
    device: str | None = None
    free_gib: GiB | None = None
    total_gib: GiB | None = None
    gpu_memory_utilization: float | None = None
    requested_gib: GiB | None = None
