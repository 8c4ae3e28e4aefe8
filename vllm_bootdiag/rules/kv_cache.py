"""KV-cache sizing failures: the check that one full-length request fits.

vLLM raises these in the EngineCore after profiling, in
`vllm/v1/core/kv_cache_utils.py` (`_check_enough_kv_cache_memory`,
`_auto_fit_max_model_len`), and in the V0 worker up to 0.10.
"""

from __future__ import annotations

from .schema import Rule

_F2 = r"-?\d+\.\d\d"  # '%.2f' up to 0.13
_G = r"-?\d+\.(?:\d|\d[1-9])"  # format_gib from 0.14: round(x, 2) repr: 3.0, 0.5, 0.18, never 0.50

_SHORTFALL_REMEDY = (
    "Lower --max-num-seqs to the concurrency you serve, then consider --enforce-eager, then "
    "lower --max-model-len to vLLM's estimate; or raise --gpu-memory-utilization, use an fp8 "
    "KV cache, or more GPUs."
)

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
        id="KV001",
        source_pattern=(
            r"models's max seq len \(\{\}\), \(\{:\.2f\} GiB .*\{:\.2f\} GiB\)\.\{\}  Try"
        ),
        name="kv-shortfall-models-s-no-estimate",
        vllm=">=0.8.5,<0.9.1",
        outcome="kv_cache_shortfall",
        literal="KV cache is needed, which is larger than the available KV cache memory",
        patterns=(
            r"To serve at least one request with the models's max seq len "
            r"\((?P<max_model_len>\d+)\), \((?P<needed_gib>" + _F2 + r") GiB KV cache is "
            r"needed, which is larger than the available KV cache memory "
            r"\((?P<available_gib>" + _F2 + r") GiB\)\.(?! Based on the available memory, the)",
        ),
        examples=(
            "ERROR 05-02 10:11:12 [core.py:396] ValueError: To serve at least one request with "
            "the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger "
            "than the available KV cache memory (3.21 GiB). Based on the available memory,  Try "
            "increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.",
        ),
        counter_examples=(
            "ValueError: To serve at least one request with the models's max seq len (131072), "
            "(16.00 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(3.21 GiB). Based on the available memory, the estimated maximum model length is "
            "26288. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.",
        ),
        summary="One request of max_model_len tokens needs more KV cache than is left "
        "(0.8.5 and 0.9.0.1 print no estimate, a source bug).",
        remediation=_SHORTFALL_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:545 (0.8.5)",
            "kv_cache_utils.py:550 (0.9.0.1)",
        ),
    ),
    Rule(
        id="KV002",
        source_pattern=(
            r"models's max seq len \(\{\}\), \(\{:\.2f\} GiB .*\{:\.2f\} GiB\)\. \{\} Try"
        ),
        name="kv-shortfall-models-s-fixed-decimals",
        vllm=">=0.9.1,<0.14",
        outcome="kv_cache_shortfall",
        literal="KV cache is needed, which is larger than the available KV cache memory",
        patterns=(
            r"To serve at least one request with the models's max seq len "
            r"\((?P<max_model_len>\d+)\), \((?P<needed_gib>" + _F2 + r") GiB KV cache is "
            r"needed, which is larger than the available KV cache memory "
            r"\((?P<available_gib>" + _F2 + r") GiB\)\. "
            r"(?:Based on the available memory, the estimated maximum model length is "
            r"(?P<estimated_max_model_len>-?\d+)\. )?\s?Try increasing",
        ),
        examples=(
            "(EngineCore_DP0 pid=3862035) ERROR 11-25 18:39:23 [core.py:842] ValueError: To "
            "serve at least one request with the models's max seq len (131072), (16.00 GiB KV "
            "cache is needed, which is larger than the available KV cache memory (5.48 GiB). "
            "Based on the available memory, the estimated maximum model length is 44880. Try "
            "increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.",
            "ValueError: To serve at least one request with the models's max seq len (4096), "
            "(0.50 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(0.00 GiB).  Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
            "when initializing the engine. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
        ),
        counter_examples=(
            "ValueError: To serve at least one request with the models's max seq len (4096), "
            "(0.5 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(0.0 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`.",
        ),
        summary="One request of max_model_len tokens needs more KV cache than is left.",
        remediation=_SHORTFALL_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:572 (0.9.1)",
            "kv_cache_utils.py:707 (0.11.1-0.12.0)",
            "kv_cache_utils.py:710 (0.13.0)",
        ),
    ),
    Rule(
        id="KV003",
        source_pattern=(
            r"models's max seq len \(\{\}\), \(\{\} GiB .*\{\} GiB\)\. \{\}Try increasing "
            r"`gpu_memory_utilization` or"
        ),
        name="kv-shortfall-models-s",
        vllm=">=0.14,<0.22",
        outcome="kv_cache_shortfall",
        literal="KV cache is needed, which is larger than the available KV cache memory",
        patterns=(
            r"To serve at least one request with the models's max seq len "
            r"\((?P<max_model_len>\d+)\), \((?P<needed_gib>" + _G + r") GiB KV cache is "
            r"needed, which is larger than the available KV cache memory "
            r"\((?P<available_gib>" + _G + r") GiB\)\. "
            r"(?:Based on the available memory, the estimated maximum model length is "
            r"(?P<estimated_max_model_len>-?\d+)\. )?Try increasing `gpu_memory_utilization` "
            r"or decreasing",
        ),
        examples=(
            "(EngineCore_DP0 pid=812) ERROR 03-14 09:02:11 [core.py:1108] ValueError: To serve "
            "at least one request with the models's max seq len (32768), (3.0 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (1.04 GiB). Based on "
            "the available memory, the estimated maximum model length is 11360. Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
            "engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for "
            "more details.",
            "ValueError: To serve at least one request with the models's max seq len (8192), "
            "(0.5 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(-1.5 GiB). Based on the available memory, the estimated maximum model length is "
            "-24576. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.",
        ),
        counter_examples=(
            "ValueError: To serve at least one request with the model's max seq len (32768), "
            "(3.0 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(1.04 GiB). Try increasing `gpu_memory_utilization` (which also controls CPU "
            "memory on the CPU backend) or decreasing `max_model_len`.",
        ),
        summary="One request of max_model_len tokens needs more KV cache than is left.",
        remediation=_SHORTFALL_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:634 (0.14.0-0.16.0)",
            "kv_cache_utils.py:644 (0.19.0)",
            "kv_cache_utils.py:714 (0.20.0-0.21.0)",
        ),
    ),
    Rule(
        id="KV004",
        source_pattern=(
            r"model's max seq len \(\{\}\), \(\{\} GiB .*\{\} GiB\)\. \{\}Try increasing "
            r"`gpu_memory_utilization` \(which also"
        ),
        name="kv-shortfall",
        vllm=">=0.22",
        outcome="kv_cache_shortfall",
        literal="KV cache is needed, which is larger than the available KV cache memory",
        patterns=(
            r"To serve at least one request with the model's max seq len "
            r"\((?P<max_model_len>\d+)\), \((?P<needed_gib>" + _G + r") GiB KV cache is "
            r"needed, which is larger than the available KV cache memory "
            r"\((?P<available_gib>" + _G + r") GiB\)\. "
            r"(?:Based on the available memory, the estimated maximum model length is "
            r"(?P<estimated_max_model_len>-?\d+)\. )?Try increasing `gpu_memory_utilization` "
            r"\(which also controls CPU memory on the CPU backend\)",
        ),
        examples=(
            "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] ValueError: To serve at "
            "least one request with the model's max seq len (131072), (4.0 GiB KV cache is "
            "needed, which is larger than the available KV cache memory (1.0 GiB). Based on the "
            "available memory, the estimated maximum model length is 32640. Try increasing "
            "`gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
            "decreasing `max_model_len` when initializing the engine. See "
            "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
        ),
        counter_examples=(
            "ValueError: To serve at least one request with the models's max seq len (131072), "
            "(4.0 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(1.0 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`.",
        ),
        summary="One request of max_model_len tokens needs more KV cache than is left.",
        remediation=_SHORTFALL_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:718 (0.22.0)",
            "kv_cache_utils.py:778 (0.26.0-0.27.0)",
            "kv_cache_utils.py:1030 (0.32.0)",
            "vllm/v1/core/kv_cache_planning.py:78 (0.33.0)",
        ),
    ),
    Rule(
        id="KV005",
        name="v0-max-seq-len-over-kv-tokens",
        vllm=">=0.8.5,<0.11",
        outcome="kv_cache_shortfall",
        literal="is larger than the maximum number of tokens that can be stored in KV cache",
        patterns=(
            r"The model's max seq len \((?P<max_model_len>\d+)\) is larger than the maximum "
            r"number of tokens that can be stored in KV cache \((?P<kv_cache_tokens>-?\d+)\)",
        ),
        examples=(
            "ValueError: The model's max seq len (32768) is larger than the maximum number of "
            "tokens that can be stored in KV cache (21904). Try increasing "
            "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the "
            "engine.",
        ),
        summary="V0 engine: max_model_len exceeds the tokens the KV cache holds.",
        remediation=_SHORTFALL_REMEDY,
        references=("vllm/worker/worker.py:565 (0.8.5)", "worker.py:665 (0.10.2)"),
    ),
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
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="KV101",
        name="kv-shortfall-core",
        tier="tolerant",
        covers=("KV001", "KV002", "KV003", "KV004"),
        outcome="kv_cache_shortfall",
        literal="KV cache is needed, which is larger than the available KV cache memory",
        patterns=(
            r"max seq len \(?(?P<max_model_len>\d+)\)?,? \(?(?P<needed_gib>-?\d+(?:\.\d+)?) GiB "
            r"KV cache is needed, which is larger than the available KV cache memory "
            r"\(?(?P<available_gib>-?\d+(?:\.\d+)?) GiB\)?\.?(?: ?Based on the available memory,? "
            r"the estimated maximum model length is (?P<estimated_max_model_len>-?\d+))?",
            r"KV cache is needed, which is larger than the available KV cache memory",
        ),
        examples=(
            # KV004's text, the paste stopping after the estimate
            "ValueError: To serve at least one request with the model's max seq len (131072), "
            "(4.0 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(1.0 GiB). Based on the available memory, the estimated maximum model length is "
            "32640.",
            # KV003's text with its backticks lost
            "ValueError: To serve at least one request with the models's max seq len (32768), "
            "(3.0 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(1.04 GiB). Based on the available memory, the estimated maximum model length is "
            "11360. Try increasing gpu_memory_utilization or decreasing max_model_len when "
            "initializing the engine.",
            # KV004's text with the unbalanced `(` before the GiB figure dropped
            "ValueError: To serve at least one request with the model's max seq len (131072), "
            "4.0 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(1.0 GiB). Based on the available memory, the estimated maximum model length is "
            "32640. Try increasing `gpu_memory_utilization` (which also controls CPU memory on "
            "the CPU backend) or decreasing `max_model_len` when initializing the engine.",
            # a mix no release prints: 0.22's `model's` with 0.14's tail
            "ValueError: To serve at least one request with the model's max seq len (8192), "
            "(2.0 GiB KV cache is needed, which is larger than the available KV cache memory "
            "(0.5 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`.",
            # numbers cut off: the kind still stands
            "ValueError: To serve at least one request with the model's max seq len (131072), "
            "(4.0 GiB KV cache is needed, which is larger than the available KV cache memory",
        ),
        counter_examples=(
            "ValueError: The model's max seq len (32768) is larger than the maximum number of "
            "tokens that can be stored in KV cache (21904).",
            "INFO 11-29 16:00:40 [gpu_worker.py:760] Available KV cache memory: 1.0 GiB",
        ),
        summary="One request of max_model_len tokens needs more KV cache than is left "
        "(the sentence's core, whatever the release, tail clause or punctuation).",
        remediation=_SHORTFALL_REMEDY,
        references=(
            "vllm/v1/core/kv_cache_utils.py:1030 (0.32.0)",
            "vllm/v1/core/kv_cache_planning.py:78 (0.33.0)",
        ),
    ),
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
