"""Boot-phase markers, as data: the progress messages a boot prints, in phase order.

The timeline (`timeline.py`) reads boots with these; `boots.py` finds where a boot
starts with them; `vllm-bootdiag scan-source` checks every marker's wording
against a release's source, as it checks rules. A marker is the message's start
(matched at the start of an INFO message), its phase, and the numbers (facts) it
carries; a reworded message gets another alternative, never an edited one.
"""

from __future__ import annotations

from dataclasses import dataclass

PHASES: tuple[str, ...] = (
    "arguments",
    "engine_init",
    "weight_load",
    "weights_loaded",
    "compile",
    "profiling",
    "kv_cache_sized",
    "graph_capture",
    "graph_captured",
    "engine_ready",
    "api_server",
    "ready",
)
"""Boot phases in the order vLLM goes through them."""


@dataclass(frozen=True, slots=True)
class Marker:
    """A progress message: where its INFO message starts, its phase, its numbers.

    `start` is matched at the start of the message (after 0.32's optional
    `[tag] `); `facts` are (BootFacts field, regex with one group) searched in
    the message. `device` says which backend printed it, where that is known.
    """

    key: str
    start: str
    phase: str | None
    facts: tuple[tuple[str, str], ...] = ()
    device: str | None = None


_N = r"(-?\d+(?:\.\d+)?)"

MARKERS: tuple[Marker, ...] = (
    # Printed when vllm is imported (<=0.9): the first line of a boot in old releases.
    Marker("platform", r"Automatically detected platform", None),
    Marker("api_version", r"vLLM API server version|vLLM server version", "arguments"),
    # Spaces, one block character, then any of both: no two stars compete for one run,
    # so a 16 KB run of block characters costs linear time (not seconds).
    Marker("banner_version", r" *[█▀▄][ █▀▄]*version\s", "arguments"),
    Marker(
        "banner_model",
        r" *[█▀▄][ █▀▄]*model\s",
        "arguments",
        (("model", r"model\s+(\S+)\s*$"),),
    ),
    Marker(
        "non_default_args",
        r"non-default args:",
        "arguments",
        (("non_default_args", r"non-default args: (\{.*\})\s*$"), ("model", r"'model': '([^']+)'")),
    ),
    Marker("engine_init", r"Initializing an? (?:V\d )?LLM engine", "engine_init"),
    Marker("load_start", r"Starting to load model|Loading model from scratch", "weight_load"),
    Marker("load_weights", r"Loading weights took|Initializing model took", "weight_load"),
    Marker(
        "weights_loaded",
        r"Model loading took",
        "weights_loaded",
        (("model_weights_gib", r"took " + _N + r" ?GiB"),),
    ),
    Marker(
        "compile",
        r"Dynamo bytecode transform|Compiling a graph for|torch\.compile t"
        r"|Starting torch\.compile|Using cache directory|Directly load|saved AOT compiled"
        r"|Warming up model for the compilation",
        "compile",
    ),
    Marker("profiling", r"Initial profiling/warmup run|Memory profiling takes", "profiling"),
    Marker(
        "graph_profiling",
        r"Profiling CUDA graph memory|CUDA graph memory profiling is"
        r"|In v0\.19, CUDA graph memory profiling",
        "profiling",
        (
            ("cuda_graph_largest_capture", r"\(largest=(\d+)\)"),
            # gpu_worker.py (0.18-0.32): whether the estimate was subtracted from KV memory
            ("cuda_graph_profiling", r"CUDA graph memory profiling (is enabled|will be enabled)"),
            ("graph_profiling_gpu_memory_utilization", r"current --gpu-memory-utilization=" + _N),
            (
                "suggested_gpu_memory_utilization",
                r"--gpu-memory-utilization (?:to|from \S+ to) " + _N,
            ),
        ),
        device="cuda",
    ),
    Marker(
        "graph_estimate",
        r"Estimated CUDA graph memory",
        "profiling",
        (("cuda_graph_estimate_gib", r"memory: " + _N + r" GiB total"),),
        "cuda",
    ),
    Marker(
        "available_kv",
        r"Available KV cache memory",
        "kv_cache_sized",
        (("available_kv_cache_gib", r"memory: " + _N + r" ?GiB"),),
    ),
    Marker(
        "cpu_kv_set",
        r"Explicitly set \(|Auto set \(",
        "kv_cache_sized",
        (("available_kv_cache_gib", r"set \(" + _N + r"/"),),
        "cpu",
    ),
    Marker(
        "cpu_kv_default",
        r"VLLM_CPU_KVCACHE_SPACE not set",
        "kv_cache_sized",
        (("available_kv_cache_gib", r"Using " + _N + r" GiB"),),
        "cpu",
    ),
    Marker(
        "kv_size",
        r"GPU KV cache size:|CPU KV cache size:|XPU KV cache size:|HPU KV cache size:"
        r"|TPU KV cache size:|GPU \+ host KV cache size:|KV cache size:",
        "kv_cache_sized",
        (
            ("kv_cache_tokens", r"KV cache size: ([\d,]+) tokens"),
            ("max_concurrency", r"per request: " + _N + r"x"),
        ),
    ),
    Marker(
        "max_concurrency",
        r"Maximum concurrency for",
        "kv_cache_sized",
        (("max_concurrency", r"per request: " + _N + r"x"),),
    ),
    Marker("v0_blocks", r"# \w+ blocks:", "kv_cache_sized"),
    Marker(
        "auto_fit",
        r"Auto-fit max_model_len:",
        "kv_cache_sized",
        (("auto_fit_max_model_len", r"reduced from \d+ to (\d+)"),),
    ),
    Marker(
        "capture_start",
        r"Capturing cudagraphs|Capturing CUDA graph",
        "graph_capture",
        device="cuda",
    ),
    Marker(
        "graph_captured",
        r"Graph capturing finished",
        "graph_captured",
        (
            ("cuda_graph_gib", r"took " + _N + r" GiB"),
            ("cuda_graph_seconds", r"in " + _N + " secs"),
        ),
        "cuda",
    ),
    Marker(
        "engine_ready",
        r"init engine \(profile",
        "engine_ready",
        (("init_engine_seconds", r"took " + _N + r" s"),),
    ),
    Marker(
        "api_server",
        r"Starting vLLM (?:API )?server|Available routes are",
        "api_server",
        (("port", r"on (?:https?://)?\S*?:(\d+)"),),
    ),
)


# Progress printed as raw stderr (tqdm, uvicorn), found among the non-record lines.
_RAW_MARKERS: tuple[tuple[str, str, str | None], ...] = (
    ("Loading safetensors checkpoint shards", "weight_load", None),
    ("Capturing CUDA graph", "graph_capture", "cuda"),
    ("Capturing cudagraphs", "graph_capture", "cuda"),
    ("Uvicorn running on", "api_server", None),
    ("Application startup complete", "ready", None),
)
