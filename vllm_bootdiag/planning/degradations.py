"""What a relaunch serves worse than the launch asked for, with numbers, so a
worker can say so in its responses instead of degrading silently."""

from __future__ import annotations

from packaging.version import Version

from ..launch import LaunchConfig
from .memory import (
    effective_capture_max,
    effective_gpu_memory_utilization,
    effective_max_num_seqs,
    len_key,
)
from .policy import Policy
from .releases import default_max_num_seqs, graph_sets
from .results import Degradation

EAGER_MESSAGE = (
    "CUDA graphs off (--enforce-eager): expect ~1.5-2x lower throughput "
    "(2.0x at 1 request, 1.5x at 30 measured on an 8B model), most on small models"
)
SMALL_MODEL_GIB = 30.0
LARGE_MODEL_GIB = 50.0


def eager_message(weights_gib: float | None) -> str:
    """Eager mode's cost for a model of this size (its weights, from the log): measured
    2.0x at 1 request and 1.5x at 30 on an 8B (14.99 GiB), 0-3% on a 70B FP8 (~68 GiB),
    where the GPU time per step dwarfs the launch overhead graphs remove."""
    if weights_gib is None or weights_gib < SMALL_MODEL_GIB:
        size = f" (weights {weights_gib:g} GiB)" if weights_gib is not None else ""
        return EAGER_MESSAGE + size
    if weights_gib >= LARGE_MODEL_GIB:
        return (
            f"CUDA graphs off (--enforce-eager): on a model this size (weights "
            f"{weights_gib:g} GiB) expect little loss (0-3% measured on a 70B FP8, ~68 GiB)"
        )
    return (
        f"CUDA graphs off (--enforce-eager): expect lower throughput (weights "
        f"{weights_gib:g} GiB: between the 1.5-2x measured on an 8B and the 0-3% on a 70B)"
    )


def degradations(
    original: LaunchConfig,
    new: LaunchConfig,
    policy: Policy,
    version: Version | None = None,
    weights_gib: float | None = None,
    device: str | None = None,
) -> tuple[Degradation, ...]:
    """What `new` serves worse than `original`, with numbers, for a worker's responses
    (`device`: the boot's backend, whose unset --max-num-seqs default the cut is from)."""
    out: list[Degradation] = []
    if new.enforce_eager and not original.enforce_eager:
        out.append(Degradation(kind="eager_mode", message=eager_message(weights_gib)))
    if len_key(new.max_model_len) < len_key(original.max_model_len):
        was = (
            "the model's full context"
            if original.max_model_len is None
            else f"{original.max_model_len} tokens"
        )
        if new.max_model_len == "auto":
            msg = f"context set by vLLM's auto-fit to what fits (asked for {was})"
        else:
            msg = f"context limited to {new.max_model_len} tokens (asked for {was})"
        out.append(Degradation(kind="shorter_context", message=msg))
    seqs_old, seqs_new = effective_max_num_seqs(original), effective_max_num_seqs(new)
    if original.max_num_seqs is None:  # as seqs_steps cuts it: the release's real default
        seqs_old = default_max_num_seqs(version, device, original.tensor_parallel_size or 1)
    floor = policy.max_concurrency if policy.max_concurrency is not None else seqs_old
    if seqs_new < seqs_old and seqs_new < floor:
        out.append(
            Degradation(
                kind="lower_concurrency",
                message=f"at most {seqs_new} requests run at once (was {seqs_old}); the rest queue",
            )
        )
    if new.max_num_batched_tokens is not None and (
        original.max_num_batched_tokens is None
        or new.max_num_batched_tokens < original.max_num_batched_tokens
    ):
        out.append(
            Degradation(
                kind="lower_batched_tokens",
                message=f"prefill in chunks of {new.max_num_batched_tokens} tokens: slower "
                f"time to first token on long prompts",
            )
        )
    cap_old, cap_new = effective_capture_max(original), effective_capture_max(new)
    if 0 < cap_new < cap_old and cap_new < min(seqs_new, floor):
        out.append(
            Degradation(
                kind="fewer_cuda_graphs",
                message=f"CUDA graphs only up to batch {cap_new} (was {cap_old}); larger "
                f"batches run without them, slower",
            )
        )
    sets_old, sets_new = graph_sets(original, version), graph_sets(new, version)
    if 0 < sets_new < sets_old and not new.enforce_eager:
        out.append(
            Degradation(
                kind="fewer_cuda_graphs",
                message=f"cudagraph_mode {new.cudagraph_mode}: full decode CUDA graphs off, "
                f"piecewise graphs and torch.compile kept; decode somewhat slower (attention "
                f"runs between graph pieces), far less than eager mode",
            )
        )
    kv_old, kv_new = original.kv_cache_memory_bytes, new.kv_cache_memory_bytes
    if kv_new is not None and (kv_old is None or kv_new < kv_old):
        out.append(
            Degradation(
                kind="smaller_kv_cache",
                message=f"KV cache fixed at {kv_new / 2**30:.2f} GiB: fewer tokens in flight",
            )
        )
    util_old = effective_gpu_memory_utilization(original, version)
    util_new = effective_gpu_memory_utilization(new, version)
    if util_new < util_old:
        out.append(
            Degradation(
                kind="smaller_kv_cache",
                message=f"gpu_memory_utilization {util_new:g} (was {util_old:g}): a smaller KV "
                f"cache, fewer tokens in flight",
            )
        )
    return tuple(out)
