"""The planning context a step handler reads, the candidate step it returns, and
the memory advice every memory give-up carries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

from packaging.version import Version

from .. import outcomes
from ..diagnosis import Diagnosis
from ..launch import LaunchConfig
from .graphs import GraphMemory, graph_memory
from .policy import Policy
from .results import Attempt, GiveUp


@dataclass(frozen=True)
class Step:
    """A candidate relaunch: a handler proposes it, plan() vets it."""

    name: str
    config: LaunchConfig
    reason: str
    frees_gib: float | None = None
    estimate: str = ""


@dataclass(frozen=True)
class Ctx:
    diagnosis: Diagnosis
    config: LaunchConfig
    policy: Policy
    history: tuple[Attempt, ...]
    version: Version | None

    @property
    def original(self) -> LaunchConfig:
        return self.history[0].config if self.history else self.config

    @property
    def graph(self) -> GraphMemory:
        """CUDA-graph memory as the KV check saw it (see planning.graphs)."""
        return graph_memory(self.diagnosis.facts, self.config, self.version)

    @property
    def graph_gib(self) -> float | None:
        """CUDA-graph memory charged against the KV budget before the KV check: what
        eager mode returns to it. None where nothing was subtracted."""
        return self.graph.reserved_gib

    def steps_taken(self) -> list[str]:
        """Every step run so far; a combined step (`a+b`) counts as each of its parts."""
        return [part for a in self.history if a.step for part in a.step.split("+")]


Handler = Callable[[Ctx], Union[list[Step], GiveUp]]  # noqa: UP007


def update(config: LaunchConfig, **changes: Any) -> LaunchConfig:
    return config.model_copy(update=changes)


def round_len(tokens: int, block: int) -> int:
    """Round a context length down to a multiple of 1024, or of the block size below 1024."""
    if tokens >= 1024:
        return tokens // 1024 * 1024
    return tokens // block * block


# --- memory advice ---------------------------------------------------------------


def memory_advice(ctx: Ctx) -> tuple[str, ...]:
    """What can fit this model when no launch flag can: concrete, with numbers."""
    cfg, facts, o = ctx.config, ctx.diagnosis.facts, ctx.diagnosis.primary
    out: list[str] = []
    weights = (
        f" (weights take {facts.model_weights_gib:g} GiB now)" if facts.model_weights_gib else ""
    )
    out.append(f"Use a quantized checkpoint (FP8, AWQ, GPTQ){weights}.")
    if not (cfg.kv_cache_dtype or "").startswith("fp8"):
        kv = ""
        if isinstance(o, outcomes.KvCacheShortfall) and o.needed_gib and o.max_model_len:
            kv = (
                f": one {o.max_model_len}-token request would need about "
                f"{o.needed_gib / 2:g} GiB instead of {o.needed_gib:g}"
            )
        out.append(f"Use an fp8 KV cache (--kv-cache-dtype fp8), half the memory per token{kv}.")
    if isinstance(o, outcomes.CpuMemoryReservationExceeded) or facts.device == "cpu":
        # The CPU backend: no GPU to add, free or swap.
        out.append("Use a machine (or a NUMA node) with more memory.")
        out.append("Free the node's memory: stop other processes holding it.")
        return tuple(out)
    tp = cfg.tensor_parallel_size or 1
    out.append(
        f"Use more GPUs: --tensor-parallel-size {tp * 2} splits the weights and the "
        f"KV cache across them."
    )
    out.append("Use a card with more memory.")
    out.append("Free the GPU: stop other processes holding its memory (nvidia-smi).")
    return tuple(out)


def give_up_memory(ctx: Ctx, reason: str) -> GiveUp:
    return GiveUp(cause=ctx.diagnosis.primary.kind, reason=reason, advice=memory_advice(ctx))
