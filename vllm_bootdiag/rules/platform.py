"""The machine cannot run this build as launched: GPU architecture, driver, devices, attention.

Most of these texts come from PyTorch and the CUDA runtime, not from vLLM: torch's
capability warnings (torch/cuda/__init__.py), the CUDA error strings it wraps
(`CUDA error: <cudaGetErrorString>`, c10/cuda/CUDAException.cpp) and its driver
checks (c10/cuda/CUDAFunctions.cpp). vLLM's own are the platform detection
(`Failed to infer device type`), the world-size checks and the attention-backend
selection. Example lines are rendered from those format strings.
"""

from __future__ import annotations

from .schema import Rule

_ENGINE = "(EngineCore_DP0 pid=4242) "
_TORCH_CUDA = "torch/cuda/__init__.py"
_ARCH_REMEDY = (
    "This GPU is newer (or older) than the kernels in the installed torch/vLLM build: "
    "install a build compiled for its architecture (a torch and vLLM wheel for a CUDA "
    "release that supports it), or run on a supported GPU. Restarting cannot help."
)
_DRIVER_REMEDY = (
    "The NVIDIA driver is older than the CUDA runtime the build needs: upgrade the host "
    "driver (or the container's CUDA forward-compat package), or install a torch/vLLM "
    "build for the CUDA version the driver supports. Restarting cannot help."
)
_NO_GPU_REMEDY = (
    "No accelerator is visible to the process: check that the container was started with "
    "GPU access (--gpus / the device plugin), CUDA_VISIBLE_DEVICES, and that the driver "
    "is loaded (nvidia-smi); on a CPU-only host install the CPU build or set "
    "VLLM_TARGET_DEVICE=cpu."
)
_DEVICES_REMEDY = (
    "The parallel layout needs more devices than this node shows: lower "
    "--tensor-parallel-size / --pipeline-parallel-size to fit the visible GPUs, or give "
    "the container more GPUs (check CUDA_VISIBLE_DEVICES)."
)
_SHUTDOWN = ("Application startup complete",)
"""torch initialises CUDA lazily, so a CPU-backend worker that touches it while shutting
down a server that booted raises the no-driver text: not a boot failure. For the same
reason the no-GPU rules rank below other causes (35): a CPU boot that failed for its own
reason prints them again while it cleans up (real 0.20.0 captures do)."""
_ATTN_REMEDY = (
    "No attention backend supports this model's head size / dtype on this GPU: pick one "
    "that does with --attention-backend (e.g. FLEX_ATTENTION, TRITON_ATTN), try another "
    "--dtype, or use a GPU the fast backends support."
)

_NUMA = r"Allowed NUMA nodes are (?P<available>\[[^\]\n]{0,500}\])"
"""The CPU backend binds each worker to a NUMA node; `available` counts the list."""

RULES: tuple[Rule, ...] = (
    Rule(
        id="PF001",
        status="preview",
        printed_by="pytorch",
        name="no-kernel-image-for-device",
        outcome="gpu_arch_unsupported",
        literal="no kernel image is available for execution on the device",
        patterns=(r"no kernel image is available for execution on the device",),
        examples=(
            _ENGINE + "torch.AcceleratorError: CUDA error: no kernel image is available for "
            "execution on the device",
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "RuntimeError: HIP error: no kernel image is available for execution on the device",
        ),
        summary="The build has no GPU code for this device's architecture "
        "(cudaErrorNoKernelImageForDevice).",
        remediation=_ARCH_REMEDY,
        references=(
            "c10/cuda/CUDAException.cpp:29 ('CUDA error: ' + cudaGetErrorString)",
            "CUDA runtime: cudaErrorNoKernelImageForDevice (209)",
        ),
    ),
    Rule(
        id="PF002",
        status="preview",
        printed_by="pytorch",
        name="torch-capability-not-compatible",
        outcome="gpu_arch_unsupported",
        rank=40,
        reports=False,
        literal="is not compatible with the current PyTorch installation",
        patterns=(
            r"(?:(?P<device_name>\b(?:NVIDIA|Tesla|Quadro)\b[^\n]{0,80}?) )?with CUDA capability "
            r"(?P<compute_capability>sm_\d+) is not compatible with the current PyTorch "
            r"installation",
        ),
        examples=(
            "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the "
            "current PyTorch installation.",
            _ENGINE + "NVIDIA B200 with CUDA capability sm_100 is not compatible with the current "
            "PyTorch installation.",
        ),
        summary="torch warns that the installed build has no kernels for this GPU; the boot "
        "fails at its first kernel.",
        remediation=_ARCH_REMEDY,
        references=(_TORCH_CUDA + ":426 _check_cubins (torch 2.13.0)",),
    ),
    Rule(
        id="PF003",
        status="preview",
        printed_by="pytorch",
        name="torch-supported-capabilities",
        outcome="gpu_arch_unsupported",
        rank=40,
        reports=False,
        literal="The current PyTorch install supports CUDA capabilities",
        patterns=(
            r"The current PyTorch install supports CUDA capabilities "
            r"(?P<supported_archs>\w+(?: \w+){0,40})",
        ),
        examples=(
            "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 "
            "sm_80 sm_86 sm_90.",
        ),
        summary="The second line of torch's capability warning: the architectures the build "
        "has kernels for.",
        remediation=_ARCH_REMEDY,
        references=(_TORCH_CUDA + ":426 _check_cubins (torch 2.13.0)",),
    ),
    Rule(
        id="PF004",
        status="preview",
        printed_by="pytorch",
        name="torch-gpu-compute-capability-unsupported",
        outcome="gpu_arch_unsupported",
        rank=40,
        reports=False,
        literal="which is of compute capability (CC)",
        patterns=(
            r"Found GPU\d+ (?P<device_name>\S[^\n]{0,120}?) which is of compute capability "
            r"\(CC\) (?P<compute_capability>\d+\.\d)\.",
        ),
        examples=("Found GPU0 NVIDIA GeForce RTX 5090 which is of compute capability (CC) 12.0.",),
        summary="torch's newer capability warning: the GPU's compute capability is outside "
        "what the build supports.",
        remediation=_ARCH_REMEDY,
        references=(_TORCH_CUDA + ":363 _warn_unsupported_code (torch 2.13.0)",),
    ),
    Rule(
        id="PF010",
        status="preview",
        printed_by="pytorch",
        name="cuda-driver-insufficient-for-runtime",
        outcome="driver_too_old",
        unless=_SHUTDOWN,
        literal="CUDA driver version is insufficient for CUDA runtime version",
        patterns=(r"CUDA driver version is insufficient for CUDA runtime version",),
        examples=(
            _ENGINE + "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA "
            "runtime version",
        ),
        summary="The driver supports an older CUDA than the runtime the build ships "
        "(cudaErrorInsufficientDriver).",
        remediation=_DRIVER_REMEDY,
        references=(
            "c10/cuda/CUDAException.cpp:29 ('CUDA error: ' + cudaGetErrorString)",
            "CUDA runtime: cudaErrorInsufficientDriver (35)",
        ),
    ),
    Rule(
        id="PF011",
        status="preview",
        printed_by="pytorch",
        name="nvidia-driver-too-old",
        outcome="driver_too_old",
        unless=_SHUTDOWN,
        literal="The NVIDIA driver on your system is too old",
        patterns=(
            r"The NVIDIA driver on your system is too old \(found version "
            r"(?P<driver_version>\d+)\)",
        ),
        examples=(
            "RuntimeError: The NVIDIA driver on your system is too old (found version 12020). "
            "Please update your GPU driver by downloading and installing a new version from the "
            "URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
            "https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver.",
            "<venv>/lib/python3.12/site-packages/" + _TORCH_CUDA + ":182: UserWarning: CUDA "
            "initialization: The NVIDIA driver on your system is too old (found version 11080). "
            "Please update your GPU driver by downloading and installing a new version from the "
            "URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
            "https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver. (Triggered internally at "
            "/pytorch/c10/cuda/CUDAFunctions.cpp:119.)",
        ),
        summary="torch found a driver whose CUDA version is older than the one it was built "
        "for (`found version 12020` is CUDA 12.2).",
        remediation=_DRIVER_REMEDY,
        references=("c10/cuda/CUDAFunctions.cpp:45 device_count_impl (pytorch@01a6a16)",),
    ),
    Rule(
        id="PF020",
        status="preview",
        printed_by="pytorch",
        name="no-cuda-gpus-available",
        outcome="no_accelerator",
        unless=_SHUTDOWN,
        rank=35,
        literal="No CUDA GPUs are available",
        patterns=(r"No (?P<device_type>CUDA) GPUs are available",),
        constants=(("device_count", "0"),),
        examples=(_ENGINE + "RuntimeError: No CUDA GPUs are available",),
        summary="torch sees no CUDA device in this process.",
        remediation=_NO_GPU_REMEDY,
        references=("c10/cuda/CUDAFunctions.cpp:120 device_count_ensure_non_zero",),
    ),
    Rule(
        id="PF021",
        status="preview",
        printed_by="pytorch",
        name="no-nvidia-driver",
        outcome="no_accelerator",
        unless=_SHUTDOWN,
        rank=35,
        literal="Found no NVIDIA driver on your system",
        patterns=(r"Found no NVIDIA driver on your system",),
        constants=(("device_type", "cuda"), ("device_count", "0")),
        examples=(
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
            "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        ),
        summary="torch found no NVIDIA driver: the container has no GPU access.",
        remediation=_NO_GPU_REMEDY,
        references=("c10/cuda/CUDAFunctions.cpp:39 device_count_impl (pytorch@01a6a16)",),
    ),
    Rule(
        id="PF022",
        name="failed-to-infer-device-type",
        outcome="no_accelerator",
        literal="Failed to infer device type",
        patterns=(r"Failed to infer device type",),
        examples=(
            _ENGINE + "RuntimeError: Failed to infer device type, please set the environment "
            "variable `VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help debug the "
            "issue.",
            "(APIServer pid=77) RuntimeError: Failed to infer device type, please set the "
            "environment variable `VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help "
            "debug the issue.",
        ),
        summary="vLLM detected no platform (no GPU, and not a CPU build or VLLM_TARGET_DEVICE).",
        remediation=_NO_GPU_REMEDY,
        references=(
            "vllm/config.py:2119 (0.8.5)",
            "vllm/config/device.py:58 (0.11.0)",
            "vllm/config/device.py:55 (0.32.0, 0.33.0)",
        ),
    ),
    Rule(
        id="PF023",
        status="preview",
        printed_by="pytorch",
        name="no-cuda-capable-device",
        outcome="no_accelerator",
        unless=_SHUTDOWN,
        rank=35,
        literal="no CUDA-capable device is detected",
        patterns=(r"no (?P<device_type>CUDA)-capable device is detected",),
        constants=(("device_count", "0"),),
        examples=(_ENGINE + "RuntimeError: CUDA error: no CUDA-capable device is detected",),
        summary="The CUDA runtime found no device (cudaErrorNoDevice).",
        remediation=_NO_GPU_REMEDY,
        references=(
            "c10/cuda/CUDAException.cpp:29 ('CUDA error: ' + cudaGetErrorString)",
            "CUDA runtime: cudaErrorNoDevice (100)",
        ),
    ),
    Rule(
        id="PF030",
        status="preview",
        name="world-size-over-gpus",
        vllm=">=0.13",
        outcome="insufficient_devices",
        literal="is larger than the number of available GPUs",
        source_pattern=r"World size \(\{\}\) is larger than the number of ",
        patterns=(
            r"World size \((?P<requested>\d+)\) is larger than the number of available GPUs "
            r"\((?P<available>\d+)\)",
        ),
        examples=(
            "  Value error, World size (4) is larger than the number of available GPUs (1) in "
            "this node. If this is intentional and you are using: [type=value_error, "
            "input_value=ArgsKwargs((), {...}), input_type=ArgsKwargs]",
            "ValueError: World size (2) is larger than the number of available GPUs (1) in this "
            "node. If this is intentional and you are using:",
        ),
        summary="tensor_parallel_size x pipeline_parallel_size is more than the GPUs on this node.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/config/parallel.py:564 (0.13.0)",
            "vllm/config/parallel.py:1052 (0.32.0)",
            "vllm/config/parallel.py:1071 (0.33.0)",
        ),
    ),
    Rule(
        id="PF031",
        status="preview",
        name="ray-placement-group-too-small",
        outcome="insufficient_devices",
        literal="exceeds the total number of available",
        source_pattern=r"The number of required \{\}s exceeds the total ",
        patterns=(
            r"The number of required \w+s exceeds the total number of available \w+s in the "
            r"placement group\. Required number of devices: (?P<requested>\d+)\. Total number "
            r"of devices: (?P<available>\d+)",
        ),
        examples=(
            "ValueError: The number of required GPUs exceeds the total number of available GPUs "
            "in the placement group. Required number of devices: 8. Total number of devices: 4.",
        ),
        summary="The Ray placement group has fewer devices than the world size.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/executor/ray_utils.py:329 (0.8.5)",
            "vllm/v1/executor/ray_utils.py:600 (0.32.0)",
            "vllm/v1/executor/ray_utils.py:351 (0.33.0)",
        ),
    ),
    Rule(
        id="PF032",
        status="preview",
        name="local-world-size-over-visible-devices",
        vllm=">=0.12,<0.24",
        outcome="insufficient_devices",
        literal="must be less than or equal to the number of visible devices",
        source_pattern=r"be less than or equal to the number of visible devices ",
        patterns=(
            r"local_world_size \((?P<requested>\d+)\) must be less than or equal to the number "
            r"of visible devices \((?P<available>\d+)\)",
        ),
        examples=(
            _ENGINE + "AssertionError: local_world_size (2) must be less than or equal to the "
            "number of visible devices (1).",
        ),
        summary="A worker's node-local world size is larger than its visible devices.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/v1/worker/gpu_worker.py:202 (0.12.0)",
            "vllm/v1/worker/gpu_worker.py:279 (0.23.0)",
        ),
    ),
    Rule(
        id="PF033",
        status="preview",
        name="tensor-parallel-over-local-gpus",
        vllm="<0.11",
        outcome="insufficient_devices",
        literal="to less than max local gpu count",
        patterns=(
            r"please set tensor_parallel_size \((?P<requested>\d+)\) to less than max local "
            r"gpu count \((?P<available>\d+)\)",
        ),
        examples=(
            "RuntimeError: please set tensor_parallel_size (4) to less than max local gpu count "
            "(2)",
        ),
        summary="The V0 multiprocessing executor: more tensor-parallel ranks than local GPUs.",
        remediation=_DEVICES_REMEDY,
        references=(
            "vllm/executor/mp_distributed_executor.py:41 (0.8.5)",
            "vllm/executor/mp_distributed_executor.py:42 (0.10.0)",
        ),
    ),
    Rule(
        id="PF040",
        status="preview",
        name="no-valid-attention-backend",
        vllm=">=0.12",
        outcome="attention_backend_unsupported",
        literal="No valid attention backend found for ",
        source_pattern=r"No valid attention backend found for \{\} ",
        patterns=(
            r"No valid attention backend found for \w+ with AttentionSelectorConfig\("
            r"head_size=(?P<head_size>\d+), dtype=(?:torch\.)?(?P<dtype>\w+)"
            r"(?:[^\n]{0,2000}?\. Reasons: (?P<detail>\{[^\n]{0,4000}\}))?",
        ),
        examples=(
            _ENGINE + "ValueError: No valid attention backend found for cuda with "
            "AttentionSelectorConfig(head_size=72, dtype=torch.float32, kv_cache_dtype=auto, "
            "block_size=None, use_mla=False, has_sink=False, use_sparse=False, "
            "use_mm_prefix=False, attn_type=decoder). Reasons: {FLASH_ATTN: [head_size not "
            "supported, dtype not supported], FLASHINFER: [dtype not supported], TRITON_ATTN: "
            "[compute capability not supported]}.",
        ),
        summary="Every attention backend vLLM tried refuses this model's head size, dtype or "
        "this GPU (the reasons are per backend).",
        remediation=_ATTN_REMEDY,
        references=(
            "vllm/platforms/cuda.py:398 (0.12.0)",
            "vllm/platforms/cuda.py:470 (0.32.0)",
            "vllm/platforms/cuda.py:472, rocm.py:876 (0.33.0)",
        ),
    ),
    Rule(
        id="PF041",
        status="preview",
        name="attention-head-size-not-supported",
        vllm="<0.18",
        outcome="attention_backend_unsupported",
        literal="is not supported by ",
        source_pattern=r"Head size \{\} is not supported by ",
        patterns=(r"Head size (?P<head_size>\d+) is not supported by (?P<backend>\w+)\.",),
        examples=(
            _ENGINE + "ValueError: Head size 80 is not supported by FlashAttention. Supported "
            "head sizes are: [32, 64, 96, 128, 160, 192, 224, 256]. Set "
            "VLLM_ATTENTION_BACKEND=FLEX_ATTENTION to use FlexAttention backend which supports "
            "all head sizes.",
        ),
        summary="The selected attention backend cannot serve the model's head size.",
        remediation=_ATTN_REMEDY,
        references=(
            "vllm/v1/attention/backends/flash_attn.py:465 (0.8.5)",
            "vllm/v1/attention/backends/flash_attn.py:55 (0.11.0)",
            "vllm/v1/attention/backends/rocm_attn.py:191 (0.17.0)",
        ),
    ),
    Rule(
        id="PF042",
        status="preview",
        name="selected-attention-backend-not-valid",
        vllm=">=0.12",
        outcome="attention_backend_unsupported",
        literal="is not valid for this configuration",
        source_pattern=r"Selected backend \{\} is not valid for ",
        patterns=(
            r"Selected backend (?:AttentionBackendEnum\.)?(?P<backend>\w+) is not valid for this "
            r"configuration\. Reason: (?P<detail>[^\n]{1,2000})",
        ),
        examples=(
            _ENGINE + "ValueError: Selected backend AttentionBackendEnum.FLASHINFER is not valid "
            "for this configuration. Reason: ['head_size not supported', 'compute capability "
            "not supported']",
        ),
        summary="The backend named with --attention-backend (or VLLM_ATTENTION_BACKEND) cannot "
        "serve this model on this GPU.",
        remediation="Drop --attention-backend (let vLLM choose) or name one the reasons allow.",
        references=(
            "vllm/platforms/cuda.py:359 (0.12.0)",
            "vllm/platforms/cuda.py:436 (0.32.0)",
            "vllm/platforms/cuda.py:438 (0.33.0)",
        ),
    ),
    Rule(
        id="PF034",
        status="preview",
        name="cpu-workers-over-numa-nodes",
        vllm=">=0.16,<0.20",
        outcome="insufficient_devices",
        literal="Not enough allowed NUMA nodes to bind threads of ",
        patterns=(
            r"Not enough allowed NUMA nodes to bind threads of (?P<requested>\d+) CPUWorkers\. "
            + _NUMA,
        ),
        examples=(
            _ENGINE + "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 "
            "CPUWorkers. Allowed NUMA nodes are [0]. Please try to bind threads manually.",
        ),
        counter_examples=(
            "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 local "
            "CPUWorkers. Allowed NUMA nodes are [0]. Please try to bind threads manually or "
            "decrease DP/TP/PP.",
        ),
        summary="CPU backend: more workers (TP x PP) than NUMA nodes to bind them to.",
        remediation="On the CPU backend each tensor/pipeline-parallel worker needs a NUMA node "
        "of its own: lower --tensor-parallel-size / --pipeline-parallel-size to the node count, "
        "or bind threads yourself (VLLM_CPU_OMP_THREADS_BIND).",
        references=("vllm/v1/worker/cpu_worker.py:145 (0.16.0)", "cpu_worker.py:176 (0.19.0)"),
    ),
    Rule(
        id="PF035",
        name="cpu-local-workers-over-numa-nodes",
        vllm=">=0.20",
        outcome="insufficient_devices",
        literal="Not enough allowed NUMA nodes to bind threads of ",
        patterns=(
            r"Not enough allowed NUMA nodes to bind threads of (?P<requested>\d+) local "
            r"CPUWorkers\. " + _NUMA,
        ),
        examples=(
            _ENGINE + "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 local "
            "CPUWorkers. Allowed NUMA nodes are [0]. Please try to bind threads manually or "
            "decrease DP/TP/PP.",
        ),
        counter_examples=(
            "AssertionError: Not enough allowed NUMA nodes to bind threads of 2 CPUWorkers. "
            "Allowed NUMA nodes are [0]. Please try to bind threads manually.",
        ),
        summary="CPU backend: more local workers (TP x PP) than NUMA nodes to bind them to.",
        remediation="On the CPU backend each tensor/pipeline-parallel worker needs a NUMA node "
        "of its own: lower --tensor-parallel-size / --pipeline-parallel-size to the node count, "
        "or bind threads yourself (VLLM_CPU_OMP_THREADS_BIND).",
        references=(
            "vllm/utils/ompmultiprocessing.py:202 (0.20.0)",
            "ompmultiprocessing.py:216 (0.32.0)",
            "ompmultiprocessing.py:217 (0.33.0)",
        ),
    ),
)
