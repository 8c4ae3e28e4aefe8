"""CUDA out-of-memory during boot: weight load, profiling, sampler warm-up, graph capture.

The torch text comes from PyTorch's caching allocator; vLLM wraps it only at
weight load (0.13+) and in the sampler/pooler warm-up. A bare torch OOM is
attributed to its boot phase by the engine (`attribution="cuda_oom_phase"`).
"""

from __future__ import annotations

from .schema import Rule

_SIZE = r"-?\d+(?:\.\d+)? (?:GiB|MiB|KiB|bytes)"
_TORCH_OOM = (
    r"CUDA out of memory\. Tried to allocate (?P<tried_to_allocate_gib>" + _SIZE + r")\. "
    r"GPU (?P<gpu_index>\d+) has a total capacity of (?P<total_capacity_gib>" + _SIZE + r") "
    r"of which (?P<free_gib>" + _SIZE + r") is free\."
    r"(?:.*?with (?P<private_pools_gib>" + _SIZE + r") allocated in private pools)?"
)
_OLD_TORCH_OOM = (
    r"CUDA out of memory\. Tried to allocate (?P<tried_to_allocate_gib>" + _SIZE + r") "
    r"\(GPU (?P<gpu_index>\d+); (?P<total_capacity_gib>" + _SIZE + r") total capacity;"
    r".*?(?P<free_gib>" + _SIZE + r") free;"
)

_OOM_EXAMPLE = (
    "(EngineCore pid=3120) ERROR 11-29 17:02:10 [core.py:1510] torch.OutOfMemoryError: CUDA out "
    "of memory. Tried to allocate 1.96 GiB. GPU 0 has a total capacity of 31.36 GiB of which "
    "1.05 GiB is free. Including non-PyTorch memory, this process has 30.30 GiB memory in use. "
    "Of the allocated memory 27.60 GiB is allocated by PyTorch, with 1.21 GiB allocated in "
    "private pools (e.g., CUDA Graphs), and 1.37 GiB is reserved by PyTorch but unallocated. If "
    "reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="CM001",
        printed_by="pytorch",
        name="torch-cuda-oom",
        vllm="",
        outcome="profiling_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="CUDA out of memory. Tried to allocate",
        patterns=(_TORCH_OOM, _OLD_TORCH_OOM),
        examples=(
            _OOM_EXAMPLE,
            "RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 20.00 "
            "MiB. GPU 1 has a total capacity of 79.19 GiB of which 6.56 MiB is free. Process "
            "2493055 has 79.17 GiB memory in use. Of the allocated memory 76.85 GiB is allocated "
            "by PyTorch, and 351.04 MiB is reserved by PyTorch but unallocated.', please check the "
            "stack trace above for the root cause",
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; "
            "23.65 GiB total capacity; 21.90 GiB already allocated; 98.06 MiB free; 22.31 GiB "
            "reserved in total by PyTorch)",
        ),
        counter_examples=(
            "INFO 11-29 17:02:10 [gpu_model_runner.py:5149] Model loading took 14.99 GiB memory "
            "and 21.338710 seconds",
        ),
        summary="PyTorch could not allocate CUDA memory; the boot phase says which step "
        "needed it (weights, profiling, graph capture).",
        remediation="Depends on the phase: weights need a smaller or quantized model or more "
        "GPUs; profiling needs a smaller --max-num-batched-tokens; graph capture needs fewer or "
        "smaller capture sizes (--max-num-seqs) or --enforce-eager.",
        references=("PyTorch c10/cuda/CUDACachingAllocator.cpp (OutOfMemoryError text)",),
    ),
    Rule(
        id="CM002",
        name="weight-load-oom",
        vllm=">=0.13",
        outcome="weight_load_oom",
        literal="Failed to load model - not enough GPU memory",
        patterns=(
            r"Failed to load model - not enough GPU memory\.(?:.*?\(original error: "
            + _TORCH_OOM
            + r")?",
        ),
        examples=(
            "(EngineCore pid=3120) ERROR 11-29 17:01:40 [gpu_model_runner.py:5139] Failed to load "
            "model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory "
            "for weights, increasing --tensor-parallel-size, or using --quantization. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more tips. "
            "(original error: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 0 has a total "
            "capacity of 23.52 GiB of which 512.75 MiB is free. Of the allocated memory 22.60 GiB "
            "is allocated by PyTorch, and 5.12 MiB is reserved by PyTorch but unallocated.)",
        ),
        summary="The weights do not fit on the device(s) at this gpu_memory_utilization.",
        remediation="No launch flag shrinks weights: use a quantized checkpoint, more GPUs "
        "(--tensor-parallel-size), or a larger card.",
        references=(
            "vllm/v1/worker/gpu_model_runner.py:3649 (0.13.0)",
            "gpu_model_runner.py:5139 (0.32.0)",
        ),
    ),
    Rule(
        id="CM003",
        name="sampler-warmup-oom",
        vllm="",
        outcome="profiling_oom",
        literal="CUDA out of memory occurred when warming up",
        patterns=(
            r"CUDA out of memory occurred when warming up (?:sampler|pooler)"
            r"(?: \(task=[^)]*\))? with (?P<dummy_requests>\d+) dummy requests",
        ),
        examples=(
            "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy "
            "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when "
            "initializing the engine.",
            "RuntimeError: CUDA out of memory occurred when warming up pooler (task='embed') with "
            "256 dummy requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` "
            "when initializing the engine.",
        ),
        summary="The sampler (or pooler) warm-up with max_num_seqs dummy requests ran out of "
        "CUDA memory.",
        remediation="Lower --max-num-seqs (and --max-num-batched-tokens), or lower "
        "--gpu-memory-utilization if another process shares the GPU.",
        references=(
            "vllm/v1/worker/gpu_model_runner.py _dummy_sampler_run (0.8.5-0.32.0)",
            "gpu_model_runner.py _dummy_pooler_run_task (0.10.0-0.32.0)",
        ),
    ),
)
