"""KV-cache shortfall: one full-length request does not fit the KV memory left.

vLLM raises it in the EngineCore after profiling, in `vllm/v1/core/kv_cache_utils.py`
(`_check_enough_kv_cache_memory`), and in the V0 worker up to 0.10 (`max_seq_len`
over the KV tokens). Every release's wording is an exact rule; KV101 is the tolerant
core for cut, wrapped or reworded copies.
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
)
