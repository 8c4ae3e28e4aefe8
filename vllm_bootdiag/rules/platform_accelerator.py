"""The accelerator itself cannot run this build: GPU architecture, driver, none visible.

Most of these texts come from PyTorch and the CUDA runtime, not from vLLM: torch's
capability warnings (torch/cuda/__init__.py), the CUDA error strings it wraps
(`CUDA error: <cudaGetErrorString>`, c10/cuda/CUDAException.cpp) and its driver
checks (c10/cuda/CUDAFunctions.cpp). vLLM's own is the platform detection
(`Failed to infer device type`). Example lines are rendered from those format strings.
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
_SHUTDOWN = ("Application startup complete",)
"""torch initialises CUDA lazily, so a CPU-backend worker that touches it while shutting
down a server that booted raises the no-driver text: not a boot failure. For the same
reason the no-GPU rules rank below other causes (35): a CPU boot that failed for its own
reason prints them again while it cleans up (real 0.20.0 captures do)."""

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
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="PF105",
        printed_by="pytorch",
        name="nvidia-driver-too-old-core",
        tier="tolerant",
        covers=("PF011",),
        outcome="driver_too_old",
        literal="The NVIDIA driver on your system is too old",
        patterns=(
            r"The NVIDIA driver on your system is too old(?: \(found version (?P<driver_version>"
            r"\d+)(?=\)))?",
        ),
        examples=(
            # PF011's rendered text cut by a viewer inside the version
            "RuntimeError: The NVIDIA driver on your system is too old (found version 120…",
        ),
        counter_examples=("RuntimeError: The NVIDIA driver on your system is up to date",),
        summary="torch's driver check: the driver is older than the CUDA runtime (the "
        "sentence's core; the version where it survives).",
        remediation=_DRIVER_REMEDY,
        references=("c10/cuda/CUDAFunctions.cpp (PF011's message)",),
    ),
)
