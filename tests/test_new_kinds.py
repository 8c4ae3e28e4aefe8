"""The failure kinds outside memory and config, on lines rendered from their sources.

Each line below is rendered from the format string its rule cites (vLLM, torch,
the CUDA runtime, NCCL, glibc, safetensors, transformers): the numbers a rule
reads, the outcome's retry semantics, and what a worker is told to do.
"""

from __future__ import annotations

import pytest

from vllm_bootdiag import classify, outcomes
from vllm_bootdiag.engine import BootWatcher

ENGINE = "(EngineCore_DP0 pid=4242) "
BANNER_33 = (
    "(APIServer pid=77) INFO 12-01 10:02:00 [api_server.py:1800] vLLM API server version 0.33.0"
)

NEW_KINDS = (
    "gpu_arch_unsupported",
    "driver_too_old",
    "no_accelerator",
    "insufficient_devices",
    "distributed_init_failed",
    "attention_backend_unsupported",
    "broken_install",
    "model_files_unreadable",
    "architecture_inspection_failed",
)


@pytest.mark.parametrize("kind", NEW_KINDS)
def test_new_kinds_cannot_succeed_on_a_restart_and_are_given_up(kind: str) -> None:
    cls = outcomes.OUTCOME_TYPES[kind]
    assert cls().retry_same_config_can_succeed is False
    assert cls.PLAN == "give_up"


def test_cpu_reservation_is_a_memory_kind_the_planner_handles() -> None:
    cls = outcomes.OUTCOME_TYPES["cpu_memory_reservation_exceeded"]
    assert cls.PLAN == "memory" and cls.CATEGORY == outcomes.Category.MEMORY


def test_driver_version_is_read_as_printed() -> None:
    # c10/cuda/CUDAFunctions.cpp: "The NVIDIA driver on your system is too old (found version ", version, ")..."
    d = classify(
        [
            "RuntimeError: The NVIDIA driver on your system is too old (found version 12020). "
            "Please update your GPU driver by downloading and installing a new version from the "
            "URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
            "https://pytorch.org to install a PyTorch version that has been compiled with your "
            "version of the CUDA driver."
        ]
    )
    assert isinstance(d.primary, outcomes.DriverTooOld)
    assert d.primary.driver_version == "12020"  # CUDA 12.2
    assert "driver" in d.remediation


def test_torch_capability_warning_gives_the_arch_and_the_kernel_error_the_cause() -> None:
    # torch/cuda/__init__.py _check_cubins, then CUDA error: <cudaGetErrorString(209)>
    lines = [
        "<venv>/lib/python3.12/site-packages/torch/cuda/__init__.py:441: UserWarning: ",
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
        "PyTorch installation.",
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 "
        "sm_86 sm_90.",
        "If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the "
        "instructions at https://pytorch.org/get-started/locally/",
        ENGINE + "torch.AcceleratorError: CUDA error: no kernel image is available for execution "
        "on the device",
    ]
    d = classify(lines)
    assert isinstance(d.primary, outcomes.GpuArchUnsupported)
    assert d.primary.rule_id == "PF001"
    assert d.primary.compute_capability == "12.0"
    assert d.primary.supported_archs[-1] == "sm_90"
    assert d.primary.device_name == "NVIDIA GeForce RTX 5090"


def test_the_capability_warning_alone_never_makes_a_watcher_stop_a_boot() -> None:
    """PTX can still JIT on a newer GPU: the warning names a cause, it does not end a boot."""
    w = BootWatcher()
    assert (
        w.feed(
            "NVIDIA B200 with CUDA capability sm_100 is not compatible with the current "
            "PyTorch installation."
        )
        is None
    )
    for i in range(10):
        assert w.feed(f"(APIServer pid=77) INFO 12-01 10:02:0{i} [loader.py:1] loading") is None
    assert w.reported is None
    assert w.feed("(APIServer pid=77) INFO:     Application startup complete.") is not None


def test_world_size_over_gpus_reads_both_numbers_from_the_pydantic_line() -> None:
    # vllm/config/parallel.py:1071 (0.33.0), raised in ParallelConfig.__post_init__
    d = classify(
        [
            BANNER_33,
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ParallelConfig",
            "  Value error, World size (4) is larger than the number of available GPUs (1) in "
            "this node. If this is intentional and you are using:",
        ]
    )
    assert isinstance(d.primary, outcomes.InsufficientDevices)
    assert (d.primary.requested, d.primary.available) == (4, 1)


def test_numa_nodes_are_counted_from_the_list_vllm_prints() -> None:
    # vllm/utils/ompmultiprocessing.py:217 (0.33.0)
    d = classify(
        [
            BANNER_33,
            ENGINE + "AssertionError: Not enough allowed NUMA nodes to bind threads of 4 local "
            "CPUWorkers. Allowed NUMA nodes are [0, 1]. Please try to bind threads manually or "
            "decrease DP/TP/PP.",
        ]
    )
    assert isinstance(d.primary, outcomes.InsufficientDevices)
    assert (d.primary.requested, d.primary.available) == (4, 2)


def test_cpu_reservation_numbers_and_the_minimum_utilization() -> None:
    # vllm/v1/worker/cpu_worker.py:229 (0.33.0)
    d = classify(
        [
            BANNER_33,
            ENGINE + "ValueError: The worker already uses 6.05 GiB (model weights and runtime), "
            "more than the 4.69 GiB of CPU memory reserved for it on node 1, leaving none for "
            "the KV cache. On the CPU backend, the `--gpu-memory-utilization` flag controls the "
            "fraction of CPU memory reserved (despite its name). To resolve: increase "
            "`--gpu-memory-utilization` to more than 0.26, or set the KV cache size explicitly "
            "with `--kv-cache-memory-bytes` or VLLM_CPU_KVCACHE_SPACE.",
        ]
    )
    p = d.primary
    assert isinstance(p, outcomes.CpuMemoryReservationExceeded) and p.rule_id == "HM008"
    assert (p.used_gib, p.reserved_gib, p.numa_node) == (6.05, 4.69, 1)
    assert p.min_gpu_memory_utilization == 0.26


def test_hm005_is_closed_at_033() -> None:
    line = (
        "ValueError: Available memory on node 0 (20.31/23.47 GiB) on startup is less than "
        "desired CPU memory utilization (0.92, 21.59 GiB)."
    )
    assert classify([line], version="0.32.0").primary.rule_id == "HM005"
    d = classify([line], version="0.33.0")
    assert d.primary.rule_id == "HM005" and d.version_out_of_range


def test_kv_cache_dtype_names_the_flag_and_keeps_the_config_class() -> None:
    # vllm/config/cache.py:472 (0.33.0), as pydantic prints a field validator's ValueError
    d = classify(
        [
            BANNER_33,
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig",
            "cache_dtype",
            "  Value error, Invalid kv_cache_dtype: 'fp7'. Valid values are: ['auto', 'float16', "
            "'bfloat16', 'fp8'] [type=value_error, input_value='fp7', input_type=str]",
        ]
    )
    p = d.primary
    assert isinstance(p, outcomes.InvalidArgument) and p.rule_id == "CF012"
    assert p.argument == "--kv-cache-dtype" and p.config == "CacheConfig"
    assert p.message is not None and p.message.startswith("Invalid kv_cache_dtype: 'fp7'")


def test_nccl_error_says_which_and_the_backend() -> None:
    # torch NCCLUtils.hpp C10D_NCCL_CHECK with ncclGetErrorString(ncclSystemError)
    d = classify(
        [
            "(Worker_TP1 pid=9) torch.distributed.DistBackendError: NCCL error in: "
            "/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled system error (run "
            "with NCCL_DEBUG=INFO for details), NCCL version 2.27.5"
        ]
    )
    p = d.primary
    assert isinstance(p, outcomes.DistributedInitFailed)
    assert p.backend == "nccl"
    assert p.detail == "unhandled system error (run with NCCL_DEBUG=INFO for details)"


def test_undefined_symbol_names_the_library_and_the_symbol() -> None:
    # glibc dlerror "<object>: undefined symbol: <name>" inside vLLM's repr of the ImportError
    d = classify(
        [
            "Failed to import from vllm._C: ImportError('<venv>/lib/python3.11/site-packages/vllm/"
            "_C.abi3.so: undefined symbol: _ZN3c1017RegisterOperatorsD1Ev')"
        ]
    )
    p = d.primary
    assert isinstance(p, outcomes.BrokenInstall)
    assert p.library == "<venv>/lib/python3.11/site-packages/vllm/_C.abi3.so"
    assert p.symbol == "_ZN3c1017RegisterOperatorsD1Ev"


def test_inspection_failure_is_not_an_unsupported_architecture() -> None:
    d = classify(
        [
            "ValueError: Model architectures ['Qwen3ForCausalLM'] failed to be inspected. Please "
            "check the logs for more details."
        ]
    )
    assert isinstance(d.primary, outcomes.ArchitectureInspectionFailed)
    assert d.primary.architecture == "Qwen3ForCausalLM"


def test_no_gpu_text_while_a_booted_cpu_server_shuts_down_is_not_a_failure() -> None:
    lines = [
        "(APIServer pid=5) INFO:     Application startup complete.",
        "(Worker pid=6) RuntimeError: Found no NVIDIA driver on your system. Please check that "
        "you have an NVIDIA GPU and installed a driver from "
        "http://www.nvidia.com/Download/index.aspx",
    ]
    assert classify(lines).primary.kind == "booted"
    assert classify(lines[1:]).primary.kind == "no_accelerator"


# --- unknown: an answer with retry semantics --------------------------------------------


@pytest.mark.parametrize(
    ("line", "can_succeed"),
    [
        ("ImportError: libfoo.so.3: wrong ELF class: ELFCLASS32", False),
        ("NotImplementedError: Frobnication is not supported on this platform", False),
        ("  SyntaxError: invalid syntax", False),
        ("torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped", False),
        ("RuntimeError: something odd happened in a worker", True),
        ("TimeoutError: the handshake took too long", True),
    ],
)
def test_unknown_says_whether_a_restart_can_help(line: str, can_succeed: bool) -> None:
    d = classify(["(APIServer pid=1) INFO 12-01 10:00:00 [a.py:1] starting", line])
    assert d.primary.kind == "unknown" and d.failed
    assert d.primary.retry_same_config_can_succeed is can_succeed
    assert ("restart runs the same code" in d.remediation) is not can_succeed


def test_any_error_looking_last_line_is_a_failure() -> None:
    for line in (
        "vllm serve: error: the following arguments are required: model_tag",
        "Segmentation fault (core dumped)",
        "terminate called after throwing an instance of 'c10::Error'",
    ):
        d = classify([line])
        assert d.primary.kind == "unknown" and d.failed, line
    assert not classify(["(APIServer pid=1) INFO 12-01 10:00:00 [a.py:1] starting"]).failed


def test_before_033_a_negative_kv_request_is_the_reservation_exceeded() -> None:
    """0.32.0's cpu_worker.py prints the case 0.33.0 names as a negative KV request; the
    use and the minimum utilization are worked out as 0.33.0 prints them."""
    d = classify(
        [
            "(APIServer pid=1) INFO 12-01 11:02:00 [api_server.py:1800] vLLM API server version "
            "0.32.0",
            "(Worker pid=4) ERROR 12-01 11:02:08 [multiproc_executor.py:1063] ValueError: "
            "Available memory on node 0 (19.17/21.59 GiB) on kv cache allocation is less than "
            "requested memory for kv (-0.64/0.43 GiB). Reduce CPU memory used by other "
            "processes.",
        ]
    )
    p = d.primary
    assert isinstance(p, outcomes.CpuMemoryReservationExceeded) and p.rule_id == "HM009"
    assert (p.reserved_gib, p.shortfall_gib, p.used_gib) == (0.43, 0.64, 1.07)
    assert p.min_gpu_memory_utilization == 0.05  # ceil(1.07 / 21.59 * 100) / 100
    assert "lowering it cannot help" in d.remediation


def test_a_json_error_in_config_validation_is_an_unreadable_model_file() -> None:
    # json.decoder's "%s: line %d column %d (char %d)" from parse_safetensors_file_metadata
    d = classify(
        [
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
            "  Value error, Unterminated string starting at: line 1 column 32 (char 31) "
            "[type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]",
        ],
        version="0.33.0",
    )
    p = d.primary
    assert isinstance(p, outcomes.ModelFilesUnreadable) and p.rule_id == "MF004"
    assert p.detail == "Unterminated string starting at: line 1 column 32 (char 31)"


def test_the_planner_does_not_restart_a_deterministic_unknown() -> None:
    from vllm_bootdiag import planning
    from vllm_bootdiag.launch import LaunchConfig

    config = LaunchConfig(model="org/m")
    d = classify(["ImportError: libfoo.so.3: wrong ELF class: ELFCLASS32"])
    p = planning.plan(d, config)
    assert isinstance(p, planning.GiveUp) and "deterministic" in p.reason
    d = classify(["RuntimeError: something odd happened in a worker"])
    assert not isinstance(planning.plan(d, config), planning.GiveUp)
