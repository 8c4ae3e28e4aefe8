"""Config fatals: the launch asks for something the model or vLLM cannot do.

These are raised before any weights load (argument parsing, `ModelConfig`
validation), so they cost seconds, and no memory change can fix them.
"""

from __future__ import annotations

from .schema import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="CF001",
        name="max-model-len-over-model-context",
        vllm="",
        outcome="max_model_len_exceeds_model",
        literal="is greater than the derived max_model_len",
        patterns=(
            r"User-specified max_model_len \((?P<max_model_len>\d+)\) is greater than the "
            r"derived max_model_len \((?P<derived_from>\w+)=(?P<derived_max_model_len>\d+)",
        ),
        examples=(
            "Value error, User-specified max_model_len (200000) is greater than the derived "
            "max_model_len (max_position_embeddings=131072.0 or model_max_length=None in model's "
            "config.json). To allow overriding this maximum, set the env var "
            "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with "
            "extreme caution. [type=value_error, input_value=ArgsKwargs((), {}), "
            "input_type=ArgsKwargs]",
            "ValueError: User-specified max_model_len (40000) is greater than the derived "
            "max_model_len (max_position_embeddings=32768 or model_max_length=None in model's "
            "config.json). This may lead to incorrect model outputs or CUDA errors. To allow "
            "overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.",
        ),
        summary="--max-model-len is longer than the model's own context window.",
        remediation="Use a --max-model-len at or below the model's context (or omit it); "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 only if the model really supports more (RoPE scaling).",
        references=(
            "vllm/config/model.py _get_and_verify_max_len (0.11+)",
            "vllm/config.py (0.8.5)",
        ),
    ),
    Rule(
        id="CF002",
        printed_by="argparse",
        name="argparse-invalid-value",
        vllm="",
        outcome="invalid_argument",
        literal="error: argument ",
        patterns=(r"error: argument (?P<argument>[^:]+?): (?P<message>.+)$",),
        examples=(
            "vllm serve: error: argument --dtype: invalid choice: 'float7' (choose from auto, "
            "bfloat16, float, float16, float32, half)",
            "vllm serve: error: argument --max-num-seqs: invalid int value: 'abc'",
        ),
        counter_examples=("ERROR 11-29 16:00:00 [core.py:10] error: could not open socket",),
        summary="vLLM's argument parser rejected a flag value.",
        remediation="Fix the flag value named in the message; relaunching unchanged cannot help.",
        references=("vllm/utils/argparse_utils.py FlexibleArgumentParser (argparse error)",),
    ),
    Rule(
        id="CF003",
        printed_by="argparse",
        name="argparse-unrecognized",
        vllm="",
        outcome="invalid_argument",
        literal="unrecognized arguments:",
        patterns=(r"error: unrecognized arguments: (?P<argument>.+)$",),
        examples=("vllm serve: error: unrecognized arguments: --max-modle-len 4096",),
        summary="An argument this vLLM does not know (a typo, or a flag of another release).",
        remediation="Remove or rename the flag for this vLLM release.",
        references=("argparse (Python standard library)",),
    ),
    Rule(
        id="CF004",
        printed_by="pydantic",
        name="config-validation-error",
        vllm="",
        outcome="invalid_argument",
        rank=30,
        terminal=False,
        literal="validation error",
        patterns=(r"\d+ validation errors? for (?P<config>\w+)",),
        examples=(
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
        ),
        summary="A config object rejected the launch settings (details on the next lines).",
        remediation="Fix the setting named in the message; relaunching unchanged cannot help.",
        references=("vllm/config/*.py pydantic dataclasses (0.10+)",),
    ),
    Rule(
        id="CF005",
        name="unsupported-architecture",
        vllm="",
        outcome="unsupported_architecture",
        literal="are not supported for now",
        patterns=(r"Model architectures (?P<architectures>\[[^\]]*\]) are not supported for now",),
        examples=(
            "Value error, Model architectures ['FooBarForCausalLM'] are not supported for now. "
            "Supported architectures: dict_keys(['AquilaModel', 'AquilaForCausalLM'])",
        ),
        summary="This vLLM has no implementation for the model's architecture.",
        remediation="Use a vLLM release that supports the architecture, its plugin, or "
        "--model-impl transformers where that backend supports it.",
        references=("vllm/model_executor/models/registry.py:1206 (0.32.0)",),
    ),
    Rule(
        id="CF006",
        name="architecture-inspection-failed",
        status="retired",
        vllm="",
        outcome="unsupported_architecture",
        rank=40,
        literal="failed to be inspected",
        patterns=(r"Model architectures (?P<architectures>\[[^\]]*\]) failed to be inspected",),
        examples=(
            "ValueError: Model architectures ['Qwen3ForCausalLM'] failed to be inspected. Please "
            "check the logs for more details.",
        ),
        summary="Retired: the same message is MF003's, whose outcome "
        "(architecture_inspection_failed) says it is not an unsupported architecture.",
        remediation="Read the import error above it; install what it lacks or use a release "
        "that supports the architecture.",
        references=("vllm/model_executor/models/registry.py _raise_for_unsupported",),
    ),
    Rule(
        id="CF007",
        name="architecture-out-of-tree",
        vllm=">=0.19",
        outcome="unsupported_architecture",
        literal="is not supported in-tree anymore",
        patterns=(r"Model architecture (?P<architectures>\w+) is not supported in-tree anymore",),
        examples=(
            "ValueError: Model architecture MiniCPMVForCausalLM is not supported in-tree anymore. "
            "Please install the plugin at https://example.org if you want to use this model "
            "architecture.",
        ),
        summary="The architecture moved to an out-of-tree plugin.",
        remediation="Install the plugin the message names.",
        references=(
            "vllm/model_executor/models/registry.py:993 (0.20.0)",
            "registry.py:1199 (0.32.0)",
        ),
    ),
    Rule(
        id="CF008",
        name="invalid-cpu-kvcache-space",
        vllm=">=0.8.5,<0.10",
        outcome="invalid_argument",
        literal="Invalid environment variable VLLM_CPU_KVCACHE_SPACE",
        source_pattern=r"Invalid environment variable VLLM_CPU_KVCACHE_SPACE \{\}",
        patterns=(
            r"Invalid environment variable (?P<argument>VLLM_CPU_KVCACHE_SPACE) \S*, "
            r"(?P<message>expect a positive integer value)",
        ),
        examples=(
            "RuntimeError: Invalid environment variable VLLM_CPU_KVCACHE_SPACE -1, expect a "
            "positive integer value.",
        ),
        summary="CPU backend: VLLM_CPU_KVCACHE_SPACE is not a positive integer (GiB).",
        remediation="Set VLLM_CPU_KVCACHE_SPACE to a positive whole number of GiB.",
        references=("vllm/platforms/cpu.py:112 (0.8.5)", "platforms/cpu.py:137 (0.9.2)"),
    ),
    Rule(
        id="CF009",
        name="architecture-retired",
        vllm=">=0.10",
        outcome="unsupported_architecture",
        literal="and is not supported anymore",
        patterns=(
            r"Model architecture (?P<architectures>\w+) was supported in vLLM until v\S+, and "
            r"is not supported anymore",
        ),
        examples=(
            "ValueError: Model architecture MPTForCausalLM was supported in vLLM until v0.10.0, "
            "and is not supported anymore. Please use an older version of vLLM if you want to "
            "use this model architecture.",
        ),
        summary="The architecture was removed from vLLM.",
        remediation="Use a vLLM release up to the one named, or another model.",
        references=(
            "vllm/model_executor/models/registry.py (0.10.0)",
            "registry.py:1190 (0.32.0)",
        ),
    ),
    Rule(
        id="CF010",
        name="gpu-memory-utilization-over-one",
        vllm=">=0.8.5,<0.11.1",
        outcome="invalid_argument",
        literal="GPU memory utilization must be less than 1.0",
        source_pattern=r"GPU memory utilization must be less than 1\.0\. Got \{\}",
        patterns=(
            r"(?P<message>GPU memory utilization must be less than 1\.0\. Got \d+(?:\.\d+)?)",
        ),
        examples=("ValueError: GPU memory utilization must be less than 1.0. Got 1.5.",),
        summary="--gpu-memory-utilization above 1 (older releases check it themselves).",
        remediation="Use a fraction between 0 and 1.",
        references=(
            "vllm/config.py CacheConfig._verify_args (0.8.5-0.10.0)",
            "vllm/config/cache.py (0.11.0)",
        ),
    ),
    Rule(
        id="CF011",
        name="architecture-not-in-transformers",
        vllm="",
        outcome="unsupported_architecture",
        literal="is not a registered model in the Transformers library",
        source_pattern=r"Cannot find model module\. '?\{(?:!r)?\}'? is not a registered model "
        r"in the Transformers library",
        patterns=(
            r"Cannot find model module\. '(?P<architectures>\w+)' is not a registered model in "
            r"the Transformers library",
        ),
        examples=(
            "ValueError: Cannot find model module. 'FrobnicatorForCausalLM' is not a registered "
            "model in the Transformers library (only relevant if the model is meant to be in "
            "Transformers) and 'AutoModel' is not present in the model config's 'auto_map' "
            "(relevant if the model is custom).",
        ),
        summary="Neither vLLM nor its Transformers fallback knows the architecture (the V0 "
        "engine and the Transformers backend say it this way).",
        remediation="Use a vLLM release that supports the architecture, or a model whose "
        "config names a supported one (custom code needs an `auto_map`).",
        references=(
            "vllm/model_executor/model_loader/utils.py:59 (0.8.5), :195 (0.9.2)",
            "vllm/model_executor/models/registry.py _try_resolve_transformers (0.10.1.1+)",
        ),
    ),
    Rule(
        id="CF012",
        name="invalid-kv-cache-dtype",
        vllm=">=0.33",
        outcome="invalid_argument",
        literal="Invalid kv_cache_dtype: ",
        # CacheConfig quotes the value ({cache_dtype!r}); the attention selector's assert
        # (0.16+, v1/attention/selector.py:122 in 0.32.0) prints the same words unquoted,
        # which `patterns` never match. Templates keep `!r`, so this finds CacheConfig's
        # check alone (config/cache.py:473 in 0.33.0), not the assert.
        source_pattern=r"Invalid kv_cache_dtype: \{!r\}\. ",
        patterns=(
            r"(?P<message>Invalid kv_cache_dtype: '[^'\n]{0,100}'\. Valid values are: "
            r"\[[^\]\n]{0,2000}\])",
        ),
        constants=(("argument", "--kv-cache-dtype"), ("config", "CacheConfig")),
        examples=(
            "  Value error, Invalid kv_cache_dtype: 'fp7'. Valid values are: ['auto', "
            "'float16', 'bfloat16', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc', 'fp8_ds_mla', "
            "'nvfp4_ds_mla', 'nvfp4', 'nvfp4_4over6'] [type=value_error, input_value='fp7', "
            "input_type=str]",
        ),
        summary="--kv-cache-dtype names no known KV-cache dtype (0.33 checks it in "
        "CacheConfig, where argparse had choices before).",
        remediation="Use one of the values listed (auto, fp8, ...) for --kv-cache-dtype.",
        references=("vllm/config/cache.py:472 CacheConfig._validate_cache_dtype (0.33.0)",),
    ),
    Rule(
        id="CF013",
        status="preview",
        name="hc-sp-unsupported",
        vllm=">=0.33",
        outcome="invalid_argument",
        literal="--enable-hc-sp ",
        patterns=(
            r"(?P<message>--enable-hc-sp (?:currently requires CUDA or ROCm"
            r"|is not supported for this model|requires PP=1))",
        ),
        constants=(("argument", "--enable-hc-sp"),),  # the config class is pydantic's header
        examples=(
            # rendered from vllm/config/model.py:1551-1555 (0.33.0), as pydantic prints a
            # ValueError raised in VllmConfig's validation (the corpus's heads-divisible log)
            "  Value error, --enable-hc-sp currently requires CUDA or ROCm [type=value_error, "
            "input_value=ArgsKwargs((), {'model_co... 'shutdown_timeout': 0}), "
            "input_type=ArgsKwargs]",
            "  Value error, --enable-hc-sp is not supported for this model [type=value_error, "
            "input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]",
            "ValueError: --enable-hc-sp requires PP=1",
        ),
        counter_examples=("INFO 11-29 16:19:50 [arg_utils.py:1] --enable-hc-sp is set",),
        summary="--enable-hc-sp (0.33+) asked for where vLLM cannot run it: a platform other "
        "than CUDA or ROCm, a model without support, or pipeline parallelism.",
        remediation="Drop --enable-hc-sp here: it needs a CUDA or ROCm device, a model that "
        "supports it, and --pipeline-parallel-size 1.",
        references=(
            "vllm/config/model.py:1551 ModelConfig.verify_with_parallel_config (0.33.0)",
        ),
    ),
    Rule(
        id="CF014",
        status="preview",
        name="hybrid-kv-cache-manager-forced",
        vllm=">=0.33",
        outcome="invalid_argument",
        literal="Hybrid KV cache manager was explicitly enabled but is not supported",
        patterns=(
            r"(?P<message>Hybrid KV cache manager was explicitly enabled but is not supported "
            r"in this configuration\.)",
        ),
        constants=(("argument", "--enable-hybrid-kv-cache-manager"), ("config", "VllmConfig")),
        examples=(
            # rendered from vllm/config/vllm.py:2285 (0.33.0), as pydantic prints it
            "  Value error, Hybrid KV cache manager was explicitly enabled but is not supported "
            "in this configuration. Consider omitting the --enable-hybrid-kv-cache-manager flag "
            "to let vLLM decide automatically. [type=value_error, input_value=ArgsKwargs((), "
            "{}), input_type=ArgsKwargs]",
        ),
        summary="--enable-hybrid-kv-cache-manager forced on a configuration that cannot use "
        "it (0.33+; a KV connector or a feature that needs it off).",
        remediation="Omit --enable-hybrid-kv-cache-manager and let vLLM decide.",
        references=("vllm/config/vllm.py:2285 VllmConfig.__post_init__ (0.33.0)",),
    ),
    Rule(
        id="CF020",
        status="preview",
        name="model-given-as-option",
        vllm=">=0.8.5,<0.12",
        printed_by="vllm",
        outcome="invalid_argument",
        literal="you should provide the model as a positional argument",
        patterns=(
            # backticks optional: a rendered page drops them
            r"ValueError: (?P<message>With `?vllm serve`?, you should provide the model as a "
            r"positional argument or in a config file instead of via the `?(?P<argument>--model)`? "
            r"option)",
        ),
        examples=(
            "ValueError: With `vllm serve`, you should provide the model as a positional "
            "argument or in a config file instead of via the `--model` option.",
        ),
        counter_examples=(
            # 0.12+ only warns and moves the model to the front
            "WARNING 11-29 16:00:11 [argparse_utils.py:292] With `vllm serve`, you should provide "
            "the model as a positional argument or in a config file instead of via the "
            "`--model` option. The `--model` option will be removed in a future version.",
        ),
        summary="`vllm serve --model M` was refused: up to 0.11 the model is positional.",
        remediation="Launch `vllm serve MODEL ...` (the model first, without --model).",
        references=(
            "vllm/utils.py:1343 (0.8.5)",
            "vllm/utils/__init__.py:1861 (0.11.0)",
            "vllm/utils/argparse_utils.py:195 (0.12.0: a warning)",
        ),
    ),
    # --- tolerant tier ---------------------------------------------------------------
    # CF102 before CF101: both read a cut `Value error, User-specified max_model_len ...`
    # line, and of two tolerant rules of one rank the first listed is the root cause.
    Rule(
        id="CF102",
        name="max-model-len-over-model-context-core",
        tier="tolerant",
        covers=("CF001",),
        outcome="max_model_len_exceeds_model",
        literal="User-specified max_model_len (",
        patterns=(
            # vLLM's one message that starts so; the derived length where it survives
            r"User-specified max_model_len \((?P<max_model_len>\d+)\) is greater than the"
            r"(?: derived max_model_len \((?P<derived_from>\w+)=(?P<derived_max_model_len>\d+)"
            r"(?=[.,) ]))?",
        ),
        examples=(
            # CF001's corpus line (0.11.0) cut by a viewer inside the derived length
            "  Value error, User-specified max_model_len (16384) is greater than the derived "
            "max_model_len (max_posit…",
            # the same line cut by a viewer at 120 columns, inside the core sentence
            "  Value error, User-specified max_model_len (16384) is greater than the derived "
            "max_m…",
        ),
        counter_examples=(
            "  Value error, max_model_len (16384) must be less than the derived max_model_len",
        ),
        summary="--max-model-len is over the model's context (the sentence's core; the "
        "derived length where it survives).",
        remediation="Use a --max-model-len at or below the model's context (or omit it); "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 only if the model really supports more (RoPE scaling).",
        references=("vllm/config/model.py _get_and_verify_max_len (CF001's message)",),
    ),
    Rule(
        id="CF101",
        name="pydantic-value-error-alone",
        tier="tolerant",
        covers=("CF004",),
        printed_by="pydantic",
        outcome="invalid_argument",
        literal="Value error, ",
        patterns=(
            # the same as `(?P<message>\S.*?)(?: \[type=value_error[^\]]*\])?\s*$`, but a
            # lazy group before an optional tail retries the tail at every character:
            # 0.7 ms on a 10 KB `Supported architectures` line, 30 us written this way
            r"(?<![\w,] ?)Value error, (?:(?P<message>\S.*?) \[type=value_error[^\]]*\]"
            r"|(?P<message>\S(?:.*\S)?))\s*$",
        ),
        examples=(
            # corpus/0.33.0/invalid_argument__tp4-heads9__cpu.log (ParallelConfig's check)
            "  Value error, Total number of attention heads (9) must be divisible by tensor "
            "parallel size (4). [type=value_error, input_value=ArgsKwargs((), {'model_co... "
            "'shutdown_timeout': 0}), input_type=ArgsKwargs]",
            "Value error, Total number of attention heads (9) must be divisible by tensor "
            "parallel size (4).",
        ),
        counter_examples=(
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
            "ValueError: Value error in the kernel",
        ),
        summary="A config value vLLM rejected: pydantic's `Value error, ...` line without "
        "its `validation error for ...` header (a worker's last lines, a pasted line).",
        remediation="Fix the setting named in the message; relaunching unchanged cannot help.",
        references=("pydantic_core: ValidationError line format `Value error, {msg}`",),
    ),
)
