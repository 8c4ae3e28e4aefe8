"""The names a launch setting goes by: its `vllm serve` flag, the worker's
environment variable, vLLM's own environment variables that change a boot, and
the conversion of one argv or env string to the setting's typed value."""

from __future__ import annotations

from typing import Any

import regex

from .launch_values import parse_bool, parse_float, parse_int, parse_len, parse_sizes

VALUE_FLAGS: dict[str, str] = {
    "model": "--model",
    "max_model_len": "--max-model-len",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "max_num_seqs": "--max-num-seqs",
    "max_num_batched_tokens": "--max-num-batched-tokens",
    "kv_cache_dtype": "--kv-cache-dtype",
    "tensor_parallel_size": "--tensor-parallel-size",
    "block_size": "--block-size",
    "kv_cache_memory_bytes": "--kv-cache-memory-bytes",
    "port": "--port",
}
"""Typed field -> the flag `to_argv` renders it as (and `from_argv` reads)."""
FLAG_TO_FIELD = {flag: field for field, flag in VALUE_FLAGS.items()}
ALIASES = {"-tp": "--tensor-parallel-size"}
COMPILATION_FLAGS = ("--compilation-config", "-O")

ENV_NAMES: dict[str, str] = {
    "model": "MODEL_NAME",
    "max_model_len": "MAX_MODEL_LEN",
    "gpu_memory_utilization": "GPU_MEMORY_UTILIZATION",
    "max_num_seqs": "MAX_NUM_SEQS",
    "max_num_batched_tokens": "MAX_NUM_BATCHED_TOKENS",
    "enforce_eager": "ENFORCE_EAGER",
    "kv_cache_dtype": "KV_CACHE_DTYPE",
    "cudagraph_capture_sizes": "CUDAGRAPH_CAPTURE_SIZES",
    "max_cudagraph_capture_size": "MAX_CUDAGRAPH_CAPTURE_SIZE",
    "cudagraph_mode": "CUDAGRAPH_MODE",
    "tensor_parallel_size": "TENSOR_PARALLEL_SIZE",
    "block_size": "BLOCK_SIZE",
    "kv_cache_memory_bytes": "KV_CACHE_MEMORY_BYTES",
    "port": "PORT",
}
"""Field -> the environment variable a serving worker reads it from (the names
the common serverless vLLM workers use; CUDAGRAPH_MODE follows their pattern for
`compilation_config.cudagraph_mode`, so an env-only relaunch can carry it)."""

VLLM_ENV_NAMES: tuple[str, ...] = (
    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS",
    "VLLM_USE_V2_MODEL_RUNNER",
    "VLLM_CPU_KVCACHE_SPACE",
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    "PYTORCH_CUDA_ALLOC_CONF",
)
"""vLLM's own environment variables that change what a boot reserves or accepts:
`from_env` keeps them in `LaunchConfig.env`, so the planner knows (for one) whether
the CUDA-graph estimate was subtracted, and a relaunch carries them."""

ENV_NAME = regex.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

CUDAGRAPH_MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
"""vLLM's CUDAGraphMode names (config/compilation.py, from 0.10.1); vLLM reads a
string value case-insensitively (`CUDAGraphMode[value.upper()]`)."""


def convert(field: str, text: str) -> Any:
    """An argv or env string -> the field's typed value."""
    if field == "max_model_len":
        return parse_len(text)
    if field == "gpu_memory_utilization":
        return parse_float(text, field)
    if field == "enforce_eager":
        return parse_bool(text, field)
    if field == "cudagraph_capture_sizes":
        return parse_sizes(text, field)
    if field == "cudagraph_mode":
        return text.strip().upper()
    if field in ("model", "kv_cache_dtype"):
        return text
    return parse_int(text, field)


def show(value: Any) -> str:
    """A typed value as a flag's or variable's text (floats exactly)."""
    if isinstance(value, float):
        return repr(value)
    return str(value)
