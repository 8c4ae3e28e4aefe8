"""plan(): what to launch after a failed boot, sized by the numbers vLLM printed.

The blanket answer (`--enforce-eager` and a smaller `--max-num-batched-tokens`,
whatever failed) costs up to half the throughput and tells nobody. Here each
outcome kind has its own handler; a handler walks its steps in order, sizes
each from the log (needed vs available KV memory, the CUDA-graph estimate,
vLLM's own max_model_len estimate), skips a step that cannot cover the gap, and
returns the first one that can. Every relaunch names what it gives up (its
degradations) so a worker can say so in its responses; every give-up carries
concrete advice instead of a silent exit.

Invariants (property-tested): no relaunch beyond the budget, no config twice
(the one exception is a single plain restart after an unexplained failure,
which the issue asks for and which counts against the budget), every other
relaunch needs strictly less memory, and every value is one vLLM accepts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from packaging.version import Version
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import outcomes, versions
from .diagnosis import Diagnosis
from .launch import LaunchConfig, LaunchConfigError, parse_bool, parse_int

DEFAULT_MAX_NUM_SEQS = 256
"""vLLM's default on most GPUs (1024 on >=70 GiB cards in newer releases; both
give the same default largest capture size, 512)."""
DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048
"""The API server's default on most GPUs (8192 on >=70 GiB cards): a guess when unset."""
DEFAULT_BLOCK_SIZE = 16
MAX_CAPTURE_SIZE = 512
AUTO_MAX_MODEL_LEN_SINCE = Version("0.14")
GPU_UTIL_092_SINCE = Version("0.20")
MIN_BATCHED_TOKENS = 256

EAGER_MESSAGE = (
    "CUDA graphs off (--enforce-eager): expect ~1.5-2x lower throughput "
    "(2.0x at 1 request, 1.5x at 30 measured on an 8B model), most on small models"
)


class PolicyError(ValueError):
    """A policy value from the environment that is not one (one line, for the user)."""


POLICY_ENV_NAMES: dict[str, str] = {
    "max_concurrency": "MAX_CONCURRENCY",
    "max_attempts": "VLLM_BOOTDIAG_MAX_ATTEMPTS",
    "max_boot_seconds": "VLLM_BOOTDIAG_MAX_BOOT_SECONDS",
    "min_max_model_len": "VLLM_BOOTDIAG_MIN_MAX_MODEL_LEN",
    "allow_eager": "VLLM_BOOTDIAG_ALLOW_EAGER",
    "max_gpu_memory_utilization": "VLLM_BOOTDIAG_MAX_GPU_MEMORY_UTILIZATION",
    "fallback_max_num_seqs": "VLLM_BOOTDIAG_FALLBACK_MAX_NUM_SEQS",
    "max_context_cut_before_eager": "VLLM_BOOTDIAG_MAX_CONTEXT_CUT_BEFORE_EAGER",
}
"""Policy field -> the environment variable `Policy.from_env` reads it from.
`MAX_CONCURRENCY` is the name serving workers already set for their request
concurrency; the rest are ours, prefixed so they cannot collide."""

FALLBACK_MAX_NUM_SEQS = 64
"""max_num_seqs a relaunch lowers to when the worker's concurrency is unknown:
below vLLM's 256 (graphs captured up to 128 instead of 512, a smaller sampler
warm-up) yet above what most single-card workers run at once. The relaunch
states it as a `lower_concurrency` degradation; set MAX_CONCURRENCY instead."""


class Policy(BaseModel):
    """What the worker accepts: its real concurrency, the budget, the floor on context."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    max_concurrency: int | None = Field(default=None, ge=1)
    """Requests the worker really runs at once; max_num_seqs above it buys nothing."""
    max_attempts: int = Field(default=4, ge=1)
    """Launches in total, the first one included."""
    max_boot_seconds: float | None = Field(default=3600.0, gt=0, allow_inf_nan=False)
    """Seconds of booting in total, across attempts (None: no limit)."""
    min_max_model_len: int = Field(default=1024, ge=1)
    """The shortest context the operator accepts."""
    allow_eager: bool = True
    max_gpu_memory_utilization: float = Field(default=0.95, gt=0, le=1, allow_inf_nan=False)
    """The highest gpu_memory_utilization a step may raise to; an asked value above
    it is kept as asked (never lowered except by a step that says so)."""
    fallback_max_num_seqs: int = Field(default=FALLBACK_MAX_NUM_SEQS, ge=1)
    """max_num_seqs to lower to when max_concurrency is unknown (see FALLBACK_MAX_NUM_SEQS)."""
    max_context_cut_before_eager: float = Field(default=0.1, ge=0, le=1, allow_inf_nan=False)
    """A context cut up to this fraction of the asked length is preferred over eager
    mode (which costs up to 2x throughput on small models)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str], **overrides: Any) -> Policy:
        """The policy a worker's environment describes (POLICY_ENV_NAMES); empty
        values count as unset, `overrides` (e.g. CLI flags) win. Raises PolicyError
        with one line naming the variable for a value that is not valid."""
        fields: dict[str, Any] = {}
        source: dict[str, str] = {}
        for field, name in POLICY_ENV_NAMES.items():
            text = env.get(name)
            if text is None or text.strip() == "":
                continue
            fields[field] = _policy_value(field, name, text.strip())
            source[field] = name
        for field, value in overrides.items():
            if value is not None:
                fields[field] = value
                source.pop(field, None)
        try:
            return cls.model_validate(fields)
        except ValidationError as e:
            first = e.errors()[0]
            field = ".".join(str(x) for x in first["loc"])
            raise PolicyError(f"{source.get(field, field)}: {first['msg']}") from None


def _policy_value(field: str, name: str, text: str) -> Any:
    """One env string -> the Policy field's value (`none` lifts the seconds budget)."""
    if len(text) > 64:
        raise PolicyError(f"{name}: value too long")
    try:
        if field == "allow_eager":
            return parse_bool(text, name)
        if field == "max_boot_seconds" and text.lower() in ("none", "unlimited"):
            return None
        if field in (
            "max_boot_seconds",
            "max_gpu_memory_utilization",
            "max_context_cut_before_eager",
        ):
            value = float(text)
            if not math.isfinite(value):
                raise PolicyError(f"{name}: not a finite number: {text!r}")
            return value
        return parse_int(text, name)
    except PolicyError:
        raise
    except LaunchConfigError as e:
        raise PolicyError(str(e)) from None
    except ValueError:
        raise PolicyError(f"{name}: not a number: {text!r}") from None


DegradationKind = Literal[
    "eager_mode",
    "shorter_context",
    "lower_concurrency",
    "lower_batched_tokens",
    "fewer_cuda_graphs",
    "smaller_kv_cache",
]


class Degradation(BaseModel):
    """Something the relaunched server does worse than the one asked for."""

    model_config = ConfigDict(frozen=True)
    kind: DegradationKind
    message: str


class Change(BaseModel):
    """One setting the relaunch changes."""

    model_config = ConfigDict(frozen=True)
    field: str
    old: Any
    new: Any


class Attempt(BaseModel):
    """One launch: its config, what the boot ended in, how long it took."""

    model_config = ConfigDict(frozen=True)
    config: LaunchConfig
    outcome: str | None = None
    seconds: float | None = None
    step: str | None = None
    """The plan step that produced this config (None for the first launch)."""
    exit_code: int | None = None


class Relaunch(BaseModel):
    """Launch this config next."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["relaunch"] = "relaunch"
    config: LaunchConfig
    step: str
    reason: str
    expected_to_free_gib: float | None = None
    estimate: str = ""
    """How `expected_to_free_gib` was reached, and whether it is a guess."""
    changes: tuple[Change, ...] = ()
    degradations: tuple[Degradation, ...] = ()
    """Everything the new config gives up against the first launch, cumulative."""
    attempt: int = 2

    def argv(self) -> list[str]:
        return self.config.to_argv()

    def env(self) -> dict[str, str]:
        return self.config.to_env()


class GiveUp(BaseModel):
    """Stop relaunching: no launch flag fixes this on this footprint, or the budget is spent."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["give_up"] = "give_up"
    cause: str
    """The outcome kind, or `budget` when the relaunch budget is spent."""
    reason: str
    advice: tuple[str, ...] = ()


Plan = Annotated[Union[Relaunch, GiveUp], Field(discriminator="kind")]  # noqa: UP007


class NothingToPlan(ValueError):
    """plan() was asked about a boot that succeeded."""


# --- effective values (vLLM's defaults where the config leaves a setting unset) --


def _ge(version: Version | None, floor: Version) -> bool:
    return version is not None and version >= floor


def effective_gpu_memory_utilization(config: LaunchConfig, version: Version | None) -> float:
    """The explicit value, else the release's default (0.9; 0.92 from 0.20, assumed
    when the version is unknown, the larger of the two)."""
    if config.gpu_memory_utilization is not None:
        return config.gpu_memory_utilization
    if version is not None and version < GPU_UTIL_092_SINCE:
        return 0.9
    return 0.92


def effective_max_num_seqs(config: LaunchConfig) -> int:
    return config.max_num_seqs if config.max_num_seqs is not None else DEFAULT_MAX_NUM_SEQS


def effective_capture_max(config: LaunchConfig) -> int:
    """The largest CUDA-graph batch size: 0 in eager mode, else explicit, else
    min(2 * max_num_seqs, 512)."""
    if config.enforce_eager:
        return 0
    if config.max_cudagraph_capture_size is not None:
        return config.max_cudagraph_capture_size
    if config.cudagraph_capture_sizes:
        return max(config.cudagraph_capture_sizes)
    return min(2 * effective_max_num_seqs(config), MAX_CAPTURE_SIZE)


def seqs_for(concurrency: int) -> int:
    """max_num_seqs for a worker that runs `concurrency` requests at once: rounded
    up to a multiple of 8, the step of vLLM's capture sizes (30 -> 32)."""
    return max(8, math.ceil(concurrency / 8) * 8)


def recommend_defaults(concurrency: int, base: LaunchConfig | None = None) -> LaunchConfig:
    """The launch a worker should start from: max_num_seqs tied to its concurrency.

    vLLM's default (256, or 1024 on large cards) sizes CUDA graphs and the
    sampler warm-up for batches the worker never sends; at the worker's own
    concurrency the graphs are kept, throughput is the same, the boot is faster
    and more memory is left for context, so fewer boots need a relaunch at all.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    config = base if base is not None else LaunchConfig()
    return config.model_copy(update={"max_num_seqs": seqs_for(concurrency)})


def _len_key(value: int | str | None) -> float:
    """Order max_model_len by memory: unset (the model's full context) is the most,
    `auto` the least (it fits whatever is left)."""
    if value is None:
        return math.inf
    if value == "auto":
        return 0.0
    return float(value)


def memory_dimensions(config: LaunchConfig, version: Version | None) -> dict[str, float]:
    """Each launch setting that moves memory, as a number where lower needs less."""
    return {
        "max_model_len": _len_key(config.max_model_len),
        "gpu_memory_utilization": effective_gpu_memory_utilization(config, version),
        "max_num_seqs": float(effective_max_num_seqs(config)),
        "max_num_batched_tokens": float(config.max_num_batched_tokens)
        if config.max_num_batched_tokens is not None
        else math.inf,
        "cuda_graph_capture": float(effective_capture_max(config)),
        "kv_cache_memory_bytes": float(config.kv_cache_memory_bytes)
        if config.kv_cache_memory_bytes is not None
        else math.inf,
    }


def needs_less_memory(old: LaunchConfig, new: LaunchConfig, version: Version | None) -> bool:
    """True when `new` is no larger than `old` in every memory setting and smaller in one."""
    a, b = memory_dimensions(old, version), memory_dimensions(new, version)
    return all(b[k] <= a[k] for k in a) and any(b[k] < a[k] for k in a)


# --- degradations -----------------------------------------------------------


def degradations(
    original: LaunchConfig, new: LaunchConfig, policy: Policy, version: Version | None = None
) -> tuple[Degradation, ...]:
    """What `new` serves worse than `original`, with numbers, for a worker's responses."""
    out: list[Degradation] = []
    if new.enforce_eager and not original.enforce_eager:
        out.append(Degradation(kind="eager_mode", message=EAGER_MESSAGE))
    if _len_key(new.max_model_len) < _len_key(original.max_model_len):
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


# --- the planning context ------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    """A candidate relaunch: a handler proposes it, plan() vets it."""

    name: str
    config: LaunchConfig
    reason: str
    frees_gib: float | None = None
    estimate: str = ""


@dataclass(frozen=True)
class _Ctx:
    diagnosis: Diagnosis
    config: LaunchConfig
    policy: Policy
    history: tuple[Attempt, ...]
    version: Version | None

    @property
    def original(self) -> LaunchConfig:
        return self.history[0].config if self.history else self.config

    @property
    def graph_gib(self) -> float | None:
        """CUDA-graph memory charged against the KV budget before the KV check.

        vLLM prints `Estimated CUDA graph memory` (V1 runner, 0.18+) or, under
        Model Runner V2 (0.29+), a profiling capture's `Graph capturing
        finished ... took X GiB`. No such line: graphs were not reserved up
        front, so eager or fewer graphs free nothing for the KV check.
        """
        facts = self.diagnosis.facts
        if self.config.enforce_eager or self.config.kv_cache_memory_bytes is not None:
            return None
        g = facts.cuda_graph_estimate_gib
        if g is None:
            g = facts.cuda_graph_gib
        return g if g is not None and g > 0 else None

    def steps_taken(self) -> list[str]:
        """Every step run so far; a combined step (`a+b`) counts as each of its parts."""
        return [part for a in self.history if a.step for part in a.step.split("+")]


Handler = Callable[[_Ctx], Union[list[_Step], GiveUp]]  # noqa: UP007


def _update(config: LaunchConfig, **changes: Any) -> LaunchConfig:
    return config.model_copy(update=changes)


def _round_len(tokens: int, block: int) -> int:
    """Round a context length down to a multiple of 1024, or of the block size below 1024."""
    if tokens >= 1024:
        return tokens // 1024 * 1024
    return tokens // block * block


# --- memory advice ---------------------------------------------------------------


def memory_advice(ctx: _Ctx) -> tuple[str, ...]:
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
    tp = cfg.tensor_parallel_size or 1
    out.append(
        f"Use more GPUs: --tensor-parallel-size {tp * 2} splits the weights and the "
        f"KV cache across them."
    )
    out.append("Use a card with more memory.")
    out.append("Free the GPU: stop other processes holding its memory (nvidia-smi).")
    return tuple(out)


def _give_up_memory(ctx: _Ctx, reason: str) -> GiveUp:
    return GiveUp(cause=ctx.diagnosis.primary.kind, reason=reason, advice=memory_advice(ctx))


# --- handlers ---------------------------------------------------------------------


GRAPH_SHRINK_CREDIT = 0.5
"""At most this share of the graph figure is counted as freed by fewer seqs: graph
memory does not scale with the largest capture size (on a 70B, graphs at 32 seqs
measured ~0.5x those at 256, where scaling says 0.125x)."""


@dataclass(frozen=True)
class _Seqs:
    """max_num_seqs down to the worker's concurrency, and what that frees."""

    current: int
    target: int
    known: bool
    """The concurrency came from the policy (else the fallback is a guess)."""
    frees: float | None
    """The graph memory counted as freed (conservative), None without a graph figure."""
    scaled: float | None
    """The same figure scaled by the largest capture size (an upper guess)."""
    basis: str

    def why(self, conc: int | None) -> str:
        if self.known:
            return f"max_num_seqs {self.current} is above the {conc} requests the worker runs"
        return (
            f"max_num_seqs {self.current} -> {self.target}, the fallback for an unknown "
            f"concurrency (set MAX_CONCURRENCY)"
        )


def _seqs_cut(ctx: _Ctx) -> _Seqs | None:
    """The fewer-seqs change for this launch, or None when seqs is not above the target."""
    conc = ctx.policy.max_concurrency
    target = seqs_for(conc) if conc is not None else ctx.policy.fallback_max_num_seqs
    cfg = ctx.config
    current = effective_max_num_seqs(cfg)
    if target >= current:
        return None
    g = ctx.graph_gib
    explicit = cfg.max_cudagraph_capture_size is not None or bool(cfg.cudagraph_capture_sizes)
    if g is None or explicit:
        basis = (
            "guess: the capture sizes are set explicitly, fewer seqs leaves them"
            if g is not None
            else "guess: no CUDA-graph memory reserved up front, so none is counted"
        )
        return _Seqs(current, target, conc is not None, None, None, basis)
    printed = ctx.diagnosis.facts.cuda_graph_largest_capture
    cap_old = printed or effective_capture_max(cfg)
    cap_new = min(2 * target, MAX_CAPTURE_SIZE, cap_old)
    share = 1 - cap_new / cap_old
    scaled = round(g * share, 3)
    frees = round(g * min(share, GRAPH_SHRINK_CREDIT), 3)
    basis = (
        f"guess: of the {g:g} GiB graph figure, largest capture {cap_old}"
        f"{' as printed' if printed else ''} -> {cap_new}, {frees:g} GiB is counted "
        f"(scaling says {scaled:g}; graphs do not shrink in proportion); the sampler's "
        f"per-sequence memory it also frees is not printed, so not counted"
    )
    return _Seqs(current, target, conc is not None, frees, scaled, basis)


def _lower_seqs_step(
    ctx: _Ctx, gap: float | None, why: str, for_graphs: bool = True
) -> _Step | None:
    """max_num_seqs down to the worker's concurrency alone: graphs kept, the pool shrinks
    (and the sampler warm-up runs fewer dummy requests, eager or not). With a gap it is
    proposed alone only where its conservative figure covers the gap; elsewhere plan()
    adds it to whatever else the gap needs."""
    cfg = ctx.config
    s = _seqs_cut(ctx)
    if s is None or (for_graphs and cfg.enforce_eager):
        return None
    if gap is not None and (s.frees is None or s.frees < gap):
        return None
    return _Step(
        "lower_max_num_seqs",
        _update(cfg, max_num_seqs=s.target),
        f"{s.why(ctx.policy.max_concurrency)}; {s.target} "
        f"{'still ' if cfg.enforce_eager else 'keeps CUDA graphs and '}{why}",
        s.frees,
        s.basis,
    )


def _with_fewer_seqs(ctx: _Ctx, step: _Step) -> _Step:
    """`step` with max_num_seqs at the concurrency too, where seqs is above it: fewer
    seqs costs nothing the worker uses and frees memory (graphs, sampler warm-up)."""
    s = _seqs_cut(ctx)
    if s is None or effective_max_num_seqs(step.config) <= s.target:
        return step
    return _Step(
        f"lower_max_num_seqs+{step.name}",
        _update(step.config, max_num_seqs=s.target),
        f"{step.reason}; and {s.why(ctx.policy.max_concurrency)}: {s.target} frees more "
        f"(smaller graphs, a smaller sampler warm-up) at no cost",
        step.frees_gib,
        step.estimate,
    )


def _eager_step(ctx: _Ctx, gap: float | None) -> _Step | None:
    g = ctx.graph_gib
    if not ctx.policy.allow_eager or ctx.config.enforce_eager or g is None:
        return None
    if gap is not None and g < gap:
        return None
    return _Step(
        "enforce_eager",
        _update(ctx.config, enforce_eager=True),
        f"eager mode returns the {g:g} GiB reserved for CUDA graphs to the KV cache"
        + (f", covering the {gap:g} GiB gap" if gap is not None else ""),
        g,
        "from the log: the CUDA-graph memory vLLM reserved",
    )


def _fit_len(fit: int, length: int, block: int, floor: int) -> int:
    """A fitting length rounded down to 1024 (or the block), below the asked one; an
    exact fit above the floor is kept at the floor rather than lost to the rounding."""
    new_len = min(_round_len(fit, block), _round_len(length - 1, block))
    if new_len < floor <= min(fit, length - 1):
        new_len = max(floor, min(fit, length - 1) // block * block)
    return new_len


def _kv_shortfall(ctx: _Ctx) -> list[_Step] | GiveUp:
    o = ctx.diagnosis.primary
    assert isinstance(o, outcomes.KvCacheShortfall)
    cfg = ctx.config
    length = o.max_model_len or (cfg.max_model_len if isinstance(cfg.max_model_len, int) else None)
    needed, avail = o.needed_gib, o.available_gib
    gap = needed - avail if needed is not None and avail is not None else None
    steps: list[_Step] = []
    # Once the context was shortened, a new shortfall is the estimate's own error (it is
    # not a fixed point): lower again from the new estimate rather than turn graphs off.
    shortened = _len_key(cfg.max_model_len) < _len_key(ctx.original.max_model_len)
    eager: _Step | None = None
    if gap is not None and not shortened:
        s1 = _lower_seqs_step(ctx, gap, f"frees enough for the {gap:g} GiB gap")
        if s1:
            steps.append(s1)
        eager = _eager_step(ctx, gap)
    fit, source = _fitting_len(o, length, avail)
    block = cfg.block_size or DEFAULT_BLOCK_SIZE
    floor = ctx.policy.min_max_model_len
    cut: _Step | None = None
    later: list[_Step] = []
    if fit is not None and length is not None:
        # Sized from vLLM's own figures only: what fewer seqs (added by plan()) frees
        # is a guess, left as slack rather than spent on context.
        new_len = _fit_len(fit, length, block, floor)
        if new_len >= floor:
            cut = _Step(
                "lower_max_model_len",
                _update(cfg, max_model_len=new_len),
                f"about {fit} tokens fit in the KV cache ({source}); {new_len} is that "
                f"rounded down (asked for {length})",
                round(needed * (1 - new_len / length), 3) if needed else None,
                "KV memory scales with the context length",
            )
        elif ctx.policy.allow_eager and ctx.graph_gib is not None and needed and avail is not None:
            g = ctx.graph_gib
            fit2 = int(length * (avail + g) / needed)
            len2 = _fit_len(fit2, length, block, floor)
            if len2 >= floor:
                later.append(
                    _Step(
                        "enforce_eager_and_lower_max_model_len",
                        _update(cfg, enforce_eager=True, max_model_len=len2),
                        f"only {fit} tokens fit with CUDA graphs, below the accepted {floor}; "
                        f"eager mode adds {g:g} GiB, enough for {len2}",
                        round(g + needed * (1 - len2 / length), 3),
                        "from the log: graph memory plus KV memory scaled by length",
                    )
                )
    elif (
        fit is None
        and (avail is None or avail > 0)
        and cfg.max_model_len != "auto"
        and _ge(ctx.version, AUTO_MAX_MODEL_LEN_SINCE)
    ):
        later.append(
            _Step(
                "auto_max_model_len",
                _update(cfg, max_model_len="auto"),
                "the log gives no fitting length; --max-model-len auto lets vLLM "
                "pick the longest that fits",
                None,
                "unknown: vLLM sizes it at boot",
            )
        )
    # A small context cut costs less than eager mode (up to 2x throughput): the policy
    # says how small.
    small_cut = (
        cut is not None
        and length is not None
        and isinstance(cut.config.max_model_len, int)
        and 1 - cut.config.max_model_len / length <= ctx.policy.max_context_cut_before_eager
    )
    ordered = [cut, eager] if small_cut else [eager, cut]
    steps += [s for s in ordered if s is not None] + later
    if steps:
        return steps
    reason = "the KV cache cannot hold one request"
    if length is not None and needed is not None and avail is not None:
        reason = (
            f"one {length}-token request needs {needed:g} GiB of KV cache and "
            f"{avail:g} GiB is available"
        )
        if fit is not None:
            reason += f"; about {fit} tokens fit, below the accepted {floor}"
    return _give_up_memory(ctx, reason)


def _fitting_len(
    o: outcomes.KvCacheShortfall, length: int | None, avail: float | None
) -> tuple[int | None, str]:
    """The longest context that fits, and where that figure comes from: vLLM's
    estimate, the V0 engine's token count, or length * available / needed."""
    if o.estimated_max_model_len is not None:
        return max(o.estimated_max_model_len, 0), "vLLM's estimate"
    if o.kv_cache_tokens is not None:
        return max(o.kv_cache_tokens, 0), "the tokens the KV cache holds"
    if length and o.needed_gib and avail is not None:
        return max(int(length * avail / o.needed_gib), 0), "needed vs available memory"
    return None, ""


def _no_kv_memory(ctx: _Ctx) -> list[_Step] | GiveUp:
    o = ctx.diagnosis.primary
    avail = getattr(o, "available_gib", None)
    gap = -avail if avail is not None and avail <= 0 else None
    steps = [
        s
        for s in (_lower_seqs_step(ctx, gap, "shrinks the graph pool"), _eager_step(ctx, gap))
        if s
    ]
    mbt = _lower_batched_tokens_step(ctx)
    if mbt:
        steps.append(mbt)
    return steps or _give_up_memory(
        ctx, "weights and activations leave nothing for the KV cache on this footprint"
    )


def _lower_batched_tokens_step(ctx: _Ctx) -> _Step | None:
    """Halve max_num_batched_tokens: the profiling pass's activation peak shrinks with it."""
    cfg = ctx.config
    current = cfg.max_num_batched_tokens or DEFAULT_MAX_NUM_BATCHED_TOKENS
    floor = max(MIN_BATCHED_TOKENS, cfg.max_num_seqs or 1024)
    target = max(current // 2 // 256 * 256, floor)
    if target >= current:
        return None
    guess = (
        ""
        if cfg.max_num_batched_tokens
        else f" (unset: vLLM's default taken as {DEFAULT_MAX_NUM_BATCHED_TOKENS})"
    )
    return _Step(
        "lower_max_num_batched_tokens",
        _update(cfg, max_num_batched_tokens=target),
        f"the profiling forward pass runs max_num_batched_tokens tokens at once; "
        f"{target} instead of {current}{guess} lowers its activation peak",
        None,
        "guess: the activation peak scales with the batched tokens",
    )


def _graph_capture_oom(ctx: _Ctx) -> list[_Step] | GiveUp:
    cfg, orig = ctx.config, ctx.original
    steps: list[_Step] = []
    s1 = _lower_seqs_step(ctx, None, "captures smaller graphs")
    if s1:
        steps.append(s1)
    cap = effective_capture_max(cfg)
    if cap > 8 and effective_capture_max(orig) == cap:
        half = max(8, cap // 2 // 8 * 8)
        update: dict[str, Any] = {"max_cudagraph_capture_size": half}
        if cfg.cudagraph_capture_sizes:
            update["cudagraph_capture_sizes"] = tuple(
                s for s in cfg.cudagraph_capture_sizes if s <= half
            ) or (half,)
        steps.append(
            _Step(
                "smaller_capture_sizes",
                _update(cfg, **update),
                f"capture CUDA graphs up to batch {half} instead of {cap}: a smaller graph pool",
                None,
                "guess: the graph pool scales with the largest capture size",
            )
        )
    if ctx.policy.allow_eager and not cfg.enforce_eager:
        steps.append(
            _Step(
                "enforce_eager",
                _update(cfg, enforce_eager=True),
                "eager mode captures no CUDA graphs at all",
                None,
                "all of the graph pool",
            )
        )
    if steps:
        return steps
    advice = (
        "Lower --gpu-memory-utilization so the KV cache leaves room for the graphs "
        "(vLLM's own hint).",
        *memory_advice(ctx),
    )
    return GiveUp(
        cause=ctx.diagnosis.primary.kind,
        reason="CUDA-graph capture ran out of memory and eager mode is not allowed or already on",
        advice=advice,
    )


def _profiling_oom(ctx: _Ctx) -> list[_Step] | GiveUp:
    o = ctx.diagnosis.primary
    steps: list[_Step] = []
    # The sampler warm-up wraps the torch OOM: either line may be the primary.
    sampler = any(
        isinstance(m, outcomes.ProfilingOom) and m.dummy_requests is not None
        for m in (o, *ctx.diagnosis.matches)
    )
    if sampler:
        s = _lower_seqs_step(
            ctx, None, "warms the sampler up with fewer dummy requests", for_graphs=False
        )
        if s:
            steps.append(s)
    mbt = _lower_batched_tokens_step(ctx)
    if mbt:
        steps.append(mbt)
    return steps or _give_up_memory(
        ctx, "the profiling pass ran out of memory at the smallest batched-token setting"
    )


def _insufficient_free(ctx: _Ctx) -> list[_Step] | GiveUp:
    o = ctx.diagnosis.primary
    assert isinstance(o, outcomes.InsufficientFreeMemory)
    lowered = effective_gpu_memory_utilization(
        ctx.config, ctx.version
    ) < effective_gpu_memory_utilization(ctx.original, ctx.version)
    if "lower_gpu_memory_utilization" in ctx.steps_taken() or lowered:
        return _give_up_memory(
            ctx,
            "less memory is free than asked for, again after lowering "
            "gpu_memory_utilization once: another process holds it",
        )
    if o.gpu_memory_utilization is None and o.requested_gib is not None and o.free_gib:
        return _kv_request_over_free(ctx, o)
    if o.free_gib is None or not o.total_gib:
        return _give_up_memory(
            ctx, "less memory is free than asked for, and the log does not say how much is free"
        )
    target = math.floor((o.free_gib / o.total_gib - 0.02) * 100) / 100
    current = effective_gpu_memory_utilization(ctx.config, ctx.version)
    if target < 0.05 or target >= current:
        return _give_up_memory(ctx, f"only {o.free_gib:g} of {o.total_gib:g} GiB is free")
    return [
        _Step(
            "lower_gpu_memory_utilization",
            _update(ctx.config, gpu_memory_utilization=target),
            f"{o.free_gib:g} of {o.total_gib:g} GiB is free at startup; ask for {target:g} "
            f"instead of {current:g}",
            round((current - target) * o.total_gib, 3),
            "from the log: free and total memory",
        )
    ]


def _kv_request_over_free(ctx: _Ctx, o: outcomes.InsufficientFreeMemory) -> list[_Step] | GiveUp:
    """A fixed KV-cache size (--kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE) above what
    is free: shrink the explicit flag to fit, once; an env var is the worker's to change."""
    assert o.free_gib is not None and o.requested_gib is not None
    fits_gib = math.floor(o.free_gib * 0.9 * 100) / 100
    cfg = ctx.config
    if cfg.kv_cache_memory_bytes is None or "lower_kv_cache_memory_bytes" in ctx.steps_taken():
        return _give_up_memory(
            ctx,
            f"the KV cache asks for {o.requested_gib:g} GiB and only "
            f"{o.free_gib:g} GiB is free: set VLLM_CPU_KVCACHE_SPACE or "
            f"--kv-cache-memory-bytes to at most {fits_gib:g} GiB",
        )
    target = min(int(fits_gib * 2**30), cfg.kv_cache_memory_bytes - 1)
    if target < 1:
        return _give_up_memory(ctx, f"only {o.free_gib:g} GiB is free")
    return [
        _Step(
            "lower_kv_cache_memory_bytes",
            _update(cfg, kv_cache_memory_bytes=target),
            f"the KV cache asks for {o.requested_gib:g} GiB and {o.free_gib:g} GiB is "
            f"free; ask for {fits_gib:g} GiB",
            round(o.requested_gib - fits_gib, 3),
            "from the log: free memory and the KV request",
        )
    ]


def _no_relaunch_fits(ctx: _Ctx) -> GiveUp:
    o = ctx.diagnosis.primary
    reason = {
        "auto_fit_failed": "--max-model-len auto found no length that fits, not even one "
        "token: no relaunch on this footprint can fit it",
        "weight_load_oom": "the weights alone do not fit: no launch flag shrinks them",
    }.get(o.kind, o.summary())
    return _give_up_memory(ctx, reason)


def _config_or_access(ctx: _Ctx) -> GiveUp:
    o = ctx.diagnosis.primary
    advice: list[str] = []
    if isinstance(o, outcomes.MaxModelLenExceedsModel) and o.derived_max_model_len:
        advice.append(
            f"Set --max-model-len to at most {o.derived_max_model_len} (the model's own context)."
        )
    if ctx.diagnosis.remediation:
        advice.append(ctx.diagnosis.remediation)
    evidence = o.evidence[0].text if o.evidence else ""
    reason = evidence[:300] if evidence else o.summary()
    return GiveUp(cause=o.kind, reason=reason, advice=tuple(advice))


def _restart(ctx: _Ctx) -> list[_Step] | GiveUp:
    """No cause found: let the platform restart the same config, once."""
    o = ctx.diagnosis.primary
    launches = sum(1 for a in ctx.history if a.config == ctx.config) or 1
    last = getattr(o, "last_error_line", None)
    if launches >= 2:
        advice = [f"Last error line: {last}"] if last else []
        if ctx.diagnosis.remediation:
            advice.append(ctx.diagnosis.remediation)
        return GiveUp(
            cause=o.kind,
            reason=(
                "killed again on a plain restart: give the host (or container) more memory"
                if isinstance(o, outcomes.EngineDied)
                else "failed again on a plain restart with no known cause"
            ),
            advice=tuple(advice),
        )
    if isinstance(o, outcomes.EngineDied):
        code = (
            f" (exit code {o.exit_code}: killed by signal {-o.exit_code})"
            if (o.exit_code is not None and o.exit_code < 0)
            else ""
        )
        why = (
            f"the {o.process or 'engine'} process died without printing a cause{code}, most "
            "often the kernel's OOM killer; a plain restart may succeed if the memory pressure "
            "was transient (counted against the budget)"
        )
    else:
        why = (
            "no known cause; a plain restart may succeed if it was transient (counted "
            "against the budget)"
        )
    return [_Step("restart", ctx.config, why, 0.0, "nothing changes")]


HANDLERS: dict[str, Handler] = {
    "kv_cache_shortfall": _kv_shortfall,
    "no_kv_cache_memory": _no_kv_memory,
    "auto_fit_failed": _no_relaunch_fits,
    "weight_load_oom": _no_relaunch_fits,
    "cuda_graph_capture_oom": _graph_capture_oom,
    "profiling_oom": _profiling_oom,
    "insufficient_free_memory": _insufficient_free,
    "max_model_len_exceeds_model": _config_or_access,
    "invalid_argument": _config_or_access,
    "unsupported_architecture": _config_or_access,
    "model_not_found": _config_or_access,
    "gated_model": _config_or_access,
    "revision_not_found": _config_or_access,
    "disk_full": _config_or_access,
    "engine_died": _restart,
    "unknown": _restart,
}
"""Outcome kind -> handler. Every kind but `booted` has one (a test checks)."""


# --- plan ---------------------------------------------------------------------------


def _budget(ctx: _Ctx, attempts_made: int) -> str | None:
    """Why the budget forbids another launch, or None."""
    p = ctx.policy
    if attempts_made >= p.max_attempts:
        return f"{attempts_made} of {p.max_attempts} launches used"
    if p.max_boot_seconds is not None:
        known = [a.seconds for a in ctx.history if a.seconds is not None]
        used = sum(known)
        if used >= p.max_boot_seconds:
            return f"{used:.0f} of {p.max_boot_seconds:.0f} boot seconds used"
        if known and used + sum(known) / len(known) > p.max_boot_seconds:
            return (
                f"{used:.0f} of {p.max_boot_seconds:.0f} boot seconds used; another boot "
                f"(about {sum(known) / len(known):.0f} s) would not fit"
            )
    return None


def _vet(ctx: _Ctx, step: _Step, tried: set[LaunchConfig]) -> LaunchConfig | None:
    """The step's config under the policy's gpu_memory_utilization cap, or None when it
    repeats a config, is not valid for vLLM, or does not lower memory."""
    cfg = step.config
    # A step may raise utilization up to the cap; an asked value above it stays as asked.
    cap = max(
        ctx.policy.max_gpu_memory_utilization,
        effective_gpu_memory_utilization(ctx.config, ctx.version),
    )
    if effective_gpu_memory_utilization(cfg, ctx.version) > cap:
        cfg = _update(cfg, gpu_memory_utilization=cap)
    if cfg.problems():
        return None
    if step.name == "restart" and cfg == ctx.config:
        return cfg
    if cfg in tried or not needs_less_memory(ctx.config, cfg, ctx.version):
        return None
    return cfg


def plan(
    diagnosis: Diagnosis,
    config: LaunchConfig,
    policy: Policy | None = None,
    history: Sequence[Attempt] = (),
) -> Relaunch | GiveUp:
    """The next launch after the boot `diagnosis` describes, or why to stop.

    `config` is the launch that produced the log. `history` is every launch made
    so far, oldest first; it may end with `config`'s own attempt (the supervisor
    passes it so) or not, and `config` counts as launched either way.
    Raises NothingToPlan when the diagnosis shows a boot that succeeded.
    """
    policy = policy or Policy()
    if diagnosis.primary.kind == "booted":
        raise NothingToPlan("the boot succeeded: nothing to relaunch")
    hist = tuple(history)
    if not hist or hist[-1].config != config:
        hist = (*hist, Attempt(config=config, outcome=diagnosis.primary.kind))
    version = versions.parse_version(diagnosis.vllm_version) if diagnosis.vllm_version else None
    ctx = _Ctx(diagnosis, config, policy, hist, version)
    result = HANDLERS[diagnosis.primary.kind](ctx)
    if isinstance(result, GiveUp):
        return result
    tried = {a.config for a in hist}
    memory = diagnosis.primary.category == outcomes.Category.MEMORY
    for step in result:
        if memory:
            step = _with_fewer_seqs(ctx, step)
        cfg = _vet(ctx, step, tried)
        if cfg is None:
            continue
        spent = _budget(ctx, len(hist))
        if spent is not None:
            advice: tuple[str, ...] = (
                f"The next step would have been {step.name}: {step.reason}.",
            )
            if diagnosis.primary.category == outcomes.Category.MEMORY:
                advice += memory_advice(ctx)
            return GiveUp(
                cause="budget",
                reason=f"relaunch budget spent ({spent}); last "
                f"outcome: {diagnosis.primary.summary()}",
                advice=advice,
            )
        changes = tuple(
            Change(field=k, old=a, new=b) for k, (a, b) in cfg.changes_from(config).items()
        )
        return Relaunch(
            config=cfg,
            step=step.name,
            reason=step.reason,
            expected_to_free_gib=step.frees_gib,
            estimate=step.estimate,
            changes=changes,
            degradations=degradations(ctx.original, cfg, policy, version),
            attempt=len(hist) + 1,
        )
    reason = (
        "every step for this failure was tried or cannot cover it: " + diagnosis.primary.summary()
    )
    if diagnosis.primary.category == outcomes.Category.MEMORY:
        return _give_up_memory(ctx, reason)
    return GiveUp(
        cause=diagnosis.primary.kind,
        reason=reason,
        advice=(diagnosis.remediation,) if diagnosis.remediation else (),
    )
