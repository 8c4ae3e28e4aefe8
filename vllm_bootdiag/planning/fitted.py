"""A boot that succeeded on a context the operator does not accept.

Under `--max-model-len auto` vLLM fits the longest context the KV cache holds and
boots (kv_cache_utils.py:2477 in 0.32.0: `Auto-fit max_model_len: reduced from A to
B`). Below the policy's `min_max_model_len` that server answers requests the worker
promised to serve with a context-length error, so for a worker it is a failure:
plan() and the supervisor give up (the supervisor stops the server) with what
would fit more, instead of reporting a boot. A fitted context at or above the
minimum is a boot like any other (its `shorter_context` is the worker's choice).
"""

from __future__ import annotations

from packaging.version import Version

from .. import versions
from ..diagnosis import Diagnosis
from ..launch import LaunchConfig
from .context import Ctx, memory_advice
from .graphs import graph_memory
from .memory import effective_gpu_memory_utilization, effective_max_num_seqs
from .policy import Policy
from .results import GiveUp
from .seqs_steps import seqs_target

CAUSE = "auto_fit_below_minimum"


def fitted_below_minimum(
    diagnosis: Diagnosis, config: LaunchConfig, policy: Policy
) -> GiveUp | None:
    """The give-up for a boot whose auto-fitted context is below the policy's minimum,
    else None (no auto-fit line, or a fitted length the policy accepts)."""
    fitted = diagnosis.facts.auto_fit_max_model_len
    floor = policy.min_max_model_len
    if fitted is None or fitted >= floor:
        return None
    version: Version | None = (
        versions.parse_version(diagnosis.vllm_version) if diagnosis.vllm_version else None
    )
    ctx = Ctx(diagnosis, config, policy, (), version)
    advice: list[str] = []
    target = seqs_target(ctx)
    if effective_max_num_seqs(config) > target:
        advice.append(
            f"Lower --max-num-seqs to {target} (MAX_NUM_SEQS; the worker's concurrency): "
            f"smaller CUDA graphs and sampler warm-up leave more memory to fit context into."
        )
    util = effective_gpu_memory_utilization(config, version)
    if util < policy.max_gpu_memory_utilization:
        advice.append(
            f"Raise --gpu-memory-utilization from {util:g} (up to this policy's "
            f"{policy.max_gpu_memory_utilization:g}): vLLM fits the context to what it gets."
        )
    graph = graph_memory(diagnosis.facts, config, version)
    if graph.reserved_gib is not None and policy.allow_eager:
        advice.append(
            f"--enforce-eager returns the {graph.at_least}{graph.reserved_gib:g} GiB taken for "
            f"CUDA graphs to the KV cache, at a throughput cost."
        )
    advice += memory_advice(ctx)
    return GiveUp(
        cause=CAUSE,
        reason=f"the server booted, but --max-model-len auto fitted {fitted} tokens, below "
        f"the {floor} this policy accepts (VLLM_BOOTDIAG_MIN_MAX_MODEL_LEN)",
        advice=tuple(advice),
    )
