"""classify(): lines in, Diagnosis out. BootWatcher: the same, a line at a time.

Flow: find each applicable rule's literal in the tail, run its patterns on
those lines only, turn named groups into typed outcomes, attribute bare CUDA
OOMs to their boot phase, fill in numbers from context, and pick the root
cause: a cause beats its echo (`Engine core initialization failed. See root
cause above.`), and a boot that completed after every failure line is booted.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex
from packaging.version import Version

from . import logtail, outcomes, scan, timeline, versions
from .diagnosis import Diagnosis
from .outcomes import Evidence, _Outcome
from .rules import BY_ID, RULES, Rule
from .scan import Tail

MAX_EVIDENCE = 4
"""Evidence lines kept per outcome: the exception repeats in the logger record and
the raw traceback; a few copies say where, more add nothing."""


@dataclass(frozen=True, slots=True)
class _Hit:
    index: int
    rule: Rule
    groups: tuple[tuple[str, str], ...]


@lru_cache(maxsize=64)
def rules_for(version: Version | None) -> tuple[Rule, ...]:
    """Active rules whose range holds `version`; all of them, newest wording first,
    when the version is unknown."""
    active = [r for r in RULES if r.applies_to(version)]
    if version is None:
        active.sort(
            key=lambda r: versions.upper_bound(r.vllm) if r.vllm else Version("9999"), reverse=True
        )
    # Exact rules first: a line an exact rule read is not read again by a tolerant one.
    active.sort(key=lambda r: r.tier != "exact")
    return tuple(active)


_VERSION_MARKERS = frozenset({"api_version", "banner_version", "engine_init"})
_VERSION_LITERALS = ("API server version", "LLM engine (v", "version ")


def _detect(tail: Tail, hint: str | None) -> versions.Detected | None:
    if hint and versions.parse_version(hint) is not None:
        return versions.detect((), hint)
    for i, key, message, _ts in tail.markers:
        if key in _VERSION_MARKERS:
            found = versions.detect((message,))
            if found is not None:
                return versions.Detected(found.version, "log", i + 1)
    return None


def _hits(tail: Tail, rules: Iterable[Rule]) -> list[_Hit]:
    """Rule matches in line order. Where two wordings of one message match the
    same line (possible when the version is unknown), the first rule wins: rules
    come newest wording first."""
    hits: list[_Hit] = []
    seen: set[tuple[int, str]] = set()
    for rule in sorted(rules, key=lambda r: r.tier != "exact"):
        for i in tail.find(rule.literal):
            if (i, rule.outcome) in seen:
                continue
            groups = rule.match(tail.lines[i])
            if groups is not None and not any(tail.find(u) for u in rule.unless):
                seen.add((i, rule.outcome))
                hits.append(_Hit(i, rule, tuple(sorted(groups.items()))))
    exact_lines = {h.index for h in hits if h.rule.tier == "exact"}
    exact_ids = {h.rule.id for h in hits if h.rule.tier == "exact"}
    hits = [
        h
        for h in hits
        if h.rule.tier == "exact"
        or (h.index not in exact_lines and not exact_ids.intersection(h.rule.covers))
    ]
    hits.sort(key=lambda h: h.index)
    return hits


# --- CUDA OOM attribution -----------------------------------------------------

# Traceback frame names that place a CUDA OOM, most specific first (plain substrings:
# a regex alternation over a 5 KB traceback costs tens of microseconds).
_GRAPH_FRAMES = (
    "capture_model",
    "_capture_cudagraphs",
    "cudagraph_utils.py",
    "torch/cuda/graphs.py",
    "profile_cudagraph_memory",
    "capture_graphs",
)
_WEIGHT_FRAMES = (
    "in load_model",
    "load_weights",
    "model_loader",
    "weight_utils",
    "initialize_model",
)
_PROFILE_FRAMES = (
    "profile_run",
    "_dummy_run",
    "_dummy_sampler_run",
    "determine_available_memory",
    "warming_up_model",
)
_PHASE_TO_OOM = {
    "arguments": "weight_load_oom",
    "engine_init": "weight_load_oom",
    "weight_load": "weight_load_oom",
    "weights_loaded": "profiling_oom",
    "compile": "profiling_oom",
    "profiling": "profiling_oom",
    "kv_cache_sized": "cuda_graph_capture_oom",
    "graph_capture": "cuda_graph_capture_oom",
}


def _oom_kind(
    tail: Tail, index: int, phases: list[tuple[int, str]], fallback: str
) -> tuple[str, str | None]:
    """The OOM kind for a bare torch OOM at `index`, and the phase it was read from.

    Traceback frames between the nearest `Traceback` line and the OOM decide
    first (graph capture, then weight load, then profiling); otherwise the last
    boot-phase line before the OOM.
    """
    start = max(0, index - 120)
    tb = None
    for j in range(index, start - 1, -1):
        if "Traceback (most recent call last)" in tail.lines[j]:
            tb = j
            break
    if tb is not None:
        frames = "\n".join(tail.lines[tb:index])
        if any(f in frames for f in _GRAPH_FRAMES):
            return "cuda_graph_capture_oom", "traceback: CUDA-graph capture frames"
        if any(f in frames for f in _WEIGHT_FRAMES):
            return "weight_load_oom", "traceback: weight-loading frames"
        if any(f in frames for f in _PROFILE_FRAMES):
            return "profiling_oom", "traceback: profiling frames"
    before = [p for i, p in phases if i < index]
    if before:
        phase = before[-1]
        return _PHASE_TO_OOM.get(phase, fallback), f"last phase: {phase}"
    return fallback, None


# --- enrichment ---------------------------------------------------------------

_VALUE_ERROR = ("Value error, ", "Assertion failed, ")
_FIELD = regex.compile(r"[A-Za-z_][\w.]*")
_INPUT_VALUE = regex.compile(r", input_value=(.*), input_type=\w+\]$")


def _pydantic_line(text: str) -> tuple[str, str | None] | None:
    """(message, input value) of a pydantic error line `<msg> [type=..., input_value=...]`.

    String operations, not a lazy regex: the message can be a 10 KB list of supported
    architectures, where backtracking costs milliseconds.
    """
    cut = text.rfind(" [type=")
    if cut < 0:
        return None
    m = _INPUT_VALUE.search(text, cut)
    return text[:cut].strip(), (m[1] if m else None)


def _validation_details(tail: Tail, index: int) -> dict[str, str]:
    """The field and message pydantic prints under `N validation error for X`.

    A field error reads `<field>` then `  Input should be ... [type=..., input_value=...]`;
    a model-level error reads `  Value error, <vLLM's own message> [type=value_error, ...]`.
    """
    out: dict[str, str] = {}
    for j in range(index + 1, min(index + 6, len(tail))):
        text = tail.parsed(j).message
        parsed = _pydantic_line(text)
        if text.startswith(_VALUE_ERROR):
            body = parsed[0] if parsed else text
            out["message"] = body.split(", ", 1)[1]
            return out
        if "argument" not in out and _FIELD.fullmatch(text):
            out["argument"] = text
            continue
        if parsed is not None:
            out["message"] = parsed[0] + (f" (got {parsed[1]})" if parsed[1] else "")
            return out
    return out


def _outcome(
    tail: Tail,
    hit: _Hit,
    evidence: list[int],
    phases: list[tuple[int, str]],
    facts: timeline.BootFacts,
) -> _Outcome:
    fields: dict[str, Any] = dict(hit.groups)
    kind = hit.rule.outcome
    if hit.rule.attribution == "cuda_oom_phase":
        kind, phase_hint = _oom_kind(tail, hit.index, phases, kind)
        fields["phase_hint"] = phase_hint
    if kind == "invalid_argument" and "message" not in fields:
        fields.update(_validation_details(tail, hit.index))
    for name, fact in outcomes.OUTCOME_TYPES[kind].CONTEXT:
        fields.setdefault(name, getattr(facts, fact))
    allowed = outcomes.field_names(kind)
    fields = {k: v for k, v in fields.items() if k in allowed}
    ev = tuple(Evidence(line=i + 1, text=tail.parsed(i).message) for i in evidence[:MAX_EVIDENCE])
    return outcomes.build(kind, rule_id=hit.rule.id, evidence=ev, **fields)


# --- unknown -------------------------------------------------------------------

_EXCEPTION = regex.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b")
_ECHOES = (
    "Engine core initialization failed",
    "EngineCore failed to start",
    "WorkerProc failed to start",
    "WorkerProc initialization failed",
    "Traceback (most recent call last)",
    "Process EngineCore",
    "See root cause above",
    "See stack trace for the root cause",
    "WorkerProc hit an exception",
    "please check the stack trace above for the root cause",
    "Frontend process failed during engine core initialization",
)


def _unknown(tail: Tail) -> outcomes.Unknown:
    """The last error-looking line that is not an echo of a cause above it."""
    fallback: int | None = None
    for i in range(len(tail) - 1, -1, -1):
        line = tail.parsed(i)
        msg = line.message
        if not msg or any(e in msg for e in _ECHOES):
            continue
        if _EXCEPTION.match(msg):
            return outcomes.Unknown(
                last_error_line=msg,
                last_error_line_number=i + 1,
                evidence=(Evidence(line=i + 1, text=msg),),
            )
        if fallback is None and line.is_error:
            fallback = i
    if fallback is not None:
        msg = tail.parsed(fallback).message
        return outcomes.Unknown(
            last_error_line=msg,
            last_error_line_number=fallback + 1,
            evidence=(Evidence(line=fallback + 1, text=msg),),
        )
    return outcomes.Unknown()


# --- root cause -----------------------------------------------------------------


def _rank(outcome: _Outcome) -> tuple[bool, bool, int]:
    rule = BY_ID.get(outcome.rule_id or "")
    if rule is not None:
        return rule.precedence
    return (True, True, outcome.RANK)


def _merged(primary: _Outcome, found: list[_Outcome]) -> _Outcome:
    """The primary with numbers it lacks taken from other matches of its kind.

    One failure is often printed several ways: vLLM's weight-load wrapper and
    torch's OOM text, the sampler warm-up message and the OOM under it.
    """
    update: dict[str, Any] = {}
    evidence = list(primary.evidence)
    for other in found:
        if other is primary or getattr(other, "kind", None) != getattr(primary, "kind", None):
            continue
        for name in outcomes.field_names(getattr(primary, "kind", "unknown")):
            if getattr(primary, name) in (None, ()) and name not in update:
                value = getattr(other, name)
                if value not in (None, ()):
                    update[name] = value
        evidence.extend(e for e in other.evidence[:1] if e not in evidence)
    if not update:
        return primary
    update["evidence"] = tuple(evidence[:MAX_EVIDENCE])
    return primary.model_copy(update=update)


def _primary(found: list[_Outcome]) -> _Outcome:
    failures = [o for o in found if o.is_failure]
    booted = [o for o in found if not o.is_failure]
    if not failures:
        return booted[-1]
    last_failure = max((o.evidence[0].line for o in failures if o.evidence), default=0)
    if booted and booted[-1].evidence and booted[-1].evidence[0].line > last_failure:
        return booted[-1]
    top = max(_rank(o) for o in failures)
    return next(o for o in failures if _rank(o) == top)


_GENERIC_REMEDY = (
    "Not a known boot failure: read the line above; a plain restart may help if it was "
    "transient (counted against the relaunch budget)."
)


def _diagnose(tail: Tail, hint: str | None) -> Diagnosis:
    detected = _detect(tail, hint)
    version = detected.version if detected else None
    hits = _hits(tail, rules_for(version))
    out_of_range = False
    if version is not None and not any(h.rule.outcome != "booted" for h in hits):
        wider = [h for h in _hits(tail, rules_for(None)) if h.rule.outcome != "booted"]
        if wider:
            hits = sorted(hits + wider, key=lambda h: h.index)
            out_of_range = True
    phases = timeline.phase_lines(tail)
    tl = timeline.build_from_tail(tail, phases)
    grouped: dict[tuple[str, tuple[tuple[str, str], ...]], list[int]] = {}
    first: dict[tuple[str, tuple[tuple[str, str], ...]], _Hit] = {}
    for h in hits:
        key = (h.rule.id, h.groups)
        grouped.setdefault(key, []).append(h.index)
        first.setdefault(key, h)
    found = [_outcome(tail, first[k], idx, phases, tl.facts) for k, idx in grouped.items()]
    found.sort(key=lambda o: o.evidence[0].line if o.evidence else 0)
    primary = _merged(_primary(found), found) if found else _unknown(tail)
    rule = BY_ID.get(primary.rule_id or "")
    # Every part is already a validated model: construct without validating again.
    remediation = rule.remediation if rule else (_GENERIC_REMEDY if primary.is_failure else "")
    return Diagnosis.model_construct(
        primary=primary,
        matches=tuple(found),
        vllm_version=str(version) if version else None,
        version_source=detected.source if detected else None,
        phase=tl.last_phase,
        facts=tl.facts,
        lines_examined=len(tail),
        version_out_of_range=out_of_range,
        remediation=remediation,
        match=rule.tier if rule else None,
        repairs=(),
    )


def classify(log: str | Sequence[str], version: str | None = None) -> Diagnosis:
    """Classify a boot log given as text or as lines (the tail a worker kept).

    Text longer than the default tail is cut to its last 400 lines, as a worker
    keeps them. Never raises on content: unreadable input gives `unknown`.
    """
    if isinstance(log, str):
        lines = logtail.split_lines(log)
    else:
        lines = list(log)
        joined = "\n".join(lines)
        if (
            "\r" in joined
            or "\x00" in joined
            or joined.count("\n") != max(len(lines) - 1, 0)
            or max(map(len, lines), default=0) > logtail.MAX_LINE_CHARS
        ):
            lines = logtail.split_lines(joined.replace("\x00", ""), None)
    return _diagnose(Tail(lines, timeline.progress_key), version)


def classify_file(
    path: str | os.PathLike[str], version: str | None = None, lines: int = logtail.DEFAULT_LINES
) -> Diagnosis:
    """Classify the tail of a log file ("-" for stdin). Raises LogReadError."""
    return _diagnose(Tail(logtail.read_tail(path, lines), timeline.progress_key), version)


class BootWatcher:
    """Classify as lines arrive; report the moment a terminal line shows up.

    A worker's output pump calls `feed(line)` for every line; the first line
    that ends the boot (a root cause, or the server coming up) makes `feed`
    return the Diagnosis, so the worker can stop waiting for a health check
    that will never pass. Later lines are still kept for `diagnosis()`.

    A rule that is not `terminal` (a generic line whose specific cause follows,
    like pydantic's `1 validation error for ModelConfig`) is reported once
    SETTLE_LINES more lines have arrived without a terminal one.
    """

    SETTLE_LINES = 3

    def __init__(self, version: str | None = None, lines: int = logtail.DEFAULT_LINES) -> None:
        self._hint = version
        self._lines: deque[str] = deque(maxlen=lines)
        self._version: Version | None = versions.parse_version(version) if version else None
        self._reported: Diagnosis | None = None
        self._pending = -1
        """Lines still to wait after a non-terminal failure line (-1: none pending)."""

    @property
    def reported(self) -> Diagnosis | None:
        """The Diagnosis `feed` returned, if it has."""
        return self._reported

    def feed(self, line: str) -> Diagnosis | None:
        """Add one line; return a Diagnosis the first time the boot has ended."""
        for part in logtail.split_lines(line, None) or [""]:
            result = self._feed_one(part)
            if result is not None:
                return result
        return None

    def _feed_one(self, line: str) -> Diagnosis | None:
        self._lines.append(line)
        if self._version is None and any(lit in line for lit in _VERSION_LITERALS):
            found = versions.detect([line])
            if found is not None:
                self._version = found.version
        if self._reported is not None:
            return None
        if scan.sort_line(line)[0] != scan.CANDIDATE:
            rules: tuple[Rule, ...] = ()  # progress, warnings and frames never end a boot
        else:
            rules = rules_for(self._version)
        for rule in rules:
            if rule.literal in line and rule.match(line) is not None:
                if rule.terminal:
                    return self._report()
                if self._pending < 0:
                    self._pending = self.SETTLE_LINES + 1
        if self._pending > 0:
            self._pending -= 1
            if self._pending == 0:
                return self._report()
        return None

    def _report(self) -> Diagnosis:
        self._reported = self.diagnosis()
        return self._reported

    def diagnosis(self) -> Diagnosis:
        """Classify everything fed so far."""
        hint = self._hint or (str(self._version) if self._version else None)
        return _diagnose(Tail(list(self._lines), timeline.progress_key), hint)
