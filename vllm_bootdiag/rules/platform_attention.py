"""No attention backend for this model on this device: vLLM's backend selection.

The selector raises when no backend supports the head size, dtype or device
(v1/attention/selector.py, platforms/cuda.py). Example lines are rendered from
those format strings.
"""

from __future__ import annotations

from .schema import Rule

_ENGINE = "(EngineCore_DP0 pid=4242) "
_ATTN_REMEDY = (
    "No attention backend supports this model's head size / dtype on this GPU: pick one "
    "that does with --attention-backend (e.g. FLEX_ATTENTION, TRITON_ATTN), try another "
    "--dtype, or use a GPU the fast backends support."
)

RULES: tuple[Rule, ...] = (
    Rule(
        id="PF040",
        status="preview",
        name="no-valid-attention-backend",
        vllm=">=0.12",
        outcome="attention_backend_unsupported",
        literal="No valid attention backend found for ",
        source_pattern=r"No valid attention backend found for \{\} ",
        patterns=(
            r"No valid attention backend found for \w+ with AttentionSelectorConfig\("
            r"head_size=(?P<head_size>\d+), dtype=(?:torch\.)?(?P<dtype>\w+)"
            r"(?:[^\n]{0,2000}?\. Reasons: (?P<detail>\{[^\n]{0,4000}\}))?",
        ),
        examples=(
            _ENGINE + "ValueError: No valid attention backend found for cuda with "
            "AttentionSelectorConfig(head_size=72, dtype=torch.float32, kv_cache_dtype=auto, "
            "block_size=None, use_mla=False, has_sink=False, use_sparse=False, "
            "use_mm_prefix=False, attn_type=decoder). Reasons: {FLASH_ATTN: [head_size not "
            "supported, dtype not supported], FLASHINFER: [dtype not supported], TRITON_ATTN: "
            "[compute capability not supported]}.",
        ),
        summary="Every attention backend vLLM tried refuses this model's head size, dtype or "
        "this GPU (the reasons are per backend).",
        remediation=_ATTN_REMEDY,
        references=(
            "vllm/platforms/cuda.py:398 (0.12.0)",
            "vllm/platforms/cuda.py:470 (0.32.0)",
            "vllm/platforms/cuda.py:472, rocm.py:876 (0.33.0)",
        ),
    ),
    Rule(
        id="PF041",
        status="preview",
        name="attention-head-size-not-supported",
        vllm="<0.18",
        outcome="attention_backend_unsupported",
        literal="is not supported by ",
        source_pattern=r"Head size \{\} is not supported by ",
        patterns=(r"Head size (?P<head_size>\d+) is not supported by (?P<backend>\w+)\.",),
        examples=(
            _ENGINE + "ValueError: Head size 80 is not supported by FlashAttention. Supported "
            "head sizes are: [32, 64, 96, 128, 160, 192, 224, 256]. Set "
            "VLLM_ATTENTION_BACKEND=FLEX_ATTENTION to use FlexAttention backend which supports "
            "all head sizes.",
        ),
        summary="The selected attention backend cannot serve the model's head size.",
        remediation=_ATTN_REMEDY,
        references=(
            "vllm/v1/attention/backends/flash_attn.py:465 (0.8.5)",
            "vllm/v1/attention/backends/flash_attn.py:55 (0.11.0)",
            "vllm/v1/attention/backends/rocm_attn.py:191 (0.17.0)",
        ),
    ),
    Rule(
        id="PF042",
        status="preview",
        name="selected-attention-backend-not-valid",
        vllm=">=0.12",
        outcome="attention_backend_unsupported",
        literal="is not valid for this configuration",
        source_pattern=r"Selected backend \{\} is not valid for ",
        patterns=(
            r"Selected backend (?:AttentionBackendEnum\.)?(?P<backend>\w+) is not valid for this "
            r"configuration\. Reason: (?P<detail>[^\n]{1,2000})",
        ),
        examples=(
            _ENGINE + "ValueError: Selected backend AttentionBackendEnum.FLASHINFER is not valid "
            "for this configuration. Reason: ['head_size not supported', 'compute capability "
            "not supported']",
        ),
        summary="The backend named with --attention-backend (or VLLM_ATTENTION_BACKEND) cannot "
        "serve this model on this GPU.",
        remediation="Drop --attention-backend (let vLLM choose) or name one the reasons allow.",
        references=(
            "vllm/platforms/cuda.py:359 (0.12.0)",
            "vllm/platforms/cuda.py:436 (0.32.0)",
            "vllm/platforms/cuda.py:438 (0.33.0)",
        ),
    ),
    # --- tolerant tier: the message's core, for cut, wrapped or reworded text --------
    Rule(
        id="PF103",
        name="no-valid-attention-backend-core",
        tier="tolerant",
        covers=("PF040",),
        outcome="attention_backend_unsupported",
        literal="No valid attention backend found for ",
        patterns=(
            r"No valid attention backend found for \w+(?: with AttentionSelectorConfig\("
            r"head_size=(?P<head_size>\d+)(?=,)(?:, dtype=(?:torch\.)?(?P<dtype>\w+)(?=,))?)?",
        ),
        examples=(
            # PF040's rendered text cut by a viewer inside the selector config
            _ENGINE + "ValueError: No valid attention backend found for cuda with "
            "AttentionSelectorConfig(head_size=7…",
        ),
        counter_examples=("INFO 11-29 16:00:40 [cuda.py:1] Using FLASH_ATTN attention backend.",),
        summary="No attention backend supports this model on this device (the sentence's "
        "core; numbers where they survive).",
        remediation=_ATTN_REMEDY,
        references=("vllm/platforms/cuda.py (PF040's message)",),
    ),
    Rule(
        id="PF104",
        name="selected-attention-backend-not-valid-core",
        tier="tolerant",
        covers=("PF042",),
        outcome="attention_backend_unsupported",
        literal="is not valid for this configuration",
        patterns=(
            r"Selected backend (?:AttentionBackendEnum\.)?(?P<backend>\w+) is not valid for this "
            r"configuration",
        ),
        examples=(
            # PF042's rendered text, the paste stopping after the first sentence
            _ENGINE + "ValueError: Selected backend AttentionBackendEnum.FLASHINFER is not valid "
            "for this configuration.",
        ),
        counter_examples=("ValueError: this configuration is not valid",),
        summary="The attention backend asked for cannot run this model here (the sentence's "
        "core, without the reasons).",
        remediation="Drop --attention-backend (let vLLM choose) or name one the reasons allow.",
        references=("vllm/platforms/cuda.py (PF042's message)",),
    ),
)
