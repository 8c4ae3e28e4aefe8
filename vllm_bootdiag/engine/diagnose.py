"""From rule hits to a Diagnosis: typed outcomes, the root cause, or unknown.

Flow: turn each hit's named groups into a typed outcome, attribute bare CUDA
OOMs to their boot phase, fill in numbers from context, and pick the root
cause: an exact match beats a tolerant one, and a boot that completed after
every failure line is booted. Echo rules (`role="echo"`: `Engine core
initialization failed. See root cause above.`) never become outcomes; an
`unknown` skips the lines they read, or ends on one when nothing else is left.
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version

from .. import outcomes, quick_build, remedy, timeline, versions
from ..diagnosis import Diagnosis
from ..outcomes import Evidence, _Outcome
from ..rules import attribution
from ..rules.ruleset import RuleSet
from ..rules.schema import Rule
from ..text import logline
from ..text.triage import Tail
from ..text.wrappers import Lazy
from .match import Hit, hits

MAX_EVIDENCE = 4
"""Evidence lines kept per outcome: the exception repeats in the logger record and
the raw traceback; a few copies say where, more add nothing."""

_VERSION_MARKERS = frozenset({"api_version", "banner_version", "engine_init"})


def _detect(tail: Tail, hint: str | None) -> tuple[versions.Detected | None, str | None]:
    """The version the log states (its last boot's), else the caller's hint; and a
    note when the two disagree: the log is the truth, a hint may be stale."""
    for i, key, message, _ts in tail.markers:
        if key in _VERSION_MARKERS:
            found = versions.detect((message,))
            if found is not None:
                logged = versions.Detected(found.version, "log", tail.number(i))
                given = versions.parse_version(hint) if hint else None
                if given is not None and given != found.version:
                    return logged, (
                        f"the log says vLLM {found.version} (line {logged.line}); "
                        f"the version given, {hint}, was not used"
                    )
                return logged, None
    if hint and versions.parse_version(hint) is not None:
        return versions.detect((), hint), None
    return None, None


def _failures(found: list[Hit]) -> list[Hit]:
    """The hits of cause rules whose outcome is a failure (echoes are not causes)."""
    failure = _FAILURE
    return [h for h in found if h.rule.role == "cause" and failure[h.rule.outcome]]


_FAILURE = {kind: cls.FAILURE for kind, cls in outcomes.OUTCOME_TYPES.items()}


def _with_out_of_range(
    tail: Tail, found: list[Hit], rules: RuleSet, version: Version
) -> tuple[list[Hit], bool]:
    """Add matches of rules outside the version's range when they outrank every match
    inside it: a table that lags a release still names the cause, and an echo
    (`See root cause above.`) in range does not hide it."""
    precedence = rules.precedence
    best = max((precedence(h.rule.id) or h.rule.precedence for h in _failures(found)), default=None)
    outside = rules.outside(version)
    if best is not None and outside.top <= best:
        return found, False
    wider = [h for h in _failures(hits(tail, outside)) if best is None or h.rule.precedence > best]
    if not wider:
        return found, False
    return sorted(found + wider, key=lambda h: h.index), True


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


def _frames_above(tail: Tail, index: int) -> str:
    """The traceback above the OOM at `index`: from its `Traceback` header when the tail
    has one, else the run of frame lines right above it (a paste that starts at the
    frames, a worker that kept the last lines)."""
    start = max(0, index - attribution.FRAME_WINDOW)
    for j in range(index, start - 1, -1):
        if "Traceback (most recent call last)" in tail.lines[j]:
            return "\n".join(tail.lines[j:index])
    j = index
    while j > start and _frame_text(tail.lines[j - 1]).startswith(attribution.FRAME_STARTS):
        j -= 1
    return "\n".join(tail.lines[j:index])


def _oom_kind(
    tail: Tail, index: int, phases: list[tuple[int, str]], fallback: str
) -> tuple[str, str | None]:
    """The OOM kind for a bare device OOM at `index`, and what it was read from.

    Traceback frames above the OOM decide first (rules/attribution.py: graph capture,
    weight loading, profiling, device init); otherwise the last boot-phase line
    before it; otherwise the rule's own kind (`device_oom`: the phase is unknown).
    """
    frames = _frames_above(tail, index)
    if frames:
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
    hit: Hit,
    evidence: list[int],
    phases: list[tuple[int, str]],
    facts: timeline.BootFacts,
) -> _Outcome:
    fields: dict[str, Any] = dict(hit.groups)
    kind = hit.rule.outcome
    if hit.rule.attribution == "cuda_oom_phase":
        kind, phase_hint = _oom_kind(tail, hit.index, phases, kind)
        fields["phase_hint"] = phase_hint
    cls = outcomes.OUTCOME_TYPES[kind]
    if cls.READS_BELOW == "pydantic_errors" and "message" not in fields:
        fields.update(_validation_details(tail, hit.index))
    for name, fact in cls.CONTEXT:
        fields.setdefault(name, getattr(facts, fact))
    allowed = outcomes.field_names(kind)
    fields = {k: v for k, v in fields.items() if k in allowed}
    ev = tuple(_evidence(tail.number(i), tail.parsed(i).message) for i in evidence[:MAX_EVIDENCE])
    return outcomes.build(kind, rule_id=hit.rule.id, evidence=ev, **fields)


# --- unknown -------------------------------------------------------------------

_EXCEPTION = outcomes.lifecycle.looks_like_error
"""What an error line looks like when no rule read it (data beside the Unknown kind)."""


def _echoes(found: list[Hit]) -> tuple[list[Hit], dict[int, Rule]]:
    """The hits of cause rules, and the lines echo rules read (line -> echo rule): an
    echo points at a cause above it and never becomes an outcome of its own."""
    causes = [h for h in found if h.rule.role == "cause"]
    if len(causes) == len(found):
        return found, {}
    echoes: dict[int, Rule] = {}
    for h in found:
        if h.rule.role != "cause":
            echoes.setdefault(h.index, h.rule)
    return causes, echoes


def _unknown(tail: Tail, echoes: dict[int, Rule]) -> tuple[outcomes.Unknown, Rule | None]:
    """The last error-looking line that is not an echo of a cause above it; when the
    tail holds only echoes, the last of them (the cause was printed above the lines
    kept), with the echo rule that read it."""
    fallback: int | None = None
    echo: int | None = None
    lines = tail.lines
    for i in range(len(tail) - 1, -1, -1):
        raw = lines[i]
        if not outcomes.lifecycle.may_look_like_error(raw):
            continue  # neither an error record nor error-looking: not worth parsing
        line = tail.parsed(i)
        msg = line.message
        if not msg:
            continue
        if i in echoes:
            if echo is None and (_EXCEPTION(msg) or line.is_error):
                echo = i
            continue
        if _EXCEPTION(msg):
            return _unknown_at(tail, i), None
        if fallback is None and line.is_error:
            fallback = i
    if fallback is not None:
        return _unknown_at(tail, fallback), None
    if echo is not None:
        return _unknown_at(tail, echo), echoes[echo]
    return quick_build.build(outcomes.Unknown, {}), None


def _unknown_at(tail: Tail, index: int) -> outcomes.Unknown:
    msg = tail.parsed(index).message
    number = tail.number(index)
    data = {
        "last_error_line": msg,
        "last_error_line_number": number,
        "evidence": (_evidence(number, msg),),
    }
    return quick_build.build(outcomes.Unknown, data)  # `outcomes.Unknown(**data)`


def _evidence(line: int, text: str) -> Evidence:
    """`Evidence(line=, text=)`, without building its validator (quick_build)."""
    return quick_build.build(Evidence, {"line": line, "text": text})


# --- root cause -----------------------------------------------------------------


def _rank(outcome: _Outcome, rules: RuleSet) -> tuple[bool, int, bool]:
    return rules.precedence(outcome.rule_id) or (True, outcome.RANK, True)


def _part_of(outcome: _Outcome) -> frozenset[str]:
    part_of: frozenset[str] = getattr(type(outcome), "PART_OF", frozenset())
    return part_of


def _merged(primary: _Outcome, found: list[_Outcome]) -> _Outcome:
    """The primary with numbers it lacks taken from other matches of its kind.

    One failure is often printed several ways: vLLM's weight-load wrapper and
    torch's OOM text, the sampler warm-up message and the OOM under it. A
    `device_oom` (no phase told) is a part of any OOM: the allocator text split
    over two lines, whose second half has no frames of its own (its class's
    `PART_OF`).
    """
    update: dict[str, Any] = {}
    evidence = list(primary.evidence)
    kind = getattr(primary, "kind", None)
    for other in found:
        other_kind = getattr(other, "kind", None)
        if other is primary or (other_kind != kind and kind not in _part_of(other)):
            continue
        for name in outcomes.field_names(getattr(primary, "kind", "unknown")):
            if getattr(primary, name) in (None, ()) and name not in update:
                value = getattr(other, name, None)
                if value not in (None, ()):
                    update[name] = value
        evidence.extend(e for e in other.evidence[:1] if e not in evidence)
    if not update:
        return primary
    update["evidence"] = tuple(evidence[:MAX_EVIDENCE])
    return primary.model_copy(update=update)


def _primary(found: list[_Outcome], rules: RuleSet) -> _Outcome:
    failures = [o for o in found if o.is_failure]
    booted = [o for o in found if not o.is_failure]
    if not failures:
        return booted[-1]
    last_failure = max((o.evidence[0].line for o in failures if o.evidence), default=0)
    if booted and booted[-1].evidence and booted[-1].evidence[0].line > last_failure:
        return booted[-1]
    top = max(_rank(o, rules) for o in failures)
    return next(o for o in failures if _rank(o, rules) == top)


_GENERIC_REMEDY = (
    "Not a known boot failure: read the line above; a plain restart may help if it was "
    "transient (counted against the relaunch budget)."
)
_SAME_AGAIN = (
    "Not a known boot failure, but a deterministic one (an import, a missing library or "
    "symbol, unimplemented code): a restart runs the same code and fails the same way; fix "
    "the install or the launch it names."
)


PROGRESS_RULES = {"api_server": ("LC005", "LC007"), "available_kv": ("KV104",)}
"""Rules that read INFO lines (timeline markers, by key): the server-start lines say
the boot is up (unless a failure follows); a KV budget of zero or less says why the
engine fails right after it (vLLM raises no-KV-memory on it). Every other rule reads
failure lines only."""


def _kv_verdict(rule: Rule) -> bool:
    return outcomes.OUTCOME_TYPES[rule.outcome].KV_VERDICT


def _with_progress(tail: Tail, found: list[Hit], rules: RuleSet) -> list[Hit]:
    """`found` plus the matches of the rules that read progress lines. The KV budget
    stands in only where no KV message of its own was matched (it may be cut off)."""
    kv_read = any(_kv_verdict(h.rule) for h in found)
    extra: list[Hit] = []
    for i, key, message, _ts in tail.markers:
        for rule_id in PROGRESS_RULES.get(key, ()):
            rule = rules.get(rule_id)
            groups = rule.match(message) if rule is not None else None
            if rule is None or groups is None or (kv_read and _kv_verdict(rule)):
                continue
            extra.append(Hit(i, rule, tuple(sorted(groups.items()))))
    return sorted(found + extra, key=lambda h: h.index) if extra else found


def diagnose(
    tail: Tail,
    hint: str | None,
    rules: RuleSet,
    repairs: tuple[str, ...] = (),
    notes: tuple[str, ...] = (),
) -> Diagnosis:
    """The Diagnosis of one boot's lines, read with `rules` (the version's subset is
    taken here); `notes` come from the stages before (boots)."""
    detected, note = _detect(tail, hint)
    version = detected.version if detected else None
    found_hits = hits(tail, rules.for_version(version))
    out_of_range = False
    if version is not None:
        found_hits, out_of_range = _with_out_of_range(tail, found_hits, rules, version)
    found_hits = _with_progress(tail, found_hits, rules.for_version(version))
    found_hits, echoes = _echoes(found_hits)
    phases = timeline.phase_lines(tail)
    facts = timeline.facts(tail)  # the Timeline's events are not kept: not built
    grouped: dict[tuple[str, tuple[tuple[str, str], ...]], list[int]] = {}
    first: dict[tuple[str, tuple[tuple[str, str], ...]], Hit] = {}
    for h in found_hits:
        key = (h.rule.id, h.groups)
        grouped.setdefault(key, []).append(h.index)
        first.setdefault(key, h)
    found = [_outcome(tail, first[k], idx, phases, facts) for k, idx in grouped.items()]
    found.sort(key=lambda o: o.evidence[0].line if o.evidence else 0)
    echo: Rule | None = None
    if found:
        primary = _merged(_primary(found, rules), found)
    else:
        primary, echo = _unknown(tail, echoes)
    rule = rules.get(primary.rule_id)
    # Every part is already a validated model: construct without validating again.
    if rule is not None:
        remediation = rule.remediation_for(getattr(primary, "kind", ""))
    elif echo is not None:
        remediation = echo.remediation
    elif primary.is_failure:
        remediation = _GENERIC_REMEDY if primary.retry_same_config_can_succeed else _SAME_AGAIN
    else:
        remediation = ""
    remediation = remedy.fit(remediation, facts)
    # `Diagnosis.model_construct(...)`, laid out at a fraction of its cost
    return quick_build.construct(
        Diagnosis,
        {
            "primary": primary,
            "matches": tuple(found),
            "vllm_version": str(version) if version else None,
            "version_source": detected.source if detected else None,
            "phase": _last_phase(phases),
            "facts": facts,
            "lines_examined": len(tail),
            "version_out_of_range": out_of_range,
            "remediation": remediation,
            "match": rule.tier if rule else None,
            "repairs": repairs,
            "notes": (*notes, note) if note else notes,
        },
    )


_PHASE_ORDER = {phase: k for k, phase in enumerate(timeline.PHASES)}


def _last_phase(phases: list[tuple[int, str]]) -> str | None:
    """The furthest boot phase reached (the Timeline's `last_phase`, without its events)."""
    return max((p for _i, p in phases), key=_PHASE_ORDER.__getitem__, default=None)
