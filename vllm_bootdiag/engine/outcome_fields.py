"""What a hit's outcome reads beyond its own line, and the evidence it cites.

A bare CUDA OOM takes its kind from the traceback frames above it or the last boot
phase before it (rules/attribution.py); a pydantic validation error takes its field
and message from the lines under it; a kind's `CONTEXT` fields come from the boot's
facts. Evidence cites each line's number in the original input.
"""

from __future__ import annotations

import re
from typing import Any

from .. import outcomes, quick_build, timeline
from ..outcomes import Evidence, _Outcome
from ..rules import attribution
from ..text import logline
from ..text.triage import Tail
from ..text.wrappers import Lazy
from .match import Hit

MAX_EVIDENCE = 4
"""Evidence lines kept per outcome: the exception repeats in the logger record and
the raw traceback; a few copies say where, more add nothing."""


# --- CUDA OOM attribution -----------------------------------------------------


def _frame_text(line: str) -> str:
    """A line less ANSI codes, a runtime prefix, its process tag and its record prefix
    (the engine core logs its traceback as ERROR records), indentation kept."""
    text = logline.strip_wrapping(line)
    record = logline.RECORD.match(text)
    if record is not None:
        return text[record.end() :]
    end = logline.tag_end(text)
    return text[end:] if end else text


_HEADER = "Traceback (most recent call last)"
_HEADER_RE = re.compile(re.escape(_HEADER))
_LONG = 1024


def _frames_above(tail: Tail, index: int) -> str:
    """The traceback above the OOM at `index`: from its `Traceback` header when the tail
    has one, else the run of frame lines right above it (a paste that starts at the
    frames, a worker that kept the last lines), joined (see `_joined`)."""
    start = max(0, index - attribution.FRAME_WINDOW)
    lines = tail.lines
    window = lines[start : index + 1]
    if sum(map(len, window)) <= _WINDOW_JOINED:
        # the window joined, its last header found in C: the header holds no newline, so
        # it lies on one line, the last that holds it (what the loop below finds)
        text = "\n".join(window)
        at = text.rfind(_HEADER)
        if at >= 0:
            begin = text.rfind("\n", 0, at) + 1
            end = len(text) - len(lines[index]) - 1  # the newline before line `index`
            return text[begin:end] if end > begin else ""
        headed = None
    else:
        headed = _headed(lines, start, index)
    if headed is not None:
        return _joined(lines[headed:index])
    j = index
    while j > start and _frame_text(tail.lines[j - 1]).startswith(attribution.FRAME_STARTS):
        j -= 1
    return _joined(tail.lines[j:index])


_WINDOW_JOINED = 1 << 15
"""A window of lines up to this long is joined to find its header (a search per line
costs a call each; past it, each distinct line is searched once: see `_headed`)."""


def _headed(lines: list[str], start: int, index: int) -> int | None:
    """The last line from `start` to `index` that holds the `Traceback` header, each
    distinct long line searched once (None: none holds it)."""
    headed: dict[str, bool] = {}  # each distinct long line looked at once
    for j in range(index, start - 1, -1):
        line = lines[j]
        if len(line) < _LONG:
            if _HEADER in line:
                return j
            continue
        has = headed.get(line)
        if has is None:
            # past 1 KB, `re`'s literal search (CPython's crawls through a run of the
            # header's own letters: 40 us a 16 KB line of `a`)
            has = headed[line] = _HEADER_RE.search(line) is not None
        if has:
            return j
    return None


_DISTINCT_PAST = 1 << 16
"""Frame text longer than this is joined one distinct line each (see `_joined`)."""


def _joined(rows: list[str]) -> str:
    """`rows` joined by newlines, for the frame names to be looked for in: no name holds a
    newline, so a repeated line adds nothing but search, and past `_DISTINCT_PAST` each
    distinct line is kept once (120 copies of a 16 KB row: 2 MB for each of 20 names,
    26 ms). Shorter text is joined as it is: the names are found in it all the same, and
    a traceback's lines are distinct (hashing each to find that out costs more than the
    searches it could save)."""
    if sum(map(len, rows)) <= _DISTINCT_PAST:
        return "\n".join(rows)
    return "\n".join(dict.fromkeys(rows))


def _oom_kind(
    tail: Tail, index: int, phases: list[tuple[int, str]], fallback: str
) -> tuple[str, str | None]:
    """The OOM kind for a bare device OOM at `index`, and what it was read from.

    Traceback frames above the OOM decide first (rules/attribution.py: graph capture,
    weight loading, profiling, device init); otherwise the last boot-phase line
    before it; otherwise the rule's own kind (`device_oom`: the phase is unknown).
    """
    frames = _frames_above(tail, index)
    if frames:  # (empty where the window is: its lines' names decide alike either way)
        for kind, names, hint in attribution.FRAME_GROUPS:
            if any(f in frames for f in names):
                return kind, hint
    before = [p for i, p in phases if i < index]
    if before:
        phase = before[-1]
        return attribution._PHASE_TO_OOM.get(phase, fallback), f"last phase: {phase}"
    return fallback, None


# --- enrichment ---------------------------------------------------------------

_VALUE_ERROR = ("Value error, ", "Assertion failed, ")
_FIELD = Lazy(r"[A-Za-z_][\w.]*")
_INPUT_VALUE = Lazy(r", input_value=(.*), input_type=\w+\]$")


def _pydantic_line(text: str) -> tuple[str, str | None] | None:
    """(message, input value) of a pydantic error line `<msg> [type=..., input_value=...]`.

    String operations, not a lazy regex: the message can be a 10 KB list of supported
    architectures, where backtracking costs milliseconds.
    """
    cut = text.rfind(" [type=")
    if cut < 0:
        return None
    return text[:cut].strip(), input_value(text, cut)


_VALUE_AT, _TYPE_AT = ", input_value=", ", input_type="
_WORDS = Lazy(r"\w+")


def input_value(text: str, start: int) -> str | None:
    r"""`_INPUT_VALUE.search(text, start)`'s group, found by string operations: the search
    tries every `, input_value=` after `start`, and each one's `(.*)` runs to the end and
    back (a 16 KB line of them: 15-40 ms). The pattern's tail `, input_type=\w+\]$` can
    only be the last `, input_type=` (a word has no comma), ending the text or its final
    newline; the group is the text from the first `, input_value=` after `start` whose
    group holds no newline and fits before it. tests/test_diagnose_fast_paths.py holds it
    to the pattern."""
    end = len(text) - 1 if text[-1:] == "\n" else len(text)
    if text[end - 1 : end] != "]":
        return None
    q = text.rfind(_TYPE_AT, start)
    if q < 0 or _WORDS.fullmatch(text, q + len(_TYPE_AT), end - 1) is None:
        return None
    at = max(start, text.rfind("\n", 0, q) + 1)  # (`.` stops at a newline)
    p = text.find(_VALUE_AT, at)
    if p < 0 or p + len(_VALUE_AT) > q:
        return None
    return text[p + len(_VALUE_AT) : q]


def _validation_details(tail: Tail, index: int) -> dict[str, str]:
    """The field and message pydantic prints under `N validation error for X`.

    A field error reads `<field>` then `  Input should be ... [type=..., input_value=...]`;
    a model-level error reads `  Value error, <vLLM's own message> [type=value_error, ...]`.
    """
    out: dict[str, str] = {}
    for j in range(index + 1, min(index + 6, len(tail))):
        text = line_message(tail, j)
        if text.startswith(_VALUE_ERROR):
            # `_pydantic_line(text)[0]`, without the input value it reads and this drops
            cut = text.rfind(" [type=")
            body = text[:cut].strip() if cut >= 0 else text
            message, comma, _ = body.partition(", ")[::-1]
            if comma:  # (a ` [type=` right after `Value error,` leaves no message)
                out["message"] = message
            return out
        if "argument" not in out and _FIELD.fullmatch(text):
            out["argument"] = text
            continue
        parsed = _pydantic_line(text)
        if parsed is not None:
            out["message"] = parsed[0] + (f" (got {parsed[1]})" if parsed[1] else "")
            return out
    return out


def outcome(
    tail: Tail,
    hit: Hit,
    lines: list[int],
    phases: list[tuple[int, str]],
    facts: timeline.BootFacts,
) -> _Outcome:
    """The typed outcome of `hit`, cited by the tail's `lines` (indices) it was read on:
    its named groups converted, the OOM's phase, pydantic's details, the boot's facts."""
    rule = hit.rule
    fields: dict[str, Any] = dict(hit.groups)
    kind = rule.outcome
    if rule.attribution == "cuda_oom_phase":
        kind, phase_hint = _oom_kind(tail, hit.index, phases, kind)
        fields["phase_hint"] = phase_hint
    cls, reads_below, context, allowed = _KINDS.get(kind) or _kind(kind)
    if reads_below and "message" not in fields:
        fields.update(_validation_details(tail, hit.index))
    for name, fact in context:
        fields.setdefault(name, getattr(facts, fact))
    if not allowed.issuperset(fields):
        fields = {k: v for k, v in fields.items() if k in allowed}
    number = tail.number
    shown = lines[:MAX_EVIDENCE]
    validate = _validator(Evidence)  # what `evidence` calls, once warm: called as is
    if validate is not None:
        ev = tuple([validate({"line": number(i), "text": line_message(tail, i)}) for i in shown])
    else:
        ev = tuple([evidence(number(i), line_message(tail, i)) for i in shown])
    fields["kind"] = kind  # (no field of the rule's is one of these three: see `allowed`)
    fields["rule_id"] = rule.id
    fields["evidence"] = ev
    # `outcomes.build(kind, rule_id=, evidence=, **fields)`, its model already at hand
    build = _validator(cls)
    return build(fields) if build is not None else quick_build.build(cls, fields)


_Kind = tuple[type[_Outcome], bool, tuple[tuple[str, str], ...], frozenset[str]]
_KINDS: dict[str, _Kind] = {}


def _kind(kind: str) -> _Kind:
    """What `outcome` reads of a kind, kept (its class, whether it reads pydantic's lines
    below, its `CONTEXT`, its field names): an attribute lookup each costs more."""
    cls = outcomes.OUTCOME_TYPES[kind]
    got = _KINDS[kind] = (
        cls,
        cls.READS_BELOW == "pydantic_errors",
        cls.CONTEXT,
        outcomes.field_names(kind),
    )
    return got


_validator = quick_build._WARM.get
"""`quick_build.validator`, without its call."""


def line_message(tail: Tail, index: int) -> str:
    """`tail.parsed(index).message`: the line's message, read without the process tag and
    the LogLine that parsing builds (an evidence line needs neither)."""
    text = logline.strip_wrapping(tail.lines[index])  # `logline.head`, without its tuple
    # `logline.split(text)[1]`, the message start, without the rest of its answer
    rec = _RECORD_MATCH(text) if "]" in text else None
    return text[rec.end() if rec is not None else logline.tag_end(text) :].strip()


_RECORD_MATCH = logline.RECORD.match


def evidence(line: int, text: str) -> Evidence:
    """`Evidence(line=, text=)`, without building its validator (quick_build)."""
    return quick_build.build(Evidence, {"line": line, "text": text})
