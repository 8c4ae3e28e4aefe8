"""Device OOMs placed in their boot phase, with or without the traceback header.

The frames are rendered the way CPython prints them (`  File "<path>", line N, in
<function>`) for functions of vLLM 0.33.0's source; the OOM line from torch's
allocator format strings (rules/cuda_memory.py cites them).
"""

from __future__ import annotations

from vllm_bootdiag import classify, outcomes
from vllm_bootdiag.rules import BY_ID

TAG = "(EngineCore_DP0 pid=4242) "
OOM = (
    TAG + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has "
    "a total capacity of 23.52 GiB of which 216.75 MiB is free. Of the allocated memory 22.89 "
    "GiB is allocated by PyTorch, and 11.40 MiB is reserved by PyTorch but unallocated."
)


def _frame(path: str, line: int, func: str, source: str) -> list[str]:
    return [
        TAG + f'  File "<venv>/lib/python3.12/site-packages/vllm/{path}", line {line}, in {func}',
        TAG + f"    {source}",
    ]


CREATE_WEIGHTS = _frame(
    "model_executor/layers/linear.py", 201, "create_weights", "weight = ModelWeightParameter("
)
REPACK = _frame(
    "model_executor/layers/quantization/utils/marlin_utils.py",
    412,
    "gptq_marlin_repack",
    "return torch.ops._C.gptq_marlin_repack(b_q_weight, perm, size_k, size_n, num_bits)",
)
INIT_DEVICE = _frame("v1/worker/gpu_worker.py", 527, "init_device", "torch.mm(x, x)")


def test_frames_without_the_traceback_header_still_place_the_oom() -> None:
    for frames in (CREATE_WEIGHTS, REPACK):
        d = classify([*frames, OOM])
        assert d.primary.kind == "weight_load_oom", frames[0]
        assert isinstance(d.primary, outcomes.WeightLoadOom)
        assert d.primary.tried_to_allocate_gib == 0.4375
        assert d.primary.phase_hint == "traceback: weight-loading frames"
        assert d.remediation == BY_ID["CM001"].remediation_for("weight_load_oom")
        assert "quantized" in d.remediation and "max-num-batched-tokens" not in d.remediation


def test_with_the_header_too() -> None:
    d = classify([TAG + "Traceback (most recent call last):", *REPACK, OOM])
    assert d.primary.kind == "weight_load_oom"


def test_an_oom_in_init_device_is_the_gpu_already_full_not_the_weights() -> None:
    d = classify([*INIT_DEVICE, OOM])
    assert isinstance(d.primary, outcomes.DeviceOom)
    assert d.primary.phase_hint is not None and "init_device" in d.primary.phase_hint


def test_with_nothing_to_tell_the_phase_it_is_said_so_not_guessed() -> None:
    d = classify([OOM])
    assert isinstance(d.primary, outcomes.DeviceOom)
    assert d.primary.phase_hint is None and d.primary.device == "CUDA"
    assert d.primary.free_gib is not None
    assert d.remediation == BY_ID["CM001"].remediation
    assert "weights" in d.remediation and "graph capture" in d.remediation


def test_the_torch_line_cut_after_the_size_is_still_an_oom() -> None:
    d = classify(
        [TAG + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 108.00 MiB."]
    )
    assert isinstance(d.primary, outcomes.DeviceOom)
    assert d.primary.tried_to_allocate_gib == round(108 / 1024, 6)


def test_graph_capture_gets_the_graph_remedy() -> None:
    frames = _frame(
        "v1/worker/gpu_model_runner.py", 6011, "capture_model", "self._capture_cudagraphs("
    )
    d = classify([*frames, TAG + "torch.AcceleratorError: CUDA error: out of memory"])
    assert d.primary.kind == "cuda_graph_capture_oom"
    assert "--enforce-eager" in d.remediation and "quantized" not in d.remediation


def test_hip_and_xpu_are_attributed_the_same_way() -> None:
    hip = OOM.replace("CUDA out of memory", "HIP out of memory")
    xpu = (
        TAG + "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 1.50 GiB. GPU 0 has "
        "a total capacity of 23.99 GiB. Of the allocated memory 22.10 GiB is allocated by "
        "PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated. Please use `empty_cache` "
        "to release all unoccupied cached memory."
    )
    for line in (hip, xpu):
        d = classify([*CREATE_WEIGHTS, line])
        assert d.primary.kind == "weight_load_oom", line[:60]
        assert classify([line]).primary.kind == "device_oom"


def test_a_frame_run_is_not_read_past_a_non_frame_line() -> None:
    """Frames above a log record belong to something else: the record's phase decides."""
    lines = [
        *CREATE_WEIGHTS,
        TAG + "INFO 12-01 10:02:11 [gpu_worker.py:300] Model loading took 2.1 GiB memory and "
        "3.0 seconds",
        OOM,
    ]
    d = classify(lines)
    assert d.primary.kind == "profiling_oom"
    assert isinstance(d.primary, outcomes.ProfilingOom)
    assert d.primary.phase_hint == "last phase: weights_loaded"


def test_the_capacity_half_on_its_own_line_joins_the_oom_above() -> None:
    head, tail = OOM.split(" GPU 0 has", 1)
    d = classify([*CREATE_WEIGHTS, head, TAG + "GPU 0 has" + tail])
    p = d.primary
    assert isinstance(p, outcomes.WeightLoadOom) and p.rule_id == "CM001"
    assert (p.tried_to_allocate_gib, p.gpu_index, p.total_capacity_gib) == (0.4375, 0, 23.52)
    assert p.free_gib == round(216.75 / 1024, 6)


def test_a_device_oom_completes_the_attributed_ooms_only() -> None:
    """`DeviceOom.PART_OF` (class data the diagnosis merges by) is the other OOM kinds."""
    from vllm_bootdiag import outcomes

    assert outcomes.DeviceOom.PART_OF | {"device_oom"} == outcomes.CUDA_OOM_KINDS
