"""Boot-phase markers, as data: the progress messages a boot prints, in phase order.

The timeline (`timeline.py`) reads boots with these; `boots.py` finds where a boot
starts with them; `vllm-bootdiag scan-source` checks every marker's wording
against a release's source, as it checks rules. A marker is the message's start
(matched at the start of an INFO message), its phase, the numbers (facts) it
carries, the range of releases that print it and example lines from the corpus
(tests/test_timeline_markers.py checks them); a reworded message gets another
alternative, never an edited one.

No marker for `VLLM_CPU_KVCACHE_SPACE not set. Using N GiB` (0.13-0.19): vLLM logs
it as a WARNING (vllm/platforms/cpu.py:158 in 0.13.0), and warnings are never
offered to markers, so it could not fire.
"""

from __future__ import annotations

from typing import NamedTuple

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


class Marker(NamedTuple):
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
    vllm: str = ""
    """PEP 440 range of the releases whose source prints one of `start`'s wordings (at
    INFO, or DEBUG); documentation and checks only: a marker is read in any release."""
    examples: tuple[str, ...] = ()
    """Lines (or the first part of a long line) from a corpus log of that range; for a
    marker no corpus log shows yet, rendered from the cited format string."""


_N = r"(-?\d+(?:\.\d+)?)"

MARKERS: tuple[Marker, ...] = (
    # Printed when vllm is imported (<=0.9): the first line of a boot in old releases.
    Marker(
        "platform",
        r"Automatically detected platform",
        None,
        vllm=">=0.8.5",
        examples=("INFO 11-29 17:39:54 [__init__.py:241] Automatically detected platform cpu.",),
    ),
    Marker(
        "api_version",
        r"vLLM API server version|vLLM server version",
        "arguments",
        vllm=">=0.8.5",
        examples=("INFO 11-29 17:48:51 [api_server.py:1043] vLLM API server version 0.8.5",),
    ),
    # Spaces, one block character, then any of both: no two stars compete for one run,
    # so a 16 KB run of block characters costs linear time (not seconds).
    Marker(
        "banner_version",
        r" *[█▀▄][ █▀▄]*version\s",
        "arguments",
        vllm=">=0.16",
        examples=(
            "(APIServer pid=5941) INFO 11-29 17:28:40 [utils.py:287]  ▄▄ ▄█ █     █     █ "
            "▀▄▀ █  version 0.16.0",
        ),
    ),
    Marker(
        "banner_model",
        r" *[█▀▄][ █▀▄]*model\s",
        "arguments",
        (("model", r"model\s+(\S+)\s*$"),),
        vllm=">=0.16",
        examples=(
            "(APIServer pid=5941) INFO 11-29 17:28:40 [utils.py:287]   █▄█▀ █     █     █  "
            "   █  model   some-org/does-not-exist",
        ),
    ),
    Marker(
        "non_default_args",
        r"non-default args:",
        "arguments",
        (("non_default_args", r"non-default args: (\{.*\})\s*$"), ("model", r"'model': '([^']+)'")),
        vllm=">=0.9.2",
        examples=(
            "(APIServer pid=20165) INFO 11-29 16:42:54 [utils.py:238] non-default args: "
            "{'model_tag': '<models>/llama-3.2-1b-shape', 'host': '127.0.0.1', 'port': "
            "59285, 'model': '<models>/llama-3.2-1b-shape', 'load_format': 'dummy'}",
        ),
    ),
    Marker(
        "engine_init",
        r"Initializing an? (?:V\d )?LLM engine",
        "engine_init",
        vllm=">=0.8.5",
        examples=(
            "INFO 11-29 17:48:13 [llm_engine.py:240] Initializing a V0 LLM engine (v0.8.5) "
            "with config: model='<models>/unknown-arch-shape', ",
            "(EngineCore_DP0 pid=19509) INFO 11-29 16:41:16 [core.py:101] Initializing a "
            "V1 LLM engine (v0.17.0) with config: model='<models>/smollm2-135m-shape', ",
        ),
    ),
    Marker(
        "load_start",
        r"Starting to load model|Loading model from scratch",
        "weight_load",
        vllm=">=0.8.5",
        examples=(
            "(Worker pid=574) INFO 11-29 17:05:36 [cpu_model_runner.py:68] Starting to "
            "load model <models>/qwen2.5-0.5b-shape...",
            "(EngineCore pid=25443) INFO 11-29 16:54:53 [model_runner.py:308] Loading "
            "model from scratch...",
        ),
    ),
    Marker(
        "load_weights",
        r"Loading weights took|Initializing model took",
        "weight_load",
        vllm=">=0.8.5",
        examples=(
            "(Worker pid=574) INFO 11-29 17:05:37 [base_loader.py:82] Initializing model "
            "took 0.206279 seconds",
        ),
    ),
    # config.py:2004 (0.8.5), config/scheduler.py:308 (0.32.0), :311 (0.33.0): the value
    # the boot ran with, whatever the release's defaults (the planner cuts from it).
    Marker(
        "chunked_prefill",
        r"Chunked prefill is enabled with",
        None,
        (("max_num_batched_tokens", r"max_num_batched_tokens=(\d+)"),),
        vllm=">=0.8.5",
        examples=(
            "(APIServer pid=6018) INFO 11-29 17:29:26 [scheduler.py:224] Chunked prefill is "
            "enabled with max_num_batched_tokens=2048.",
        ),
    ),
    Marker(
        "weights_loaded",
        r"Model loading took",
        "weights_loaded",
        (("model_weights_gib", r"took " + _N + r" ?GiB"),),
        vllm=">=0.8.5",
        examples=(
            "(EngineCore pid=25443) INFO 11-29 16:54:53 [model_runner.py:329] Model "
            "loading took 2.32 GiB and 1.873202 seconds",
        ),
    ),
    Marker(
        "compile",
        r"Dynamo bytecode transform|Compiling a graph for|torch\.compile t"
        r"|Starting torch\.compile|Using cache directory|Directly load|saved AOT compiled"
        r"|Warming up model for the compilation",
        "compile",
        vllm=">=0.8.5",
        examples=(
            "(EngineCore_DP0 pid=20178) INFO 11-29 16:43:10 [backends.py:976] Dynamo "
            "bytecode transform time: 5.37 s",
            "(EngineCore_DP0 pid=20178) INFO 11-29 16:43:10 [monitor.py:35] torch.compile "
            "takes 16.99 s in total",
            "(Worker pid=574) INFO 11-29 17:05:41 [cpu_model_runner.py:87] Warming up "
            "model for the compilation...",
        ),
    ),
    Marker(
        "profiling",
        r"Initial profiling/warmup run|Memory profiling takes",
        "profiling",
        vllm=">=0.8.5",
        examples=(
            "(Worker pid=13472) INFO 11-29 16:35:02 [monitor.py:81] Initial "
            "profiling/warmup run took 5.43 s",
        ),
    ),
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
        vllm=">=0.18",
        examples=(
            "(EngineCore pid=13399) INFO 11-29 16:35:06 [gpu_model_runner.py:6279] "
            "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)",
            "(EngineCore pid=13399) INFO 11-29 16:35:06 [gpu_worker.py:481] CUDA graph "
            "memory profiling is enabled (default since v0.21.0). The current "
            "--gpu-memory-utilization=0.9200 is equivalent to "
            "--gpu-memory-utilization=0.9005 without CUDA graph memory profiling. To "
            "maintain the same effective KV cache size as before, increase "
            "--gpu-memory-utilization to 0.9395. To disable, set "
            "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
        ),
    ),
    Marker(
        "graph_estimate",
        r"Estimated CUDA graph memory",
        "profiling",
        (("cuda_graph_estimate_gib", r"memory: " + _N + r" GiB total"),),
        "cuda",
        vllm=">=0.18",
        examples=(
            "(EngineCore pid=13399) INFO 11-29 16:35:06 [gpu_model_runner.py:6365] "
            "Estimated CUDA graph memory: 0.43 GiB total",
        ),
    ),
    Marker(
        "available_kv",
        r"Available KV cache memory",
        "kv_cache_sized",
        (("available_kv_cache_gib", r"memory: " + _N + r" ?GiB"),),
        vllm=">=0.9.1",
        examples=(
            "(EngineCore pid=10452) INFO 11-29 16:00:40 [gpu_worker.py:759] Available KV "
            "cache memory: 2.61 GiB",
        ),
    ),
    Marker(
        "cpu_kv_set",
        r"Explicitly set \(|Auto set \(",
        "kv_cache_sized",
        (("available_kv_cache_gib", r"set \(" + _N + r"/"),),
        "cpu",
        vllm=">=0.20",
        examples=(
            "(Worker pid=879) INFO 11-29 17:07:19 [cpu_worker.py:271] Explicitly set "
            "(2.0/23.54) GiB for KV cache on node 0.",
        ),
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
        vllm=">=0.8.5",
        examples=(
            "(EngineCore pid=5580) INFO 11-29 17:27:29 [kv_cache_utils.py:1711] GPU KV "
            "cache size: 93,184 tokens",
            "(EngineCore pid=867) INFO 11-29 17:07:19 [kv_cache_utils.py:2395] CPU KV "
            "cache size: 93,184 tokens, Maximum concurrency for 8,192 tokens per request: "
            "11.38x",
        ),
    ),
    Marker(
        "max_concurrency",
        r"Maximum concurrency for",
        "kv_cache_sized",
        (("max_concurrency", r"per request: " + _N + r"x"),),
        vllm=">=0.8.5",
        examples=(
            "(EngineCore pid=5580) INFO 11-29 17:27:29 [kv_cache_utils.py:1716] Maximum "
            "concurrency for 8,192 tokens per request: 11.38x",
        ),
    ),
    Marker(
        "v0_blocks",
        r"# \w+ blocks:",
        "kv_cache_sized",
        vllm=">=0.8.5,<0.12",
        examples=(
            # rendered from vllm/executor/executor_base.py:112 (0.8.5)
            "INFO 11-29 17:48:20 [executor_base.py:112] # cuda blocks: 7281, # CPU blocks: 2048",
        ),
    ),
    Marker(
        "auto_fit",
        r"Auto-fit max_model_len:",
        "kv_cache_sized",
        (("auto_fit_max_model_len", r"reduced from \d+ to (\d+)"),),
        vllm=">=0.14",
        examples=(
            "(EngineCore pid=32328) INFO 11-29 17:03:56 [kv_cache_utils.py:2477] Auto-fit "
            "max_model_len: reduced from 131072 to 32640 to fit in available KV cache "
            "memory (1.0 GiB CPU)",
        ),
    ),
    Marker(
        "capture_start",
        r"Capturing cudagraphs|Capturing CUDA graph",
        "graph_capture",
        device="cuda",
        vllm=">=0.8.5",
        examples=(
            # rendered from vllm/worker/model_runner.py:1450 (0.8.5)
            "INFO 11-29 17:48:20 [model_runner.py:1450] Capturing cudagraphs for decoding. "
            "This may lead to unexpected consequences if the model is not static.",
        ),
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
        vllm=">=0.8.5",
        examples=(
            # rendered from vllm/v1/worker/gpu_model_runner.py:6582 (0.32.0)
            "(EngineCore pid=1) INFO 11-29 16:15:40 [gpu_model_runner.py:6582] Graph "
            "capturing finished in 5 secs, took 0.45 GiB",
        ),
    ),
    Marker(
        "engine_ready",
        r"init engine \(profile",
        "engine_ready",
        (("init_engine_seconds", r"took " + _N + r" s"),),
        vllm=">=0.8.5",
        examples=(
            "(EngineCore pid=867) INFO 11-29 17:07:20 [core.py:379] init engine (profile, "
            "create kv cache, warmup model) took 0.89 s",
        ),
    ),
    Marker(
        "api_server",
        r"Starting vLLM (?:API )?server|Available routes are",
        "api_server",
        (("port", r"on (?:https?://)?\S*?:(\d+)"),),
        vllm=">=0.8.5",
        examples=(
            "(APIServer pid=854) INFO 11-29 17:07:20 [entry.py:139] Starting vLLM server "
            "on http://127.0.0.1:41747",
            "(APIServer pid=946) INFO 11-29 17:07:57 [launcher.py:37] Available routes are:",
        ),
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
