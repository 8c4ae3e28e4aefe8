"""Boot phases and the numbers vLLM prints along the way.

A boot goes: arguments, engine init, weight load, compile, profiling, KV-cache
sizing, CUDA-graph capture, engine ready, API server, ready. The last phase
reached says where a failure happened (a CUDA OOM during capture is a different
fix from one during weight load), and the progress lines carry the numbers the
planner needs (available KV memory, graph memory, weights).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import regex
from pydantic import BaseModel, ConfigDict

from .scan import Tail

PHASES: tuple[str, ...] = (
    "arguments",
    "engine_init",
    "weight_load",
    "weights_loaded",
    "compile",
    "profiling",
    "kv_cache_sized",
    "graph_capture",
    "graph_captured",
    "engine_ready",
    "api_server",
    "ready",
)
"""Boot phases in the order vLLM goes through them."""


@dataclass(frozen=True, slots=True)
class _Marker:
    phase: str
    literal: str


_MARKERS: tuple[_Marker, ...] = (
    _Marker("arguments", "non-default args"),
    _Marker("arguments", "vLLM API server version"),
    _Marker("engine_init", "LLM engine (v"),
    _Marker("weight_load", "Starting to load model"),
    _Marker("weight_load", "Loading model from scratch"),
    _Marker("weight_load", "Loading safetensors checkpoint shards"),
    _Marker("weight_load", "Loading weights took"),
    _Marker("weights_loaded", "Model loading took"),
    _Marker("compile", "Dynamo bytecode transform time"),
    _Marker("compile", "Compiling a graph for"),
    _Marker("compile", "torch.compile take"),
    _Marker("compile", "torch.compile took"),
    _Marker("profiling", "Initial profiling/warmup run took"),
    _Marker("profiling", "Memory profiling takes"),
    _Marker("profiling", "Profiling CUDA graph memory"),
    _Marker("profiling", "Estimated CUDA graph memory"),
    _Marker("profiling", "CUDA graph memory profiling is"),
    _Marker("kv_cache_sized", "Available KV cache memory"),
    _Marker("kv_cache_sized", "GiB for KV cache"),
    _Marker("kv_cache_sized", "KV cache size:"),
    _Marker("kv_cache_sized", "Auto-fit max_model_len:"),
    _Marker("graph_capture", "Capturing CUDA graph"),
    _Marker("graph_capture", "Capturing cudagraphs"),
    _Marker("graph_captured", "Graph capturing finished"),
    _Marker("engine_ready", "init engine (profile, create kv cache, warmup model) took"),
    _Marker("api_server", "Starting vLLM API server"),
    _Marker("api_server", "Starting vLLM server on"),
    _Marker("api_server", "Available routes are"),
    _Marker("ready", "Application startup complete"),
)

_G = r"(-?\d+(?:\.\d+)?)"


class BootFacts(BaseModel):
    """Numbers the boot printed before it ended; None where it did not get there.

    `cuda_graph_gib` is the last `Graph capturing finished ... took X GiB`
    (Model Runner V2 also prints one during profiling); `device` is `cpu` when
    the CPU backend's lines are present.
    """

    model_config = ConfigDict(frozen=True)
    device: str | None = None
    model_weights_gib: float | None = None
    available_kv_cache_gib: float | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    cuda_graph_estimate_gib: float | None = None
    cuda_graph_gib: float | None = None
    auto_fit_max_model_len: int | None = None
    port: int | None = None
    init_engine_seconds: float | None = None
    non_default_args: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class _Fact:
    name: str
    literal: str
    pattern: regex.Pattern[str]
    last: bool = True
    """Keep the last occurrence (True) or the first."""


_FACTS: tuple[_Fact, ...] = (
    _Fact("model_weights_gib", "Model loading took", regex.compile(r"Model loading took " + _G)),
    _Fact(
        "available_kv_cache_gib",
        "Available KV cache memory",
        regex.compile(r"Available KV cache memory: " + _G + r" ?GiB"),
    ),
    _Fact(
        "available_kv_cache_gib",
        "GiB for KV cache",
        regex.compile(r"(?:Explicitly|Auto) set \(" + _G + r"/[\d.]+\) GiB for KV cache"),
    ),
    _Fact(
        "available_kv_cache_gib",
        "VLLM_CPU_KVCACHE_SPACE not set",
        regex.compile(r"Using " + _G + r" GiB for KV cache"),
    ),
    _Fact("kv_cache_tokens", "KV cache size:", regex.compile(r"KV cache size: ([\d,]+) tokens")),
    _Fact(
        "max_concurrency",
        "Maximum concurrency for",
        regex.compile(r"Maximum concurrency for [\d,]+ tokens per request: " + _G + r"x"),
    ),
    _Fact(
        "cuda_graph_estimate_gib",
        "Estimated CUDA graph memory",
        regex.compile(r"Estimated CUDA graph memory: " + _G + r" GiB total"),
    ),
    _Fact(
        "cuda_graph_gib",
        "Graph capturing finished",
        regex.compile(r"Graph capturing finished in \d+ secs, took " + _G + r" GiB"),
    ),
    _Fact(
        "auto_fit_max_model_len",
        "Auto-fit max_model_len: reduced",
        regex.compile(r"reduced from \d+ to (\d+)"),
    ),
    _Fact(
        "port",
        "Starting vLLM",
        regex.compile(r"Starting vLLM (?:API )?server.*?on (?:https?://)?[^\s:]*:(\d+)"),
    ),
    _Fact("port", "Uvicorn running on", regex.compile(r"Uvicorn running on \S+:(\d+)")),
    _Fact(
        "init_engine_seconds",
        "init engine (profile",
        regex.compile(r"warmup model\) took " + _G + r" s"),
    ),
    _Fact("model", "non-default args:", regex.compile(r"'model': '([^']+)'"), last=False),
    _Fact("model", "  model  ", regex.compile(r"[█▀▄]\s+model\s+(\S+)\s*$"), last=False),
    _Fact(
        "non_default_args",
        "non-default args:",
        regex.compile(r"non-default args: (\{.*\})\s*$"),
        last=False,
    ),
)

_TEXT_FACTS = frozenset({"non_default_args", "model"})

_CPU_LITERALS = (
    "cpu_worker.py",
    "CPU KV cache size",
    "GiB for KV cache on node",
    "cpu_model_runner",
)
_CUDA_LITERALS = ("gpu_worker.py", "GPU KV cache size", "gpu_model_runner.py", "CUDA graph")


class PhaseEvent(BaseModel):
    """The first line of a boot phase."""

    model_config = ConfigDict(frozen=True)
    phase: str
    line: int
    timestamp: str | None = None
    seconds_from_start: float | None = None


class Timeline(BaseModel):
    """Where the boot got to, when, and what it printed along the way."""

    model_config = ConfigDict(frozen=True)
    events: tuple[PhaseEvent, ...] = ()
    last_phase: str | None = None
    facts: BootFacts = BootFacts()

    def phase_at(self, line: int) -> str | None:
        """The last phase whose first line is at or before `line` (1-based)."""
        current: str | None = None
        for e in self.events:
            if e.line <= line:
                current = e.phase
        return current


def phase_lines(tail: Tail) -> list[tuple[int, str]]:
    """(0-based line, phase) for every phase marker in the tail, in line order."""
    hits: list[tuple[int, str]] = []
    for marker in _MARKERS:
        hits.extend((i, marker.phase) for i in tail.find(marker.literal))
    hits.sort()
    return hits


def facts(tail: Tail) -> BootFacts:
    """The numbers the boot printed (see BootFacts)."""
    found: dict[str, object] = {}
    for fact in _FACTS:
        indices = tail.find(fact.literal)
        for i in reversed(indices) if fact.last else indices:
            m = fact.pattern.search(tail.parsed(i).message)
            if m:
                value = m[1] if fact.name in _TEXT_FACTS else m[1].replace(",", "")
                found.setdefault(fact.name, value)
                break
    if any(tail.find(lit) for lit in _CPU_LITERALS):
        found["device"] = "cpu"
    elif any(tail.find(lit) for lit in _CUDA_LITERALS):
        found["device"] = "cuda"
    return BootFacts.model_validate(found)


def _seconds(ts: str | None, start: str | None) -> float | None:
    if ts is None or start is None:
        return None
    # vLLM prints no year; a leap year keeps 02-29 valid.
    a = datetime.strptime("2000-" + start, "%Y-%m-%d %H:%M:%S")
    b = datetime.strptime("2000-" + ts, "%Y-%m-%d %H:%M:%S")
    return (b - a).total_seconds()


def build_from_tail(tail: Tail) -> Timeline:
    """The timeline of a tail already prepared for searching."""
    events: list[PhaseEvent] = []
    seen: set[str] = set()
    start: str | None = None
    for i, phase in phase_lines(tail):
        ts = tail.parsed(i).timestamp
        if start is None and ts is not None:
            start = ts
        if phase in seen:
            continue
        seen.add(phase)
        events.append(
            PhaseEvent(
                phase=phase, line=i + 1, timestamp=ts, seconds_from_start=_seconds(ts, start)
            )
        )
    last = max((e for e in events), key=lambda e: PHASES.index(e.phase), default=None)
    return Timeline(
        events=tuple(events), last_phase=last.phase if last else None, facts=facts(tail)
    )


def build(lines: Sequence[str]) -> Timeline:
    """The boot phases reached, with timestamps, and the boot's numbers."""
    return build_from_tail(Tail(lines))
