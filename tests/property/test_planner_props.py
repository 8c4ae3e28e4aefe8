"""Planner invariants over generated failures, configs, policies and histories.

The checks here are written out field by field rather than through the
planner's own helpers, so a bug in `needs_less_memory` cannot hide itself.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vllm_bootdiag import outcomes
from vllm_bootdiag.diagnosis import Diagnosis
from vllm_bootdiag.launch import LaunchConfig
from vllm_bootdiag.planning import Attempt, GiveUp, Policy, Relaunch, plan
from vllm_bootdiag.planning.utilization_steps import implied_config
from vllm_bootdiag.timeline import BootFacts

gib = st.floats(0.01, 200, allow_nan=False).map(lambda x: round(x, 2))

kv_shortfall = st.builds(
    outcomes.KvCacheShortfall,
    max_model_len=st.one_of(st.none(), st.integers(256, 2**20)),
    needed_gib=st.one_of(st.none(), gib),
    available_gib=st.one_of(
        st.none(), st.floats(-20, 200, allow_nan=False).map(lambda x: round(x, 2))
    ),
    estimated_max_model_len=st.one_of(st.none(), st.integers(-50000, 2**20)),
    kv_cache_tokens=st.one_of(st.none(), st.integers(0, 2**20)),
)
primaries = st.one_of(
    kv_shortfall,
    st.builds(outcomes.NoKvCacheMemory, available_gib=st.one_of(st.none(), gib)),
    st.builds(outcomes.AutoFitFailed),
    st.builds(
        outcomes.CpuMemoryReservationExceeded,
        used_gib=st.one_of(st.none(), gib),
        reserved_gib=st.one_of(st.none(), gib),
        min_gpu_memory_utilization=st.one_of(st.none(), st.floats(0.01, 1.0)),
    ),
    st.builds(outcomes.CudaGraphCaptureOom),
    st.builds(outcomes.WeightLoadOom),
    st.builds(outcomes.ProfilingOom, dummy_requests=st.one_of(st.none(), st.integers(1, 2048))),
    st.builds(
        outcomes.InsufficientFreeMemory,
        free_gib=st.one_of(st.none(), gib),
        total_gib=st.one_of(st.none(), gib),
        gpu_memory_utilization=st.one_of(st.none(), st.floats(0.1, 1.0)),
        requested_gib=st.one_of(st.none(), gib),
    ),
    st.builds(outcomes.InvalidArgument, argument=st.just("--x")),
    st.builds(outcomes.MaxModelLenExceedsModel, derived_max_model_len=st.integers(1, 2**17)),
    st.builds(outcomes.ModelNotFound),
    st.builds(outcomes.EngineDied, exit_code=st.integers(-15, 1)),
    st.builds(outcomes.Unknown, last_error_line=st.one_of(st.none(), st.just("Boom: x"))),
)
facts = st.builds(
    BootFacts,
    cuda_graph_estimate_gib=st.one_of(st.none(), st.floats(0, 10, allow_nan=False)),
    cuda_graph_gib=st.one_of(st.none(), st.floats(-1, 10, allow_nan=False)),
    available_kv_cache_gib=st.one_of(st.none(), st.floats(-20, 50, allow_nan=False)),
    cuda_graph_profiling=st.sampled_from([None, "is enabled", "will be enabled"]),
    graph_profiling_gpu_memory_utilization=st.one_of(st.none(), st.floats(0.05, 0.99)),
    suggested_gpu_memory_utilization=st.one_of(st.none(), st.floats(0.05, 1.0)),
    model_weights_gib=st.one_of(st.none(), gib),
)
diagnoses = st.builds(
    lambda p, f, v: Diagnosis(primary=p, facts=f, vllm_version=v),
    primaries,
    facts,
    st.sampled_from([None, "0.9.2", "0.13.0", "0.14.0", "0.19.0", "0.32.0"]),
)
configs = st.builds(
    LaunchConfig,
    model=st.just("m"),
    max_model_len=st.one_of(st.none(), st.just("auto"), st.integers(256, 2**20)),
    gpu_memory_utilization=st.one_of(st.none(), st.floats(0.05, 1.0).map(lambda x: round(x, 3))),
    max_num_seqs=st.one_of(st.none(), st.integers(1, 1024)),
    max_num_batched_tokens=st.one_of(st.none(), st.integers(1024, 65536)),
    enforce_eager=st.one_of(st.none(), st.booleans()),
    max_cudagraph_capture_size=st.one_of(st.none(), st.integers(1, 1024)),
    cudagraph_mode=st.sampled_from([None, "FULL_AND_PIECEWISE", "PIECEWISE"]),
    kv_cache_memory_bytes=st.one_of(st.none(), st.integers(2**20, 2**36)),
    block_size=st.one_of(st.none(), st.sampled_from([16, 32])),
).filter(lambda c: not c.problems())
policies = st.builds(
    Policy,
    max_concurrency=st.one_of(st.none(), st.integers(1, 512)),
    max_attempts=st.integers(1, 6),
    max_boot_seconds=st.one_of(st.none(), st.floats(10, 5000)),
    min_max_model_len=st.integers(1, 65536),
    allow_eager=st.booleans(),
    max_gpu_memory_utilization=st.floats(0.05, 1.0).map(lambda x: round(x, 3)),
)


def _util(config: LaunchConfig, version: str | None) -> float:
    if config.gpu_memory_utilization is not None:
        return config.gpu_memory_utilization
    if version in ("0.9.2", "0.13.0", "0.14.0", "0.19.0"):
        return 0.9
    return 0.92


def _seqs(config: LaunchConfig) -> int:
    return config.max_num_seqs if config.max_num_seqs is not None else 256


def _length(config: LaunchConfig) -> float:
    v = config.max_model_len
    return math.inf if v is None else 0.0 if v == "auto" else float(v)


def _graphs(config: LaunchConfig) -> float:
    if config.enforce_eager:
        return 0
    if config.max_cudagraph_capture_size is not None:
        return config.max_cudagraph_capture_size
    if config.cudagraph_capture_sizes:
        return max(config.cudagraph_capture_sizes)
    return min(2 * _seqs(config), 512)


def _sets(config: LaunchConfig, version: str | None) -> int:
    """Sets of CUDA graphs captured: FULL_AND_PIECEWISE (the default from 0.11.0, and
    taken for an unknown version) two, eager none, else one."""
    if config.enforce_eager:
        return 0
    mode = config.cudagraph_mode
    if mode is None:
        mode = "PIECEWISE" if version == "0.9.2" else "FULL_AND_PIECEWISE"
    return 2 if mode == "FULL_AND_PIECEWISE" else 1


def _opt(value: int | None) -> float:
    return math.inf if value is None else float(value)


def _strictly_lower(old: LaunchConfig, new: LaunchConfig, version: str | None) -> bool:
    pairs = [
        (_length(old), _length(new)),
        (_util(old, version), _util(new, version)),
        (_seqs(old), _seqs(new)),
        (_opt(old.max_num_batched_tokens), _opt(new.max_num_batched_tokens)),
        (_graphs(old), _graphs(new)),
        (_sets(old, version), _sets(new, version)),
        (_opt(old.kv_cache_memory_bytes), _opt(new.kv_cache_memory_bytes)),
    ]
    return all(b <= a for a, b in pairs) and any(b < a for a, b in pairs)


def _check_relaunch(
    r: Relaunch, d: Diagnosis, config: LaunchConfig, policy: Policy, history: list[Attempt]
) -> None:
    launched = [a.config for a in history]
    if not launched or launched[-1] != config:
        launched.append(config)
    # never beyond the budget
    assert r.attempt == len(launched) + 1 <= policy.max_attempts
    spent = sum(a.seconds for a in history if a.seconds is not None)
    if policy.max_boot_seconds is not None:
        assert spent < policy.max_boot_seconds
    new = r.config
    # values valid for vLLM; utilization raised no higher than the policy's cap, and
    # never lowered below what was asked except by a step that says so
    # (the utilization the boot had: the launch's, else what the CPU reservation check's
    # numbers imply, not the release's default)
    util_old = _util(implied_config(d, config), d.vllm_version)
    util_new = _util(new, d.vllm_version)
    assert 0 < util_new <= max(policy.max_gpu_memory_utilization, util_old)
    if "lower_gpu_memory_utilization" not in r.step.split("+"):
        assert util_new >= util_old
    if "raise_gpu_memory_utilization" in r.step.split("+"):
        assert util_new <= policy.max_gpu_memory_utilization
    # fewer seqs in every memory relaunch where seqs is above the target
    target = (
        max(8, math.ceil(policy.max_concurrency / 8) * 8)
        if policy.max_concurrency is not None
        else policy.fallback_max_num_seqs
    )
    own_fix = isinstance(d.primary, outcomes.CpuMemoryReservationExceeded)  # vLLM's fix alone
    if d.primary.category == outcomes.Category.MEMORY and not own_fix:
        assert _seqs(new) <= target or _seqs(config) <= target
    assert new.problems() == []
    assert _seqs(new) >= 1
    if isinstance(new.max_model_len, int) and new.max_model_len != config.max_model_len:
        assert new.max_model_len >= policy.min_max_model_len
    if new.enforce_eager and not config.enforce_eager:
        assert policy.allow_eager
    # never a compilation_config key the release lacks (an unknown key fails the boot);
    # one the launch set already may get a new value
    if new.max_cudagraph_capture_size != config.max_cudagraph_capture_size:
        assert config.max_cudagraph_capture_size is not None or d.vllm_version in (
            None, "0.13.0", "0.14.0", "0.19.0", "0.32.0"
        )  # fmt: skip
    if new.cudagraph_mode != config.cudagraph_mode:
        assert d.vllm_version in ("0.13.0", "0.14.0", "0.19.0", "0.32.0")
        assert new.cudagraph_mode == "PIECEWISE"
    # never a config twice, always less memory; a plain restart is the one exception
    if r.step == "restart":
        assert d.primary.kind in ("unknown", "engine_died")
        assert new == config and launched.count(config) == 1
    elif "raise_gpu_memory_utilization" in r.step.split("+"):
        # vLLM's own fix: more of the card, every other setting no larger
        assert new not in launched
        assert _util(new, d.vllm_version) > util_old
        raised = config.model_copy(update={"gpu_memory_utilization": new.gpu_memory_utilization})
        assert raised == new or _strictly_lower(raised, new, d.vllm_version)
    else:
        assert new not in launched
        assert _strictly_lower(config, new, d.vllm_version)
    kinds = {g.kind for g in r.degradations}
    if new.enforce_eager and not launched[0].enforce_eager:
        assert "eager_mode" in kinds
    if _length(new) < _length(launched[0]):
        assert "shorter_context" in kinds


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(
    diagnoses,
    configs,
    policies,
    st.lists(configs, max_size=4),
    st.lists(st.floats(1, 600), max_size=4),
)
def test_one_plan_keeps_every_invariant(
    d: Diagnosis,
    config: LaunchConfig,
    policy: Policy,
    earlier: list[LaunchConfig],
    seconds: list[float],
) -> None:
    history = [Attempt(config=c, seconds=s) for c, s in zip(earlier, seconds, strict=False)]
    result = plan(d, config, policy, history)
    if isinstance(result, GiveUp):
        assert result.reason
        if d.primary.category == outcomes.Category.MEMORY and result.cause != "budget":
            assert any("quantized" in a for a in result.advice)
        return
    _check_relaunch(result, d, config, policy, history)


def _world(d: Diagnosis, shrink: float) -> Any:
    """A machine where each relaunch's log shows the same failure with a smaller gap."""

    def next_diagnosis(step: int) -> Diagnosis:
        p = d.primary
        if isinstance(p, outcomes.KvCacheShortfall) and p.needed_gib and p.available_gib:
            needed = round(p.needed_gib * shrink**step, 2)
            est = p.estimated_max_model_len
            return d.model_copy(
                update={
                    "primary": p.model_copy(
                        update={
                            "needed_gib": needed,
                            "estimated_max_model_len": int(est * 0.97**step) if est else est,
                        }
                    )
                }
            )
        return d

    return next_diagnosis


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(diagnoses, configs, policies, st.floats(0.5, 1.0))
def test_a_relaunch_chain_ends_within_budget_without_repeats(
    d: Diagnosis, config: LaunchConfig, policy: Policy, shrink: float
) -> None:
    world = _world(d, shrink)
    history: list[Attempt] = []
    current = config
    for step in range(policy.max_attempts + 2):
        history.append(Attempt(config=current, seconds=1.0, step=None if step == 0 else "x"))
        result = plan(world(step), current, policy, history)
        if isinstance(result, GiveUp):
            break
        _check_relaunch(result, world(step), current, policy, history)
        current = result.config
    else:
        raise AssertionError("the planner never gave up")
    assert len(history) <= policy.max_attempts
    non_restart = [a.config for a in history]
    assert len(set(non_restart)) >= len(non_restart) - 1  # at most one plain restart
