"""The CPU node's free memory below the KV space asked, or the worker over its reservation.

The CPU backend's checks in v1/worker/cpu_worker.py: the node has less free RAM than
--gpu-memory-utilization (its CPU meaning) or the KV space asks for, or (0.33, and
0.20-0.32 as a negative request) the worker already uses more than it reserved.
"""

from __future__ import annotations

from .schema import Rule

_G = r"-?\d+(?:\.\d+)?"
_CPU_REMEDY = (
    "Ask for less: lower --gpu-memory-utilization (it sizes CPU memory on the CPU backend), "
    "VLLM_CPU_KVCACHE_SPACE or --kv-cache-memory-bytes; or free the node's memory."
)

RULES: tuple[Rule, ...] = (
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
        # the sign is a runtime value: the format string has `({}/{} GiB)`
        source_pattern=(
            r"on kv cache allocation is less than requested memory for kv \(\{\}/\{\} GiB\)"
        ),
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
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="HM103",
        name="cpu-node-memory-below-utilization-core",
        tier="tolerant",
        source_pattern=r"Available memory on node \{\} \(\{\}/\{\} GiB\) on startup is less than",
        covers=("HM005",),
        outcome="insufficient_free_memory",
        literal="on startup is less than",
        patterns=(
            r"Available memory on node (?P<device>\d+) \((?P<free_gib>"
            + _G
            + r")/(?P<total_gib>"
            + _G
            + r") GiB\) on startup is less than(?: desired CPU memory utilization "
            r"\((?P<gpu_memory_utilization>[\d.]+)(?=,)(?:, (?P<requested_gib>" + _G + r")"
            r"(?= GiB))?)?",
        ),
        examples=(
            # HM005's corpus line (0.20.0) cut by a viewer inside the utilization
            "ValueError: Available memory on node 0 (20.31/23.47 GiB) on startup is less than "
            "desired CPU memory utilization (0.9…",
            # HM005's corpus line (0.32.0) cut by a viewer at 160 columns
            "(VllmWorker-0 pid=15843) ERROR 11-29 16:04:39 [multiproc_executor.py:953] "
            "ValueError: Available memory on node 0 (14.97/16.59 GiB) on startup is less than "
            "desi…",
        ),
        counter_examples=(
            "ValueError: Free memory on device cuda:0 (10.2/31.36 GiB) on startup is less than "
            "desired GPU memory utilization (0.92, 28.85 GiB).",
        ),
        summary="The CPU node's free memory at startup is below the fraction asked (the "
        "sentence's core; numbers where they survive).",
        remediation=_CPU_REMEDY,
        references=("vllm/v1/worker/cpu_worker.py (HM005's message, 0.20-0.32)",),
    ),
    Rule(
        id="HM104",
        name="cpu-node-memory-below-kv-request-core",
        tier="tolerant",
        source_pattern=r"on kv cache allocation is less than requested memory for kv",
        covers=("HM006",),
        outcome="insufficient_free_memory",
        literal="on kv cache allocation is less than requested memory for kv",
        patterns=(
            # `(` then a digit: a negative request is HM105's; cut before it, no kind is told
            r"Available memory on node (?P<device>\d+) \((?P<free_gib>"
            + _G
            + r")/(?P<total_gib>"
            + _G
            + r") GiB\) on kv cache allocation is less than requested memory for kv "
            r"\((?=\d)(?:(?P<requested_gib>\d+(?:\.\d+)?)(?=[/ ]))?",
        ),
        examples=(
            # HM006's corpus line (0.22.0) cut by a viewer inside the request
            "(EngineCore pid=10450) ERROR 11-29 16:29:28 [core.py:1165] ValueError: Available "
            "memory on node 0 (18.35/21.09 GiB) on kv cache allocation is less than requested "
            "memory for kv (64…",
        ),
        counter_examples=(
            "ValueError: Available memory on node 0 (19.17/21.59 GiB) on kv cache allocation is "
            "less than requested memory for kv (-0.64/0.43 GiB).",
            "ValueError: Available memory on node 0 (19.17/21.59 GiB) on kv cache allocation is "
            "less than requested memory for kv (…",
        ),
        summary="The CPU node has less free memory than the KV space asked for (the sentence's "
        "core; a request cut off before its sign tells nothing).",
        remediation=_CPU_REMEDY,
        references=("vllm/v1/worker/cpu_worker.py (HM006's message, 0.20+)",),
    ),
    Rule(
        id="HM105",
        name="cpu-worker-exceeds-reservation-negative-request-core",
        tier="tolerant",
        source_pattern=(
            r"on kv cache allocation is less than requested memory for kv \(\{\}/\{\} GiB\)"
        ),
        covers=("HM009",),
        outcome="cpu_memory_reservation_exceeded",
        literal="is less than requested memory for kv (-",
        patterns=(
            r"Available memory on node (?P<numa_node>\d+) \("
            + _G
            + r"/(?P<node_total_gib>"
            + _G
            + r") GiB\) on kv cache allocation is less than requested memory for kv "
            r"\(-(?:(?P<shortfall_gib>\d+(?:\.\d+)?)(?=/))?",
        ),
        examples=(
            # HM009's corpus line (0.32.0) cut by a viewer inside the request
            "ValueError: Available memory on node 0 (19.17/21.59 GiB) on kv cache allocation is "
            "less than requested memory for kv (-0.6…",
        ),
        counter_examples=(
            "ValueError: Available memory on node 0 (20.31/23.47 GiB) on kv cache allocation is "
            "less than requested memory for kv (64.0 GiB).",
        ),
        summary="0.20-0.32's node check with a negative request: the worker already uses more "
        "than its reservation (the sentence's core; numbers where they survive).",
        remediation="Raise --gpu-memory-utilization above the worker's use over the node's "
        "memory, or set the KV cache size explicitly (--kv-cache-memory-bytes or "
        "VLLM_CPU_KVCACHE_SPACE); lowering it cannot help.",
        references=("vllm/v1/worker/cpu_worker.py (HM009's message, 0.20-0.32)",),
    ),
    Rule(
        id="HM106",
        name="cpu-worker-exceeds-reservation-core",
        tier="tolerant",
        covers=("HM008",),
        outcome="cpu_memory_reservation_exceeded",
        literal="of CPU memory reserved for it on node",
        patterns=(
            r"The worker already uses (?P<used_gib>" + _G + r") GiB \(model weights and runtime\), "
            r"more than the (?P<reserved_gib>" + _G + r") GiB of CPU memory reserved for it on "
            r"node(?: (?P<numa_node>\d+)(?=,))?",
        ),
        examples=(
            # HM008's rendered text cut by a viewer before its advice
            "(EngineCore pid=2210) ERROR 12-01 10:02:11 [core.py:1142] ValueError: The worker "
            "already uses 2.31 GiB (model weights and runtime), more than the 2.2 GiB of CPU "
            "memory reserved for it on node 0, leav…",
        ),
        counter_examples=(
            "ValueError: Available memory on node 0 (20.31/23.47 GiB) on kv cache allocation is "
            "less than requested memory for kv (64.0 GiB).",
        ),
        summary="0.33's CPU worker uses more than the memory reserved for it (the sentence's "
        "core; numbers where they survive).",
        remediation="Raise --gpu-memory-utilization above the value vLLM prints, or set the KV "
        "cache size explicitly (--kv-cache-memory-bytes or VLLM_CPU_KVCACHE_SPACE); freeing "
        "memory elsewhere or lowering the utilization cannot help.",
        references=("vllm/v1/worker/cpu_worker.py (HM008's message, 0.33+)",),
    ),
)
