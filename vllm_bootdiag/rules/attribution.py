"""Where a device OOM happened, as data: traceback frame names and boot phases.

A bare allocator OOM (`CUDA out of memory. Tried to allocate ...`) says nothing of
the step that needed the memory; the frames above it and the last boot-phase line
do, and each phase has its own remedy. The engine tries the frames first (graph
capture, weight loading, profiling, device initialisation, in that order), then
the last phase line; where neither is in the tail the OOM stays `device_oom`
rather than a guessed phase. Frame names are plain substrings of the frame lines
(a regex alternation over a 5 KB traceback costs tens of microseconds);
`vllm-bootdiag scan-source` checks each against a release's source.
"""

from __future__ import annotations

_GRAPH_FRAMES = (
    "capture_model",
    "_capture_cudagraphs",
    "cudagraph_utils.py",
    "torch/cuda/graphs.py",
    "profile_cudagraph_memory",
    "capture_graphs",
)
"""CUDA-graph capture (and its memory profiling, 0.18+)."""

_WEIGHT_FRAMES = (
    "in load_model",
    "load_weights",
    "model_loader",
    "weight_utils",
    "initialize_model",
    "in create_weights",
    "in process_weights_after_loading",
    "repack",
)
"""Weight loading: building the layers (`create_weights`), reading the checkpoint,
and post-processing it (`process_weights_after_loading`, quantization repacks such
as `gptq_marlin_repack`), which allocates a second copy of a layer's weights."""

_PROFILE_FRAMES = (
    "profile_run",
    "_dummy_run",
    "_dummy_sampler_run",
    "determine_available_memory",
    "warming_up_model",
)
"""The profiling forward pass and the sampler/pooler warm-up."""

_DEVICE_INIT_FRAMES = ("in init_device",)
"""The worker's device set-up, before any weight (0.33.0 creates the cuBLAS handles
there with a `torch.mm`): an OOM here means the GPU was already nearly full."""

FRAME_GROUPS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("cuda_graph_capture_oom", _GRAPH_FRAMES, "traceback: CUDA-graph capture frames"),
    ("weight_load_oom", _WEIGHT_FRAMES, "traceback: weight-loading frames"),
    ("profiling_oom", _PROFILE_FRAMES, "traceback: profiling frames"),
    (
        "device_oom",
        _DEVICE_INIT_FRAMES,
        "traceback: device initialisation (init_device): the GPU was nearly full before "
        "vLLM loaded anything; another process holds its memory",
    ),
)
"""(outcome kind, frame names, phase hint), tried in this order."""

_PHASE_TO_OOM = {
    "arguments": "weight_load_oom",
    "engine_init": "weight_load_oom",
    "weight_load": "weight_load_oom",
    "weights_loaded": "profiling_oom",
    "compile": "profiling_oom",
    "profiling": "profiling_oom",
    "kv_cache_sized": "cuda_graph_capture_oom",
    "graph_capture": "cuda_graph_capture_oom",
}
"""The last boot phase before an OOM with no telling frames -> the OOM's kind (the
weights are the first large allocation after the engine starts)."""

FRAME_WINDOW = 120
"""How many lines above an OOM its traceback may start."""

FRAME_STARTS = ("  File ", "    ", "  ^", "Traceback (most recent call last)")
"""How the lines of a traceback start (after a process tag): a paste that begins at
the frames, without the `Traceback` header, is still read as one."""
