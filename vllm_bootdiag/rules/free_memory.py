"""Free-memory checks at startup: the device (or CPU node) has less free than asked.

On a GPU another process holds memory (a leftover vLLM, a second tenant); on
the CPU backend the node has less free RAM than the KV space requested.
"""

from __future__ import annotations

from .schema import Rule

_G = r"-?\d+(?:\.\d+)?"
_GPU_REMEDY = (
    "Free the GPU (another process holds memory) or lower --gpu-memory-utilization to the "
    "free fraction; a plain restart helps if the other process was a leftover."
)
_CPU_REMEDY = (
    "Ask for less: lower --gpu-memory-utilization (it sizes CPU memory on the CPU backend), "
    "VLLM_CPU_KVCACHE_SPACE or --kv-cache-memory-bytes; or free the node's memory."
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
        id="HM005",
        name="cpu-node-memory-below-utilization",
        vllm=">=0.20,<0.33",
        outcome="insufficient_free_memory",
        literal="is less than desired CPU memory utilization",
        patterns=(
            r"Available memory on node (?P<device>\d+) \((?P<free_gib>" + _G + r")/"
            r"(?P<total_gib>" + _G + r") GiB\) on startup is less than desired CPU memory "
            r"utilization \((?P<gpu_memory_utilization>[\d.]+), (?P<requested_gib>"
            + _G
            + r") GiB\)",
        ),
        examples=(
            "ValueError: Available memory on node 0 (20.31/23.47 GiB) on startup is less than "
            "desired CPU memory utilization (0.92, 21.59 GiB). On the CPU backend, the "
            "`--gpu-memory-utilization` flag controls the fraction of CPU memory reserved "
            "(despite its name).",
        ),
        summary="CPU backend: the node has less free RAM than gpu_memory_utilization reserves.",
        remediation=_CPU_REMEDY,
        references=("vllm/v1/worker/cpu_worker.py:68 (0.20.0)", "cpu_worker.py:84 (0.32.0)"),
    ),
    Rule(
        id="HM006",
        name="cpu-node-memory-below-kv-request",
        vllm=">=0.20",
        outcome="insufficient_free_memory",
        literal="is less than requested memory for kv",
        patterns=(
            r"Available memory on node (?P<device>\d+) \((?P<free_gib>" + _G + r")/"
            r"(?P<total_gib>" + _G + r") GiB\) on kv cache allocation is less than requested "
            r"memory for kv \((?P<requested_gib>" + _G + r")(?:/" + _G + r")? GiB\)",
        ),
        examples=(
            "ValueError: Available memory on node 0 (20.31/23.47 GiB) on kv cache allocation is "
            "less than requested memory for kv (64.0 GiB). Decrease --kv-cache-memory-bytes, "
            "VLLM_CPU_KVCACHE_SPACE, or reduce CPU memory used by other processes.",
            "ValueError: Available memory on node 0 (2.1/23.47 GiB) on kv cache allocation is "
            "less than requested memory for kv (19.2/21.59 GiB). Reduce CPU memory used by other "
            "processes.",
        ),
        summary="CPU backend: the node has less free RAM than the KV cache space requested.",
        remediation=_CPU_REMEDY,
        references=(
            "vllm/v1/worker/cpu_worker.py:168 and :190 (0.20.0)",
            "cpu_worker.py:220 and :242 (0.32.0)",
        ),
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
    Rule(
        id="HM008",
        status="preview",
        name="cpu-worker-exceeds-reservation",
        vllm=">=0.33",
        outcome="cpu_memory_reservation_exceeded",
        literal="of CPU memory reserved for it on node",
        source_pattern=r"The worker already uses \{\} GiB ",
        patterns=(
            r"The worker already uses (?P<used_gib>" + _G + r") GiB \(model weights and "
            r"runtime\), more than the (?P<reserved_gib>" + _G + r") GiB of CPU memory reserved "
            r"for it on node (?P<numa_node>\d+), leaving none for the KV cache\."
            r"(?:[^\n]{0,400}?increase `?--gpu-memory-utilization`? to more than "
            r"(?P<min_gpu_memory_utilization>\d+(?:\.\d+)?))?",
        ),
        examples=(
            "(EngineCore pid=2210) ERROR 12-01 10:02:11 [core.py:1142] ValueError: The worker "
            "already uses 2.31 GiB (model weights and runtime), more than the 2.2 GiB of CPU "
            "memory reserved for it on node 0, leaving none for the KV cache. On the CPU "
            "backend, the `--gpu-memory-utilization` flag controls the fraction of CPU memory "
            "reserved (despite its name). To resolve: increase `--gpu-memory-utilization` to "
            "more than 0.10, or set the KV cache size explicitly with `--kv-cache-memory-bytes` "
            "or VLLM_CPU_KVCACHE_SPACE.",
        ),
        counter_examples=(
            "ValueError: Available memory on node 0 (2.1/23.47 GiB) on kv cache allocation is "
            "less than requested memory for kv (19.2/21.59 GiB). Reduce CPU memory used by other "
            "processes.",
        ),
        summary="CPU backend (0.33+): the worker's own footprint already fills the memory "
        "--gpu-memory-utilization reserves, leaving nothing for the KV cache.",
        remediation="Raise --gpu-memory-utilization above the value vLLM prints, or set the "
        "KV cache size explicitly (--kv-cache-memory-bytes or VLLM_CPU_KVCACHE_SPACE); "
        "freeing memory elsewhere or lowering the utilization cannot help.",
        references=("vllm/v1/worker/cpu_worker.py:229 (0.33.0, replaces HM005's check)",),
    ),
    Rule(
        id="HM009",
        name="cpu-worker-exceeds-reservation-negative-request",
        vllm=">=0.20,<0.33",
        outcome="cpu_memory_reservation_exceeded",
        rank=55,
        literal="is less than requested memory for kv (-",
        patterns=(
            r"Available memory on node (?P<numa_node>\d+) \("
            + _G
            + r"/(?P<node_total_gib>"
            + _G
            + r") GiB\) on kv cache allocation is less than requested memory for kv "
            r"\(-(?P<shortfall_gib>\d+(?:\.\d+)?)/(?P<reserved_gib>" + _G + r") GiB\)",
        ),
        examples=(
            "ValueError: Available memory on node 0 (19.17/21.59 GiB) on kv cache allocation "
            "is less than requested memory for kv (-0.64/0.43 GiB). Reduce CPU memory used by "
            "other processes.",
        ),
        counter_examples=(
            "ValueError: Available memory on node 0 (2.1/23.47 GiB) on kv cache allocation is "
            "less than requested memory for kv (19.2/21.59 GiB). Reduce CPU memory used by other "
            "processes.",
        ),
        summary="CPU backend (before 0.33): the worker's own footprint already exceeds the "
        "memory --gpu-memory-utilization reserves; vLLM reports it as a negative KV request "
        "and advises freeing memory elsewhere, which cannot help (HM008's case).",
        remediation="Raise --gpu-memory-utilization above the worker's use over the node's "
        "memory (min_gpu_memory_utilization), or set the KV cache size explicitly "
        "(--kv-cache-memory-bytes or VLLM_CPU_KVCACHE_SPACE); lowering it cannot help.",
        references=("vllm/v1/worker/cpu_worker.py:190 (0.20.0)", "cpu_worker.py:242 (0.32.0)"),
    ),
)
