"""CUDA-graph memory as the KV check saw it, per vLLM release and environment.

Eager mode or fewer graphs help a KV-cache failure only if vLLM subtracted the
graph memory from the KV budget before the check; where it printed a figure but
did not subtract it, eager "frees" memory that was never taken and the relaunch
fails the same way. What vLLM does (gpu_worker.py determine_available_memory):

* up to 0.17: no estimate; graphs are captured after the KV cache is sized.
* 0.18-0.19: `Estimated CUDA graph memory` printed, subtracted only with
  VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 (default 0); the INFO line says
  which ("is enabled" / "In v0.19, ... will be enabled by default").
* from 0.20: subtracted unless VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 (then a
  WARNING replaces the INFO line "CUDA graph memory profiling is enabled").
* Model Runner V2 (from 0.29) prints no estimate: its profiling capture logs
  `Graph capturing finished ... took X GiB`, a lower bound of what it subtracts
  (measured + (N-2) x per-graph, cudagraph_utils.py profile_cudagraph_memory).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from ..launch import LaunchConfig
from ..timeline import BootFacts

GRAPH_FIXED_SHARE = 3 / 7
"""Graph memory at largest capture c is taken as A + (1 - A) * c / 512 of the figure at
512, with A fitted to the one measurement we have: on a 70B, graphs at 32 seqs
(largest 64) were ~0.5x those at 256 (largest 512), where scaling says 0.125x.
The first capture (the largest batch) dominates; each smaller graph adds little."""
FULL_GRAPHS_SHARE = 0.25
"""What dropping the full decode graphs (FULL_AND_PIECEWISE -> PIECEWISE) is counted to
free, as a share of the graph figure: a guess. vLLM overlays both sets in one pool
and counts the larger first capture once (gpu_model_runner.py:6462-6466 in 0.32.0),
so only the full graphs' per-graph share goes."""

ESTIMATE_ENV = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"
ESTIMATE_SINCE = Version("0.18")
ESTIMATE_DEFAULT_ON_SINCE = Version("0.20")
MRV2_PROFILING_SINCE = Version("0.29")


def graph_share(largest_new: int, largest_old: int) -> float:
    """Graph memory at `largest_new` as a share of that at `largest_old` (see
    GRAPH_FIXED_SHARE): 64 vs 512 gives 0.5, 32 vs 64 0.93."""
    if largest_old <= 0:
        return 1.0

    def m(c: int) -> float:
        return GRAPH_FIXED_SHARE + (1 - GRAPH_FIXED_SHARE) * min(c, 512) / 512

    return min(1.0, m(max(largest_new, 0)) / m(largest_old))


@dataclass(frozen=True)
class GraphMemory:
    """The graph memory taken from the KV budget, and what that figure rests on."""

    reserved_gib: float | None
    """What eager mode would return to the KV check (None: nothing, or not known)."""
    printed_gib: float | None
    lower_bound: bool
    """The figure is Model Runner V2's profiling capture: vLLM subtracted at least it."""
    basis: str

    @property
    def at_least(self) -> str:
        return "at least " if self.lower_bound else ""


def graph_memory(facts: BootFacts, config: LaunchConfig, version: Version | None) -> GraphMemory:
    """What the boot described by `facts` charged the KV check for CUDA graphs."""
    if config.enforce_eager:
        return GraphMemory(None, None, False, "eager mode: no CUDA graphs")
    if config.kv_cache_memory_bytes is not None:
        return GraphMemory(
            None,
            None,
            False,
            "kv_cache_memory_bytes fixes the KV size: graphs are not taken from it",
        )
    est = facts.cuda_graph_estimate_gib
    mrv2 = est is None and (version is None or version >= MRV2_PROFILING_SINCE)
    figure = est if est is not None else (facts.cuda_graph_gib if mrv2 else None)
    if figure is None or figure <= 0:
        return GraphMemory(
            None,
            None,
            False,
            "no CUDA-graph figure before the KV check: graphs were not reserved up front",
        )
    source = (
        f"`Estimated CUDA graph memory: {figure:g} GiB`"
        if est is not None
        else f"Model Runner V2's profiling capture ({figure:g} GiB, a lower bound)"
    )
    reserved, why = _subtracted(facts, config, version)
    basis = f"{source}; {why}"
    return GraphMemory(figure if reserved else None, figure, est is None and reserved, basis)


def _subtracted(
    facts: BootFacts, config: LaunchConfig, version: Version | None
) -> tuple[bool, str]:
    """Whether vLLM subtracted the printed figure, and why we think so: the log's own
    line first, then the launch's environment, then the release's default."""
    state = facts.cuda_graph_profiling
    if state == "is enabled":
        return True, "subtracted from KV memory (the log: CUDA graph memory profiling is enabled)"
    if state == "will be enabled":
        return False, f"printed but not subtracted ({ESTIMATE_ENV} off, the 0.18-0.19 default)"
    env = config.env_vars().get(ESTIMATE_ENV, "").strip()
    if env in ("0", "1"):
        on = env == "1"
        return on, (
            f"{'subtracted' if on else 'not subtracted'} from KV memory ({ESTIMATE_ENV}={env} "
            f"in the launch's environment)"
        )
    if version is None:
        return True, "taken as subtracted from KV memory (version unknown; the default from 0.20)"
    if version < ESTIMATE_DEFAULT_ON_SINCE:
        return False, f"not subtracted: vLLM {version} subtracts it only with {ESTIMATE_ENV}=1"
    if facts.available_kv_cache_gib is not None:
        # From 0.20 the INFO line follows `Available KV cache memory` whenever a figure is
        # printed and the estimate is on; with it off a WARNING takes its place.
        return False, (
            f"not subtracted: the log has the KV memory but no 'profiling is enabled' line "
            f"({ESTIMATE_ENV}=0)"
        )
    return True, f"subtracted from KV memory (vLLM {version}'s default)"
