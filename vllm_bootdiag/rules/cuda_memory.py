"""Device out-of-memory during boot: weight load, profiling, sampler warm-up, graph capture.

The torch text comes from PyTorch's caching allocators: CUDA
(c10/cuda/CUDACachingAllocator.cpp), ROCm (the same file hipified: `HIP out of
memory`) and Intel XPU (c10/xpu/XPUCachingAllocator.cpp). Graph capture and
cuBLAS raise the CUDA runtime's own text instead (`CUDA error: out of memory`,
c10/cuda/CUDAException.cpp:29), the driver API another (`CUDA driver error: out
of memory`, c10/cuda/driver_api.h:16), Intel's runtime its enum name. vLLM wraps
the torch text at weight load (0.13+) and in the sampler/pooler warm-up. A bare
OOM is attributed to its boot phase by the engine (`attribution="cuda_oom_phase"`);
where no phase can be told it stays `device_oom`, with the remedies of every phase.
"""

from __future__ import annotations

from . import cuda_memory_texts as t
from .schema import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="CM001",
        printed_by="pytorch",
        name="torch-cuda-oom",
        vllm="",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="CUDA out of memory. Tried to allocate",
        patterns=(t.TORCH_OOM, t.OLD_TORCH_OOM, t.CUT_TORCH_OOM),
        constants=(("device", "CUDA"),),
        remediations=t.PHASE_REMEDIES,
        examples=(
            t.OOM_EXAMPLE,
            "RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 20.00 "
            "MiB. GPU 1 has a total capacity of 79.19 GiB of which 6.56 MiB is free. Process "
            "2493055 has 79.17 GiB memory in use. Of the allocated memory 76.85 GiB is allocated "
            "by PyTorch, and 351.04 MiB is reserved by PyTorch but unallocated.', please check the "
            "stack trace above for the root cause",
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; "
            "23.65 GiB total capacity; 21.90 GiB already allocated; 98.06 MiB free; 22.31 GiB "
            "reserved in total by PyTorch)",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 108.00 MiB.",
        ),
        counter_examples=(
            "INFO 11-29 17:02:10 [gpu_model_runner.py:5149] Model loading took 14.99 GiB memory "
            "and 21.338710 seconds",
        ),
        summary="PyTorch could not allocate CUDA memory; the boot phase says which step "
        "needed it (weights, profiling, graph capture).",
        remediation=t.ANY_PHASE,
        references=(
            "c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc "
            "(TORCH_CHECK_WITH(OutOfMemoryError, ...), pytorch@001074d)",
        ),
    ),
    Rule(
        id="CM002",
        name="weight-load-oom",
        vllm=">=0.13",
        outcome="weight_load_oom",
        literal="Failed to load model - not enough GPU memory",
        patterns=(
            r"Failed to load model - not enough GPU memory\.(?:.*?\(original error: "
            + t.TORCH_OOM
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
    Rule(
        id="CM004",
        status="preview",
        printed_by="pytorch",
        name="torch-hip-oom",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="HIP out of memory. Tried to allocate",
        patterns=tuple(t.other("HIP", p) for p in (t.TORCH_OOM, t.OLD_TORCH_OOM, t.CUT_TORCH_OOM)),
        constants=(("device", "HIP"),),
        remediations=t.PHASE_REMEDIES,
        examples=(
            "(EngineCore_DP0 pid=4242) torch.OutOfMemoryError: HIP out of memory. Tried to "
            "allocate 2.00 GiB. GPU 0 has a total capacity of 191.98 GiB of which 1.21 GiB is "
            "free. Of the allocated memory 180.02 GiB is allocated by PyTorch, and 3.11 GiB is "
            "reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
            "try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid "
            "fragmentation.  See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        ),
        summary="PyTorch on ROCm could not allocate device memory; the boot phase says which "
        "step needed it.",
        remediation=t.ANY_PHASE,
        references=(
            "c10/cuda/CUDACachingAllocator.cpp hipified for ROCm builds "
            "(tools/amd_build/build_amd.py), the same OutOfMemoryError text with HIP",
        ),
    ),
    Rule(
        id="CM005",
        status="preview",
        printed_by="pytorch",
        name="torch-xpu-oom",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="XPU out of memory. Tried to allocate",
        patterns=(
            t.other("XPU", t.TORCH_OOM),
            t.XPU_OOM_NO_FREE,
            t.other("XPU", t.OLD_TORCH_OOM).replace(r".*?(?P<free_gib>" + t.SIZE + r") free;", ""),
            t.other("XPU", t.CUT_TORCH_OOM),
        ),
        constants=(("device", "XPU"),),
        remediations=t.PHASE_REMEDIES,
        examples=(
            "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 1.50 GiB. GPU 0 has a "
            "total capacity of 23.99 GiB of which 512.00 MiB is free. Of the allocated memory "
            "22.10 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but "
            "unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
            "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 1.50 GiB. GPU 0 has a "
            "total capacity of 23.99 GiB. Of the allocated memory 22.10 GiB is allocated by "
            "PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated. Please use "
            "`empty_cache` to release all unoccupied cached memory.",
            "RuntimeError: XPU out of memory. Tried to allocate 1.50 GiB (GPU 0; 15.56 GiB total "
            "capacity; 13.20 GiB already allocated; 14.01 GiB reserved in total by PyTorch)",
        ),
        summary="PyTorch on an Intel GPU could not allocate device memory; the boot phase says "
        "which step needed it.",
        remediation=t.ANY_PHASE,
        references=(
            "c10/xpu/XPUCachingAllocator.cpp DeviceCachingAllocator::malloc "
            "(TORCH_CHECK_WITH(OutOfMemoryError, ...))",
        ),
    ),
    Rule(
        id="CM006",
        status="preview",
        printed_by="pytorch",
        name="cuda-error-out-of-memory",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="CUDA error: out of memory",
        patterns=(r"(?P<device>CUDA) error: out of memory",),
        remediations=t.PHASE_REMEDIES,
        examples=(
            "(EngineCore_DP0 pid=4242) torch.AcceleratorError: CUDA error: out of memory",
            "RuntimeError: CUDA error: out of memory",
        ),
        summary="The CUDA runtime itself returned cudaErrorMemoryAllocation (graph capture, "
        "cuBLAS and NCCL allocate outside torch's allocator).",
        remediation=t.ANY_PHASE,
        references=(
            "c10/cuda/CUDAException.cpp:29 ('CUDA error: ' + cudaGetErrorString)",
            "CUDA runtime: cudaErrorMemoryAllocation (2) 'out of memory'",
        ),
    ),
    Rule(
        id="CM007",
        status="preview",
        printed_by="pytorch",
        name="hip-error-out-of-memory",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="HIP error: out of memory",
        patterns=(r"(?P<device>HIP) error: out of memory",),
        remediations=t.PHASE_REMEDIES,
        examples=("RuntimeError: HIP error: out of memory",),
        summary="The HIP runtime returned hipErrorOutOfMemory outside torch's allocator.",
        remediation=t.ANY_PHASE,
        references=("c10/cuda/CUDAException.cpp:29 hipified ('HIP error: ' + hipGetErrorString)",),
    ),
    Rule(
        id="CM008",
        status="preview",
        printed_by="pytorch",
        name="cuda-driver-error-out-of-memory",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="CUDA driver error: out of memory",
        patterns=(r"(?P<device>CUDA) driver error: out of memory",),
        remediations=t.PHASE_REMEDIES,
        examples=("RuntimeError: CUDA driver error: out of memory",),
        summary="A CUDA driver API call (expandable segments, virtual memory) returned "
        "CUDA_ERROR_OUT_OF_MEMORY.",
        remediation=t.ANY_PHASE,
        references=("c10/cuda/driver_api.h:16 C10_CUDA_DRIVER_CHECK ('CUDA driver error: ')",),
    ),
    Rule(
        id="CM009",
        status="preview",
        printed_by="pytorch",
        name="xpu-out-of-device-memory",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=45,
        literal="UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
        patterns=(r"UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",),
        constants=(("device", "XPU"),),
        remediations=t.PHASE_REMEDIES,
        examples=(
            "RuntimeError: Native API failed. Native API returns: 39 "
            "(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
        ),
        summary="Intel's Level Zero / Unified Runtime could not allocate device memory "
        "(outside torch's XPU allocator).",
        remediation=t.ANY_PHASE,
        references=(
            "oneapi-src/unified-runtime include/ur_api.h UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
            "intel/llvm sycl: 'Native API failed. Native API returns: ' + codeToString",
        ),
    ),
    Rule(
        id="CM010",
        status="preview",
        name="unquantized-linear-weights-oom",
        vllm=">=0.11,<0.12",
        outcome="weight_load_oom",
        literal="Failed to create unquantized linear weights",
        patterns=(
            r"Failed to create unquantized linear weights: " + t.TORCH_OOM,
            r"Failed to create unquantized linear weights[.:]",
        ),
        examples=(
            "(EngineCore_DP0 pid=4242) ERROR 12-01 10:02:11 [linear.py:210] Failed to create "
            "unquantized linear weights: CUDA out of memory. Tried to allocate 448.00 MiB. GPU "
            "0 has a total capacity of 23.52 GiB of which 216.75 MiB is free. Of the allocated "
            "memory 22.89 GiB is allocated by PyTorch, and 11.40 MiB is reserved by PyTorch but "
            "unallocated.",
            "RuntimeError: Failed to create unquantized linear weights. This may be caused by "
            "insufficient memory to allocate the weight.",
        ),
        summary="vLLM ran out of device memory creating a linear layer's weights (0.11).",
        remediation=dict(t.PHASE_REMEDIES)["weight_load_oom"],
        references=("vllm/model_executor/layers/linear.py:210 and :217 (0.11.0)",),
    ),
    Rule(
        id="CM011",
        status="preview",
        printed_by="pytorch",
        name="torch-oom-capacity-line",
        outcome="device_oom",
        attribution="cuda_oom_phase",
        rank=44,
        literal=" has a total capacity of ",
        patterns=(
            r"(?:^|\) )GPU (?P<gpu_index>\d+) has a total capacity of (?P<total_capacity_gib>"
            + t.SIZE
            + r") of which (?P<free_gib>"
            + t.SIZE
            + r") is free\.(?:.*?with (?P<private_pools_gib>"
            + t.SIZE
            + r") allocated in private pools)?",
        ),
        remediations=t.PHASE_REMEDIES,
        examples=(
            "GPU 0 has a total capacity of 23.52 GiB of which 96.75 MiB is free. Of the allocated "
            "memory 22.89 GiB is allocated by PyTorch, and 11.40 MiB is reserved by PyTorch but "
            "unallocated.",
            "(EngineCore_DP0 pid=4242) GPU 1 has a total capacity of 79.19 GiB of which 6.56 MiB "
            "is free. Process 2493055 has 79.17 GiB memory in use.",
        ),
        counter_examples=(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 108.00 MiB. GPU 0 has a "
            "total capacity of 23.52 GiB of which 96.75 MiB is free.",
        ),
        summary="The second half of an allocator OOM that a terminal or a paste put on its own "
        "line: its numbers join the OOM above it.",
        remediation=t.ANY_PHASE,
        references=(
            "c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc (the '. GPU ', "
            "device, ' has a total capacity of ' part of the OutOfMemoryError text)",
        ),
    ),
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="CM101",
        printed_by="pytorch",
        name="device-oom-core",
        tier="tolerant",
        covers=("CM001", "CM004", "CM005"),
        outcome="device_oom",
        attribution="cuda_oom_phase",
        remediations=t.PHASE_REMEDIES,
        literal=" out of memory.",
        patterns=(
            r"(?:Error: |Exception: |error '|error: )(?P<device>CUDA|HIP|XPU) out of memory\.",
        ),
        examples=(
            # CM001's corpus line cut by a viewer inside the size
            "(EngineCore pid=3120) ERROR 11-29 17:02:10 [core.py:1510] torch.OutOfMemoryError: "
            "CUDA out of memory. Tried to allocate 1.…",
        ),
        counter_examples=(
            "ValueError: CUDA out of memory occurred when warming up sampler with 256 dummy "
            "requests.",
        ),
        summary="torch's allocator ran out of device memory (the sentence's core); the phase "
        "is read from the traceback and the boot's progress, as for the exact rules.",
        remediation=t.ANY_PHASE,
        references=("c10/cuda/CUDACachingAllocator.cpp (CM001's message)",),
    ),
)
