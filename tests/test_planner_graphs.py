"""planning.graphs: whether the KV check paid for CUDA graphs, per release and env."""

from __future__ import annotations

import pytest
from packaging.version import Version

from vllm_bootdiag.launch import LaunchConfig
from vllm_bootdiag.planning.graphs import graph_memory
from vllm_bootdiag.timeline import BootFacts

V1 = {"cuda_graph_estimate_gib": 0.53}
MRV2 = {"cuda_graph_gib": 0.53}
ON = {"cuda_graph_profiling": "is enabled"}
OFF_018 = {"cuda_graph_profiling": "will be enabled"}
KV = {"available_kv_cache_gib": 12.7}


@pytest.mark.parametrize(
    ("version", "facts", "env", "reserved", "lower_bound", "says"),
    [
        ("0.17.0", {}, {}, None, False, "not reserved up front"),
        ("0.18.0", {**V1, **OFF_018, **KV}, {}, None, False, "0.18-0.19 default"),
        ("0.19.0", {**V1, **KV}, {}, None, False, "only with"),
        ("0.19.0", {**V1, **ON, **KV}, {}, 0.53, False, "profiling is enabled"),
        ("0.19.0", {**V1}, {"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "1"}, 0.53, False, "=1"),
        ("0.32.0", {**V1, **ON, **KV}, {}, 0.53, False, "profiling is enabled"),
        ("0.32.0", {**V1}, {"VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "0"}, None, False, "=0"),
        ("0.32.0", {**V1, **KV}, {}, None, False, "no 'profiling is enabled' line"),
        ("0.25.0", {**V1}, {}, 0.53, False, "default"),
        ("0.28.0", {**MRV2, **KV}, {}, None, False, "not reserved up front"),  # V2 stub
        ("0.32.0", {**MRV2, **ON, **KV}, {}, 0.53, True, "a lower bound"),
        (None, {**V1}, {}, 0.53, False, "version unknown"),
    ],
)
def test_graph_memory_per_release_and_env(
    version: str | None,
    facts: dict[str, object],
    env: dict[str, str],
    reserved: float | None,
    lower_bound: bool,
    says: str,
) -> None:
    g = graph_memory(
        BootFacts.model_validate(facts),
        LaunchConfig(env=env),
        Version(version) if version else None,
    )
    assert g.reserved_gib == reserved
    assert g.lower_bound is lower_bound
    assert says in g.basis


def test_eager_and_a_fixed_kv_size_reserve_nothing() -> None:
    facts = BootFacts.model_validate({**V1, **ON})
    assert graph_memory(facts, LaunchConfig(enforce_eager=True), None).reserved_gib is None
    fixed = LaunchConfig(kv_cache_memory_bytes=2**30)
    assert graph_memory(facts, fixed, None).reserved_gib is None
