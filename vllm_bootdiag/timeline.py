"""Boot phases and the numbers vLLM prints along the way.

A boot goes: arguments, engine init, weight load, compile, profiling, KV-cache
sizing, CUDA-graph capture, engine ready, API server, ready. The last phase
reached says where a failure happened (a CUDA OOM during capture needs another
fix than one during weight load), and the progress lines carry the numbers the
planner needs (available KV memory, graph memory, weights).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date
from typing import TypeVar

from pydantic import BaseModel, ConfigDict

from . import boots, quick_build
from .rules.markers import _N as _N
from .rules.markers import _RAW_MARKERS as _RAW_MARKERS
from .rules.markers import MARKERS as MARKERS
from .rules.markers import PHASES as PHASES
from .rules.markers import Marker as Marker
from .text.triage import Tail, _any_start

_K = TypeVar("_K")


def _alternatives(start: str) -> list[str]:
    """The top-level `|` alternatives of a marker's start pattern (an escaped character,
    `\\(` or `\\|`, opens no group and splits nothing)."""
    out, depth, cur = [], 0, ""
    escaped = False
    for ch in start:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
            continue
        cur += ch
    return [*out, cur]


_BANNER_CHARS = frozenset(" █▀▄")
_BANNER_KEYS = ("banner_version", "banner_model")
BANNER_WORDS = ("version", "model")
"""The word each banner marker's pattern requires (tests/test_timeline_markers.py checks)."""
_WORD_1, _WORD_2 = BANNER_WORDS


class _Compiled(dict[_K, "re.Pattern[str]"]):
    """Key -> pattern, each compiled on its first use from `sources` (a tail uses few of
    them: compiling all 54 at import cost 2 ms that most classifications never use)."""

    def __init__(self, sources: dict[_K, str]) -> None:
        super().__init__()
        self.sources = sources

    def __missing__(self, key: _K) -> re.Pattern[str]:
        compiled = self[key] = re.compile(self.sources[key])
        return compiled


def _dispatch() -> tuple[dict[str, str], re.Pattern[str]]:
    """Patterns keyed by the first two characters of a message, so a line is tried
    only against the markers that can start that way (one alternation of every
    marker costs half a microsecond per line, too much at 400 lines)."""
    by_prefix: dict[str, dict[str, list[str]]] = {}
    for m in MARKERS:
        if m.key in _BANNER_KEYS:
            continue
        for alt in _alternatives(m.start):
            prefix = alt[:2]
            if re.escape(prefix) != prefix and prefix not in ("# ",):
                raise ValueError(f"marker {m.key}: {alt!r} must start with two literal characters")
            by_prefix.setdefault(prefix, {}).setdefault(m.key, []).append(alt)
    table = {
        prefix: "|".join(f"(?P<{k}>{'|'.join(alts)})" for k, alts in keys.items())
        for prefix, keys in by_prefix.items()
    }
    banner = re.compile(
        "|".join(f"(?P<{m.key}>{m.start})" for m in MARKERS if m.key in _BANNER_KEYS)
    )
    return table, banner


_SOURCES, _BANNER = _dispatch()
_TABLE = _Compiled(_SOURCES)


def _branches(start: str) -> list[str]:
    """The top-level branches of a pattern, read as `re` reads it: an escaped `(` or `|`
    and a class's characters are no grouping (`_alternatives` counts every parenthesis)."""
    out, depth, cur, k = [], 0, "", 0
    while k < len(start):
        ch = start[k]
        step = 2 if ch == "\\" else 1
        if ch == "[":  # a class, to its closing `]` (a first `]` is a member)
            end = k + 1 + (start[k + 1 : k + 2] == "^")
            end += start[end : end + 1] == "]"
            while start[end] != "]":
                end += 2 if start[end] == "\\" else 1
            step = end + 1 - k
        depth += ch == "("
        depth -= ch == ")"
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += start[k : k + step]
        k += step
    return [*out, cur]


_QUANTIFIERS = ("?", "*", "+", "{")


def _literal_head(branch: str) -> str:
    """The characters every match of `branch` starts with: its literal characters (an
    escaped punctuation mark is one) up to the first that is not one or that a quantifier
    follows."""
    head, k = "", 0
    while k < len(branch):
        ch = branch[k]
        if ch == "\\":
            ch = branch[k + 1 : k + 2]
            if not ch or ch.isalnum() or ch == "_":  # a class (`\d`), an anchor, a group
                break
            step = 2
        elif ch in ".^$*+?{}[]|()":
            break
        else:
            step = 1
        if branch[k + step : k + step + 1] in _QUANTIFIERS:
            break
        head += ch
        k += step
    return head


def _heads() -> tuple[str, ...]:
    """Every marker branch's literal head (the banner's aside): what a message a marker
    matches starts with. A head shorter than two characters would concern every message
    that starts with it, and `_dispatch` already needs two."""
    heads = set()
    for m in MARKERS:
        if m.key in _BANNER_KEYS:
            continue
        for branch in _branches(m.start):
            head = _literal_head(branch)
            if len(head) < 2:
                raise ValueError(f"marker {m.key}: {branch!r} must start with two literals")
            heads.add(head)
    return tuple(sorted(heads))


MESSAGE_HEADS: tuple[str, ...] = _heads()
_RUN = 64
"""How far the scan follows a banner's run of block characters, or a `[tag]`, before it
leaves the line to `progress_key` (a 16 KB run costs the scan no more than 64 steps)."""
_BANNER_AHEAD = rf"[ █▀▄]{{1,{_RUN}}}(?:{_WORD_1}|{_WORD_2})\s|[ █▀▄]{{{_RUN + 1}}}"
"""A message a banner marker may match (` *[█▀▄][ █▀▄]*version\\s`, `model` alike): its
word after a run of at most `_RUN` spaces and block characters, or a longer run."""
_HEADS_AHEAD = _any_start(MESSAGE_HEADS)
MESSAGE_STARTS: str = (
    rf"(?:{_HEADS_AHEAD}|{_BANNER_AHEAD}"
    rf"|\[(?![^\]\n]{{0,{_RUN}}}\] (?!{_HEADS_AHEAD}|{_BANNER_AHEAD})))"
)
"""Matches where a message starts that `progress_key` may map to a marker (the triage scan
leaves out the progress lines whose message it does not match): a marker branch's literal
head (`Model loading took`, not `Mo`: `Using max model len` shares only `Using cache`'s
first characters), a banner's word after its block characters (not the banner's other
lines), or 0.32's `[tag] ` unless the first `]` closes it with a space and what follows
is neither (a `]` without one, or none within `_RUN` characters: kept)."""


def progress_key(message: str) -> str | None:
    """The marker an INFO/DEBUG message starts with (after 0.32's `[tag] `), if any."""
    if message[:1] == "[":
        k = message.find("] ")
        if k > 0:
            message = message[k + 2 :]
    if message[:1] in _BANNER_CHARS:
        # each banner marker ends on its word: a 16 KB run of spaces or block characters
        # without it costs its pattern a backtrack per character (60 us), the test 1 us
        m = _BANNER.match(message) if _WORD_1 in message or _WORD_2 in message else None
    else:
        prefix = message[:2]
        pattern = _TABLE.get(prefix)
        if pattern is None and prefix in _SOURCES:
            pattern = _TABLE[prefix]  # compiled now, on the first message that starts so
        m = pattern.match(message) if pattern is not None else None
    return m.lastgroup if m is not None else None


PHASE_OF: dict[str, str | None] = {m.key: m.phase for m in MARKERS}
"""Marker key -> the phase it marks (None: a marker that only carries facts)."""
_FACT_RES = _Compiled({(m.key, name): rx for m in MARKERS for name, rx in m.facts})
_FIRST_WINS = frozenset({"non_default_args", "model"})
"""Facts the first occurrence gives (the launch); for the rest the last one is current."""
_FACTS_OF = {
    m.key: (m.device, tuple((name, name in _FIRST_WINS) for name, _rx in m.facts))
    for m in MARKERS
}
"""Marker key -> (its device, its facts with whether the first occurrence wins)."""

_Search = Callable[[str], "re.Match[str] | None"]


class _Steps(dict[str, tuple[str | None, tuple[tuple[str, bool, _Search], ...]]]):
    """Marker key -> `_FACTS_OF[key]` with each fact's compiled search, made on the key's
    first use (`facts` reads each marker's facts without a lookup per fact)."""

    def __missing__(self, key: str) -> tuple[str | None, tuple[tuple[str, bool, _Search], ...]]:
        device, names = _FACTS_OF[key]
        got = self[key] = (
            device,
            tuple((name, first, _FACT_RES[(key, name)].search) for name, first in names),
        )
        return got


_FACT_STEPS = _Steps()

_UVICORN_PORT = re.compile(r"Uvicorn running on \S*?:(\d+)")


class BootFacts(BaseModel):
    """Numbers the boot printed before it ended; None where it did not get there.

    `cuda_graph_gib` is the last `Graph capturing finished ... took X GiB`
    (Model Runner V2 also prints one while profiling); `device` is `cpu` when
    the CPU backend's lines are present.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)  # built by quick_build
    device: str | None = None
    model: str | None = None
    model_weights_gib: float | None = None
    available_kv_cache_gib: float | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    cuda_graph_estimate_gib: float | None = None
    cuda_graph_gib: float | None = None
    cuda_graph_seconds: float | None = None
    """How long the last `Graph capturing finished in N secs` took: the boot time fewer
    or no graphs save."""
    cuda_graph_largest_capture: int | None = None
    """The largest batch size captured (the first `largest=N` of `Profiling CUDA graph
    memory`: the mixed prefill-decode graphs, which are the larger)."""
    cuda_graph_profiling: str | None = None
    """`is enabled` (the estimate was subtracted from KV memory) or `will be enabled`
    (0.18-0.19 by default: printed, not subtracted), from gpu_worker.py's INFO line."""
    graph_profiling_gpu_memory_utilization: float | None = None
    suggested_gpu_memory_utilization: float | None = None
    """The utilization that line names: the asked one plus the graph estimate's share."""
    auto_fit_max_model_len: int | None = None
    max_num_batched_tokens: int | None = None
    """`Chunked prefill is enabled with max_num_batched_tokens=N`: the value the boot ran
    with (the release's default when the launch left it unset)."""
    port: int | None = None
    init_engine_seconds: float | None = None
    non_default_args: str | None = None


class PhaseEvent(BaseModel):
    """The first line of a boot phase."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # built by model_construct
    phase: str
    line: int
    timestamp: str | None = None
    seconds_from_start: float | None = None
    seconds: float | None = None
    """Time spent in this phase: until the next phase's first timestamped line."""


class Timeline(BaseModel):
    """Where the boot got to, when, and what it printed along the way."""

    model_config = ConfigDict(frozen=True, defer_build=True)  # built by model_construct
    events: tuple[PhaseEvent, ...] = ()
    last_phase: str | None = None
    facts: BootFacts = BootFacts.model_construct()  # the defaults: no validator built


def phase_lines(tail: Tail) -> list[tuple[int, str]]:
    """(0-based line, phase) for every progress line in the tail, in line order."""
    phase_of = PHASE_OF
    hits = [(i, p) for i, key, _, _ in tail.markers if (p := phase_of[key]) is not None]
    find, raw = tail.find, False
    for literal, phase, _device in _RAW_MARKERS:
        found = find(literal)  # (boots asked the same: Tail keeps each literal's lines)
        if found:
            hits.extend([(i, phase) for i in found])
            raw = True
    if raw:  # the markers alone are in line order already, one a line
        hits.sort()
    return hits


_DEVICE_CONFIG = re.compile(r"\bdevice_config=([a-z]+)\b")
"""The backend the engine config names (`device_config=cpu`, `=cuda`): the only line
that says so on a CPU boot, whose defaults the planner reads (128 seqs x ranks)."""


def facts(tail: Tail) -> BootFacts:
    """The numbers the boot printed (see BootFacts)."""
    found: dict[str, str | None] = {}
    device: str | None = None
    steps = _FACT_STEPS
    for _i, key, message, _ts in tail.markers:
        marker_device, marker_facts = steps[key]
        device = marker_device or device
        if device is None and key == "engine_init":  # `... with config: ..., device_config=cpu`
            # found first: `\b` leaves the pattern no literal to look for, and the config
            # is a long line (the search starts there; `\b` still reads the character before)
            at = message.find("device_config=")
            m = _DEVICE_CONFIG.search(message, at) if at >= 0 else None
            device = m[1] if m else None
        for name, first_wins, search in marker_facts:
            if first_wins and name in found:
                continue
            m = search(message)
            if m:
                found[name] = m[1] if first_wins else m[1].replace(",", "")
    for i in tail.find("Uvicorn running on"):
        m = _UVICORN_PORT.search(tail.lines[i])
        if m:
            found["port"] = m[1]
    if device is None and (tail.find("Capturing CUDA graph") or tail.find("CUDA out of memory")):
        device = "cuda"
    found["device"] = device  # (its own dict: handed over as it is)
    build = quick_build.validator(BootFacts)  # what `build` calls, once warm: called as is
    return build(found) if build is not None else quick_build.build(BootFacts, found)


def _clock(ts: str) -> int:
    """Seconds since the start of the year for `mm-dd HH:MM:SS`.

    vLLM prints no year; a leap year keeps 02-29 valid. Across New Year the
    offset goes negative, and durations are then left out rather than guessed.
    """
    day = date(2000, int(ts[0:2]), int(ts[3:5])).toordinal() - _YEAR_START
    return day * 86400 + int(ts[6:8]) * 3600 + int(ts[9:11]) * 60 + int(ts[12:14])


_YEAR_START = date(2000, 1, 1).toordinal()


def build_from_tail(tail: Tail, phases: list[tuple[int, str]] | None = None) -> Timeline:
    """The timeline of a tail already sorted by `triage.Tail` with `progress_key`
    (`phases`: its `phase_lines`, when the caller has them already)."""
    stamps = {i: ts for i, _key, _message, ts in tail.markers}
    firsts: list[tuple[str, int, str | None, float | None]] = []
    seen: set[str] = set()
    start: int | None = None
    for i, phase in phase_lines(tail) if phases is None else phases:
        if phase in seen:
            continue
        seen.add(phase)
        ts = stamps.get(i)
        offset: float | None = None
        if ts is not None:
            try:
                now = _clock(ts)
            except ValueError:
                now = None
            if now is not None:
                start = now if start is None else start
                offset = float(now - start)
        firsts.append((phase, tail.number(i), ts, offset))
    events: list[PhaseEvent] = []
    for k, (phase, line, ts, offset) in enumerate(firsts):
        later = [o for *_, o in firsts[k + 1 :] if o is not None]
        spent = later[0] - offset if offset is not None and later and later[0] >= offset else None
        # Built from values this function computed: no validation needed on the hot path.
        events.append(
            PhaseEvent.model_construct(
                phase=phase, line=line, timestamp=ts, seconds_from_start=offset, seconds=spent
            )
        )
    last = max(events, key=lambda e: PHASES.index(e.phase), default=None)
    return Timeline.model_construct(
        events=tuple(events), last_phase=last.phase if last else None, facts=facts(tail)
    )


def build(lines: Sequence[str], first_line: int = 1) -> Timeline:
    """The last boot's phases reached, with timestamps, and its numbers. `first_line`
    is the number of `lines[0]` in the whole log (a tail's offset), so each event
    cites the file's line, not the tail's."""
    from .text.normalize import normalize_rows

    # journald, docker json-file, stern, CI pages: the wrappers classify undoes, undone here
    # too, or a wrapped log shows no phase at all
    rows, repairs = normalize_rows(lines, first_line=first_line)
    numbers: Sequence[int] = range(first_line, first_line + len(lines))
    if repairs:
        lines, numbers = [r[0] for r in rows], [r[1] for r in rows]
    plain = not repairs and first_line == 1  # numbered 1.. by position: Tail's default
    tail = Tail(lines, progress_key, None if plain else numbers, MESSAGE_STARTS)
    found = boots.find(tail, PHASE_OF)
    if found.count > 1:  # a log appended across restarts: the last boot, as classify reads
        tail = Tail(lines[found.last :], progress_key, numbers[found.last :], MESSAGE_STARTS)
    return build_from_tail(tail)
