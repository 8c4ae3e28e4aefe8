"""Free GPU memory at startup below what was asked, or changing while vLLM profiled.

Another process holds device memory (a leftover vLLM, a second tenant), or memory
was freed or taken during profiling (`Error in memory profiling`): vLLM's checks in
the GPU worker (v1/worker/gpu_worker.py, utils/mem_utils.py).
"""

from __future__ import annotations

from .schema import Rule

_G = r"-?\d+(?:\.\d+)?"
_GPU_REMEDY = (
    "Free the GPU (another process holds memory) or lower --gpu-memory-utilization to the "
    "free fraction; a plain restart helps if the other process was a leftover."
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="HM001",
        source_pattern=(
            r"Free memory on device \(\{\}/\{\} GiB\) on startup is less than desired GPU"
        ),
        name="gpu-free-memory-below-utilization",
        vllm=">=0.9.1,<0.14",
        outcome="insufficient_free_memory",
        literal="on startup is less than desired GPU memory utilization",
        patterns=(
            r"Free memory on device \((?P<free_gib>" + _G + r")/(?P<total_gib>" + _G + r") GiB\) "
            r"on startup is less than desired GPU memory utilization "
            r"\((?P<gpu_memory_utilization>[\d.]+), (?P<requested_gib>" + _G + r") GiB\)",
        ),
        examples=(
            "ValueError: Free memory on device (12.4/23.53 GiB) on startup is less than desired "
            "GPU memory utilization (0.9, 21.18 GiB). Decrease GPU memory utilization or reduce "
            "GPU memory used by other processes.",
        ),
        counter_examples=(
            "INFO 10-02 08:00:01 [gpu_worker.py:372] Free memory on device (23.1/23.53 GiB) on "
            "startup. Desired GPU memory utilization is (0.9, 21.18 GiB). Actual usage is 2.1 GiB "
            "for weight, 1.2 GiB for peak activation, 0.1 GiB for non-torch memory.",
        ),
        summary="Less GPU memory is free at startup than gpu_memory_utilization asks for.",
        remediation=_GPU_REMEDY,
        references=("vllm/v1/worker/gpu_worker.py:140 (0.9.1)", "gpu_worker.py:247 (0.13.0)"),
    ),
    Rule(
        id="HM002",
        source_pattern=(
            r"Free memory on device \{\} \(\{\}/\{\} GiB\) on startup is less than desired GPU"
        ),
        name="gpu-free-memory-below-utilization-device",
        vllm=">=0.14",
        outcome="insufficient_free_memory",
        literal="on startup is less than desired GPU memory utilization",
        patterns=(
            r"Free memory on device (?P<device>\S+) \((?P<free_gib>"
            + _G
            + r")/(?P<total_gib>"
            + _G
            + r") GiB\) on startup is less than desired GPU memory utilization "
            r"\((?P<gpu_memory_utilization>[\d.]+), (?P<requested_gib>" + _G + r") GiB\)",
        ),
        examples=(
            "(EngineCore pid=311) ERROR 11-29 17:10:05 [core.py:1510] ValueError: Free memory on "
            "device cuda:0 (10.2/31.36 GiB) on startup is less than desired GPU memory "
            "utilization (0.92, 28.85 GiB). Decrease GPU memory utilization or reduce GPU memory "
            "used by other processes.",
        ),
        summary="Less GPU memory is free at startup than gpu_memory_utilization asks for.",
        remediation=_GPU_REMEDY,
        references=("vllm/v1/worker/utils.py:263 (0.14.0)", "vllm/v1/worker/utils.py:762 (0.32.0)"),
    ),
    Rule(
        id="HM003",
        name="gpu-free-memory-below-engine-budget",
        vllm=">=0.32",
        outcome="insufficient_free_memory",
        literal="is less than the engine's budget",
        patterns=(
            r"Free memory on device (?P<device>\S+) \((?P<free_gib>"
            + _G
            + r")/(?P<total_gib>"
            + _G
            + r") GiB\) on startup is less than the engine's budget after excluding "
            r"external process's weights \((?P<gpu_memory_utilization>[\d.]+), "
            r"(?P<requested_gib>" + _G + r") GiB\)",
        ),
        examples=(
            "ValueError: Free memory on device cuda:0 (10.2/31.36 GiB) on startup is less than "
            "the engine's budget after excluding external process's weights (0.92, 20.1 GiB). "
            "Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        ),
        summary="Less GPU memory is free than the engine's budget once externally held "
        "weights are excluded.",
        remediation=_GPU_REMEDY,
        references=("vllm/v1/worker/utils.py request_memory (0.32.0)",),
    ),
    Rule(
        id="HM004",
        source_pattern=r"Error in memory profiling\. Initial free memory \{\} GiB",
        name="gpu-memory-changed-during-profiling",
        vllm=">=0.9.1",
        outcome="insufficient_free_memory",
        literal="Error in memory profiling",
        patterns=(
            r"Error in memory profiling\. Initial free memory " + _G + r" GiB, "
            r"current free memory (?P<free_gib>" + _G + r") GiB",
        ),
        examples=(
            "AssertionError: Error in memory profiling. Initial free memory 30.1 GiB, current "
            "free memory 31.5 GiB. This happens when other processes sharing the same container "
            "release GPU memory while vLLM is profiling during initialization. To fix this, "
            "ensure consistent GPU memory allocation or isolate vLLM in its own container.",
        ),
        summary="Another process released GPU memory while vLLM profiled, so the profile is "
        "invalid.",
        remediation="Give vLLM the GPU to itself (no other process starting or stopping on "
        "it during boot); a restart usually succeeds.",
        references=("vllm/v1/worker/gpu_worker.py:210 (0.9.1)", "gpu_worker.py:719 (0.32.0)"),
    ),
    Rule(
        id="HM007",
        name="gpu-memory-changed-during-profiling-bytes",
        vllm=">=0.8.5,<0.16",
        outcome="insufficient_free_memory",
        literal="Error in memory profiling",
        source_pattern=r"Error in memory profiling\. Initial free memory \{\}, current free",
        patterns=(r"Error in memory profiling\. Initial free memory \d+, current free memory \d+",),
        examples=(
            "AssertionError: Error in memory profiling. Initial free memory 32212254720, current "
            "free memory 33285996544. This happens when the GPU memory was not properly cleaned "
            "up before initializing the vLLM instance.",
        ),
        counter_examples=(
            "AssertionError: Error in memory profiling. Initial free memory 30.1 GiB, current "
            "free memory 31.5 GiB.",
        ),
        summary="Another process changed GPU memory while vLLM profiled (the byte-count wording: "
        "the V1 GPU worker of 0.8.5/0.9.0.1, and other workers up to 0.15).",
        remediation="Give vLLM the GPU to itself during boot; a restart usually succeeds.",
        references=("vllm/v1/worker/gpu_worker.py:188 (0.8.5)", "gpu_worker.py:190 (0.9.0.1)"),
    ),
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="HM101",
        name="gpu-free-memory-below-budget-core",
        tier="tolerant",
        covers=("HM001", "HM002", "HM003"),
        outcome="insufficient_free_memory",
        literal="on startup is less than",
        patterns=(
            r"Free memory on device(?: (?P<device>[^\s(]\S*))? \((?P<free_gib>" + _G + r")/"
            r"(?P<total_gib>" + _G + r") GiB\) on startup is less than"
            r"(?: desired GPU memory utilization| the engine's budget after excluding external "
            r"process's weights)?(?: \((?P<gpu_memory_utilization>[\d.]+)(?=,)"
            r"(?:, (?P<requested_gib>" + _G + r")(?= GiB))?)?",
        ),
        examples=(
            # HM002's text cut by a viewer inside the requested size
            "(EngineCore pid=311) ERROR 11-29 17:10:05 [core.py:1510] ValueError: Free memory on "
            "device cuda:0 (10.2/31.36 GiB) on startup is less than desired GPU memory "
            "utilization (0.92, 28.8…",
            # HM003's text cut before its numbers
            "ValueError: Free memory on device cuda:0 (10.2/31.36 GiB) on startup is less than "
            "the engine's budget after excl…",
        ),
        counter_examples=(
            "ValueError: Available memory on node 0 (20.31/23.47 GiB) on startup is less than "
            "desired CPU memory utilization (0.92, 21.59 GiB).",
        ),
        summary="The GPU's free memory at startup is below what vLLM was asked to reserve (the "
        "sentence's core; numbers where they survive).",
        remediation=_GPU_REMEDY,
        references=(
            "vllm/v1/worker/gpu_worker.py:140 (0.9.1, HM001's message)",
            "vllm/v1/worker/utils.py:741, :762 (0.33.0, HM003's and HM002's)",
        ),
    ),
    Rule(
        id="HM102",
        name="memory-changed-during-profiling-core",
        tier="tolerant",
        covers=("HM004", "HM007"),
        outcome="insufficient_free_memory",
        literal="Error in memory profiling",
        patterns=(
            r"Error in memory profiling\.(?: Initial free memory " + _G + r" GiB, current free "
            r"memory (?P<free_gib>" + _G + r")(?= GiB))?",
        ),
        examples=(
            # HM004's text, the paste stopping after the first sentence
            "AssertionError: Error in memory profiling.",
            "AssertionError: Error in memory profiling. Initial free memory 30.1 GiB, current "
            "free me…",
        ),
        counter_examples=("INFO 11-29 16:00:40 [gpu_worker.py:1] Memory profiling takes 2.1 s",),
        summary="Free GPU memory changed while vLLM profiled (another process started or "
        "stopped): the assert's first sentence.",
        remediation="Give vLLM the GPU to itself (no other process starting or stopping on it "
        "during boot); a restart usually succeeds.",
        references=(
            "vllm/v1/worker/gpu_worker.py:189 (0.8.5)",
            "vllm/v1/worker/gpu_worker.py:720 (0.32.0)",
        ),
    ),
)
