"""The texts device OOMs are read from, and the remedies per boot phase, as data.

PyTorch's caching allocators print `<device> out of memory. Tried to allocate ...`
(c10/cuda/CUDACachingAllocator.cpp; ROCm's is the same file hipified; Intel XPU's is
c10/xpu/XPUCachingAllocator.cpp). The CM rules (`cuda_memory.py`) are built from
these patterns; an attributed OOM's remedy is the one of the phase it was placed in.
"""

from __future__ import annotations

SIZE = r"-?\d+(?:\.\d+)? (?:GiB|MiB|KiB|bytes)"
TORCH_OOM = (
    r"CUDA out of memory\. Tried to allocate (?P<tried_to_allocate_gib>" + SIZE + r")\. "
    r"GPU (?P<gpu_index>\d+) has a total capacity of (?P<total_capacity_gib>" + SIZE + r") "
    r"of which (?P<free_gib>" + SIZE + r") is free\."
    r"(?:.*?with (?P<private_pools_gib>" + SIZE + r") allocated in private pools)?"
)
OLD_TORCH_OOM = (
    r"CUDA out of memory\. Tried to allocate (?P<tried_to_allocate_gib>" + SIZE + r") "
    r"\(GPU (?P<gpu_index>\d+); (?P<total_capacity_gib>" + SIZE + r") total capacity;"
    r".*?(?P<free_gib>" + SIZE + r") free;"
)
CUT_TORCH_OOM = r"CUDA out of memory\. Tried to allocate (?P<tried_to_allocate_gib>" + SIZE + r")"
"""The same text cut after the size (a paste, or a terminal that wrapped the rest)."""


def other(allocator: str, pattern: str) -> str:
    """The CUDA allocator's pattern for the ROCm/XPU allocator that prints `allocator`."""
    return pattern.replace("CUDA out of memory", allocator + " out of memory")


XPU_OOM_NO_FREE = (
    r"XPU out of memory\. Tried to allocate (?P<tried_to_allocate_gib>" + SIZE + r")\. "
    r"GPU (?P<gpu_index>\d+) has a total capacity of (?P<total_capacity_gib>" + SIZE + r")\. "
)
"""The XPU allocator before it read the device's free memory (torch 2.5-2.6)."""

PHASE_REMEDIES = (
    (
        "weight_load_oom",
        "The weights do not fit on the device(s) at this --gpu-memory-utilization: use a "
        "quantized checkpoint, more GPUs (--tensor-parallel-size), a larger card, or a higher "
        "--gpu-memory-utilization if nothing else uses the GPU. Context and batch flags "
        "cannot help.",
    ),
    (
        "profiling_oom",
        "The profiling forward pass needs more than is left after the weights: lower "
        "--max-num-batched-tokens (and --max-num-seqs), or lower --gpu-memory-utilization if "
        "another process shares the GPU.",
    ),
    (
        "cuda_graph_capture_oom",
        "Capturing CUDA graphs ran out of memory after the KV cache was allocated: lower "
        "--gpu-memory-utilization to leave room for the graphs, capture fewer or smaller ones "
        "(lower --max-num-seqs, or smaller cudagraph_capture_sizes in --compilation-config), "
        "or use --enforce-eager.",
    ),
)
"""The remedy for the phase an attributed OOM was placed in (`Rule.remediations`)."""

ANY_PHASE = (
    "The device ran out of memory at a boot phase the log does not show: weights need a "
    "quantized model or more GPUs; profiling needs a smaller --max-num-batched-tokens; graph "
    "capture needs a lower --gpu-memory-utilization, fewer capture sizes (--max-num-seqs) or "
    "--enforce-eager. Keep more of the log to tell which."
)

OOM_EXAMPLE = (
    "(EngineCore pid=3120) ERROR 11-29 17:02:10 [core.py:1510] torch.OutOfMemoryError: CUDA out "
    "of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 31.36 GiB of which "
    "1.05 GiB is free. Including non-PyTorch memory, this process has 30.30 GiB memory in use. "
    "Of the allocated memory 27.60 GiB is allocated by PyTorch, with 1.21 GiB allocated in "
    "private pools (e.g., CUDA Graphs), and 1.37 GiB is reserved by PyTorch but unallocated. If "
    "reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)
