"""No KV-cache memory at all, and the auto-fit that cannot fit one request.

`No available memory for the cache blocks` (kv_cache_utils.py, and the V0 worker up
to 0.10), the KV budget printed as zero or less, and `_auto_fit_max_model_len`'s
failure (0.14+). KV102 and KV103 are the tolerant cores.
"""

from __future__ import annotations

from .schema import Rule

_NO_KV_REMEDY = (
    "Raise --gpu-memory-utilization, or free memory: --enforce-eager, a smaller "
    "--max-num-batched-tokens, a quantized checkpoint, or more GPUs."
)
_AUTO_FIT_REMEDY = (
    "Do not retry on this footprint: use a quantized checkpoint or an fp8 KV "
    "cache, more GPUs (--tensor-parallel-size), a larger card, or free the GPU."
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="KV006",
        source_pattern=(
            r"No available memory for the cache blocks\. Try increasing "
            r"`gpu_memory_utilization` when initializing the engine\.$"
        ),
        name="no-kv-cache-memory",
        vllm=">=0.8.5,<0.13",
        outcome="no_kv_cache_memory",
        literal="No available memory for the cache blocks",
        patterns=(
            r"No available memory for the cache blocks\. Try increasing "
            r"`gpu_memory_utilization` when initializing the engine\.(?! See)",
        ),
        examples=(
            "(EngineCore_DP0 pid=77) ERROR 10-02 08:00:01 [core.py:708] ValueError: No available "
            "memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine.",
        ),
        counter_examples=(
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
        ),
        summary="Weights and activations left no memory at all for the KV cache.",
        remediation=_NO_KV_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:527 (0.8.5)",
            "kv_cache_utils.py:686 (0.11.1-0.12.0)",
            "vllm/worker/worker.py:560 (V0, 0.8.5)",
        ),
    ),
    Rule(
        id="KV007",
        source_pattern=(
            r"No available memory for the cache blocks\. Try increasing "
            r"`gpu_memory_utilization` when initializing the engine\. See https"
        ),
        name="no-kv-cache-memory-docs-link",
        vllm=">=0.13,<0.22",
        outcome="no_kv_cache_memory",
        literal="No available memory for the cache blocks",
        patterns=(
            r"No available memory for the cache blocks\. Try increasing "
            r"`gpu_memory_utilization` when initializing the engine\. See https://",
        ),
        examples=(
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
        ),
        counter_examples=(
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine (this flag also controls "
            "CPU memory reservation on the CPU backend, despite its name). See https://docs.",
        ),
        summary="Weights and activations left no memory at all for the KV cache.",
        remediation=_NO_KV_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:687 (0.13.0)",
            "kv_cache_utils.py:696 (0.21.0)",
        ),
    ),
    Rule(
        id="KV008",
        source_pattern=(
            r"No available memory for the cache blocks\. Try increasing "
            r"`gpu_memory_utilization` when initializing the engine \(this flag also"
        ),
        name="no-kv-cache-memory-cpu-note",
        vllm=">=0.22",
        outcome="no_kv_cache_memory",
        literal="No available memory for the cache blocks",
        patterns=(
            r"No available memory for the cache blocks\. Try increasing "
            r"`gpu_memory_utilization` when initializing the engine \(this flag also controls "
            r"CPU memory reservation",
        ),
        examples=(
            "(EngineCore pid=91) ERROR 11-29 16:02:44 [core.py:1510] ValueError: No available "
            "memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine (this flag also controls CPU memory reservation on the CPU "
            "backend, despite its name). See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
        ),
        summary="Weights and activations left no memory at all for the KV cache.",
        remediation=_NO_KV_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:698 (0.22.0)",
            "kv_cache_utils.py:1010 (0.32.0)",
            "vllm/v1/core/kv_cache_planning.py:58 (0.33.0)",
        ),
    ),
    Rule(
        id="KV010",
        name="no-kv-cache-memory-cpu-v0",
        vllm=">=0.8.5,<0.10",
        outcome="no_kv_cache_memory",
        literal="No available memory for the cache blocks",
        source_pattern=r"No available memory for the cache blocks\. Try increasing "
        r"`VLLM_CPU_KVCACHE_SPACE`",
        patterns=(
            r"No available memory for the cache blocks\. Try increasing "
            r"`VLLM_CPU_KVCACHE_SPACE` when initializing the engine",
        ),
        examples=(
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`VLLM_CPU_KVCACHE_SPACE` when initializing the engine.",
        ),
        counter_examples=(
            "ValueError: No available memory for the cache blocks. Try increasing "
            "`gpu_memory_utilization` when initializing the engine.",
        ),
        summary="CPU backend, V0 worker: the KV space (VLLM_CPU_KVCACHE_SPACE) holds no block.",
        remediation="Raise VLLM_CPU_KVCACHE_SPACE (GiB) within the node's free memory.",
        references=("vllm/worker/cpu_worker.py:297 (0.8.5)", "cpu_worker.py:303 (0.9.2)"),
    ),
    Rule(
        id="KV104",
        status="preview",
        name="kv-budget-not-positive",
        outcome="no_kv_cache_memory",
        literal="Available KV cache memory: ",
        patterns=(r"Available KV cache memory: (?P<available_gib>-\d+(?:\.\d+)?|0(?:\.0+)?) GiB",),
        examples=(
            "(Worker pid=10578) INFO 11-29 16:00:40 [gpu_worker.py:760] Available KV cache "
            "memory: -1.5 GiB",
            "INFO 05-02 10:11:12 [gpu_worker.py:227] Available KV cache memory: 0.00 GiB",
        ),
        counter_examples=(
            "INFO 11-29 16:00:40 [gpu_worker.py:760] Available KV cache memory: 1.0 GiB",
            "INFO 11-29 16:00:40 [gpu_worker.py:760] Available KV cache memory: 0.5 GiB",
        ),
        summary="The KV budget vLLM computed is zero or less, so the engine fails right "
        "after it: no KV memory, even with the ValueError itself outside the tail (read "
        "from the INFO line where no KV message of its own is found).",
        remediation=_NO_KV_REMEDY,
        references=(
            "vllm/worker/gpu_worker.py:227 (0.8.5, '%.2f')",
            "vllm/v1/worker/gpu_worker.py:298 (0.11.0)",
            "vllm/v1/worker/gpu_worker.py:760 (0.32.0, format_gib)",
        ),
    ),
    Rule(
        id="KV009",
        name="auto-fit-failed",
        vllm=">=0.14",
        outcome="auto_fit_failed",
        literal="Cannot auto-fit max_model_len",
        patterns=(
            r"Cannot auto-fit max_model_len: not enough GPU memory available to serve even a "
            r"single token",
        ),
        examples=(
            "(EngineCore pid=4410) ERROR 11-29 16:40:02 [core.py:1510] ValueError: Cannot "
            "auto-fit max_model_len: not enough GPU memory available to serve even a single "
            "token. Try increasing `gpu_memory_utilization`.",
        ),
        counter_examples=(
            "INFO 11-29 16:40:02 [kv_cache_utils.py:2477] Auto-fit max_model_len: reduced from "
            "131072 to 32640 to fit in available KV cache memory (1.0 GiB CPU)",
        ),
        summary="--max-model-len auto found no length that fits, not even one token: no "
        "relaunch on this footprint can boot.",
        remediation=_AUTO_FIT_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:1426 (0.14.0)",
            "kv_cache_utils.py:2454 (0.32.0)",
            "vllm/v1/core/kv_cache_planning.py:1382 (0.33.0)",
        ),
    ),
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="KV102",
        name="no-kv-cache-memory-core",
        tier="tolerant",
        covers=("KV006", "KV007", "KV008", "KV010"),
        outcome="no_kv_cache_memory",
        literal="No available memory for the cache blocks",
        patterns=(r"No available memory for the cache blocks",),
        examples=(
            "ValueError: No available memory for the cache blocks.",
            "ValueError: No available memory for the cache blocks. Try increasing "
            "gpu_memory_utilization when initializing the engine (this flag also controls CPU "
            "memory reservation on the CPU backend, despite its name).",
        ),
        counter_examples=(
            "ValueError: To serve at least one request with the model's max seq len (4096), "
            "(0.5 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(0.0 GiB).",
        ),
        summary="After profiling nothing is left for the KV cache (the sentence's core).",
        remediation=_NO_KV_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:1016 (0.32.0)",
            "vllm/v1/core/kv_cache_planning.py:58 (0.33.0)",
        ),
    ),
    Rule(
        id="KV103",
        name="auto-fit-failed-core",
        tier="tolerant",
        covers=("KV009",),
        outcome="auto_fit_failed",
        literal="Cannot auto-fit max_model_len",
        patterns=(r"Cannot auto-fit max_model_len\b",),
        examples=("ValueError: Cannot auto-fit max_model_len: not enough memory available.",),
        counter_examples=(
            "INFO 11-29 16:40:02 [kv_cache_utils.py:1] Auto-fit max_model_len: reduced from "
            "131072 to 8192",
        ),
        summary="Auto-fit found no context length that fits (the sentence's core).",
        remediation=_AUTO_FIT_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py (0.14.0-0.32.0)",
            "vllm/v1/core/kv_cache_planning.py:1382 (0.33.0)",
        ),
    ),
)
