"""From rule hits to a Diagnosis: typed outcomes, the root cause, or unknown.

Flow: turn each hit's named groups into a typed outcome, attribute bare CUDA
OOMs to their boot phase, fill in numbers from context, and pick the root
cause: an exact match beats a tolerant one, and a boot that completed after
every failure line is booted. Echo rules (`role="echo"`: `Engine core
initialization failed. See root cause above.`) never become outcomes; an
`unknown` skips the lines they read, or ends on one when nothing else is left.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from packaging.version import Version

from .. import outcomes, quick_build, remedy, timeline, versions
from ..diagnosis import Diagnosis
from ..outcomes import _Outcome
from ..rules.ruleset import RuleSet
from ..rules.schema import Rule
from ..text import logline
from ..text.triage import Tail
from .match import (
    Groups,
    Hit,
    Precedence,
    echoes_apart,
    groups_of,
    hit_index,
    outranking,
    scan,
    tokens_of,
)
from .outcome_fields import MAX_EVIDENCE as MAX_EVIDENCE
from .outcome_fields import evidence, line_message, outcome

_VERSION_MARKERS = frozenset({"api_version", "banner_version", "engine_init"})


def _detect(tail: Tail, hint: str | None) -> tuple[versions.Detected | None, str | None]:
    """The version the log states (its last boot's), else the caller's hint; and a
    note when the two disagree: the log is the truth, a hint may be stale."""
    for i, key, message, _ts in tail.markers:
        if key in _VERSION_MARKERS:
            found = tail.stated_version(i, message)  # `versions.detect((message,))`, once
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


def _with_out_of_range(
    tail: Tail,
    found: list[Hit],
    best: Precedence | None,
    rules: RuleSet,
    version: Version,
    tokens: Collection[str],
) -> tuple[list[Hit], bool]:
    """Add matches of rules outside the version's range when they outrank every match
    inside it (`best`: the highest precedence of a failure cause among `found`): a table
    that lags a release still names the cause, and an echo (`See root cause above.`) in
    range does not hide it."""
    outside = rules.outside(version)
    top = outside.cause_top  # what `outranking` can keep: a failure cause above `best`
    if top is None or (best is not None and top <= best):
        return found, False
    wider = outranking(tail, outside, best, tokens)
    if not wider:
        return found, False
    return sorted(found + wider, key=hit_index), True


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
    # Where the check made each line without its codes, that text is tested: the message
    # `head` reads is part of it, so where it holds no error word neither does the message
    # (a 16 KB line of colour codes is not stripped a second time to find that out).
    tested = tail.plain_lines or lines
    may_look_like_error = outcomes.lifecycle.may_look_like_error
    for i in range(len(tail) - 1, -1, -1):
        if not may_look_like_error(tested[i]):
            continue  # neither an error record nor error-looking: not worth parsing
        raw = lines[i]
        head = logline.head(raw)  # what `tail.parsed(i)` reads, without its LogLine
        msg = head.text[head.start :].strip()
        if not msg:
            continue
        is_error = head.level in _ERROR_LEVELS
        if i in echoes:
            if echo is None and (_EXCEPTION(msg) or is_error):
                echo = i
            continue
        if _EXCEPTION(msg):
            return _unknown_at(tail, i, msg), None
        if fallback is None and is_error:
            fallback = i
    if fallback is not None:
        return _unknown_at(tail, fallback), None
    if echo is not None:
        return _unknown_at(tail, echo), echoes[echo]
    return quick_build.build(outcomes.Unknown, {}), None


_ERROR_LEVELS = ("ERROR", "CRITICAL")
"""`LogLine.is_error`'s levels."""


def _unknown_at(tail: Tail, index: int, msg: str | None = None) -> outcomes.Unknown:
    """The unknown whose error line is the tail's line `index` (`msg`: its message, where
    the caller read it as `line_message` does: `logline.head`'s text from its start)."""
    if msg is None:
        msg = line_message(tail, index)
    number = tail.number(index)
    data = {
        "last_error_line": msg,
        "last_error_line_number": number,
        "evidence": (evidence(number, msg),),
    }
    return quick_build.build(outcomes.Unknown, data)  # `outcomes.Unknown(**data)`


# --- root cause -----------------------------------------------------------------


def _rank(outcome: _Outcome, rules: RuleSet) -> tuple[bool, int, bool]:
    return rules.precedence(outcome.rule_id) or (True, outcome.RANK, True)


def _part_of(outcome: _Outcome) -> frozenset[str]:
    return type(outcome).PART_OF


def _merged(primary: _Outcome, found: list[_Outcome]) -> _Outcome:
    """The primary with numbers it lacks taken from other matches of its kind.

    One failure is often printed several ways: vLLM's weight-load wrapper and
    torch's OOM text, the sampler warm-up message and the OOM under it. A
    `device_oom` (no phase told) is a part of any OOM: the allocator text split
    over two lines, whose second half has no frames of its own (its class's
    `PART_OF`).
    """
    update: dict[str, Any] = {}
    kind = getattr(primary, "kind", None)
    names = outcomes.field_names(getattr(primary, "kind", "unknown"))
    parts: list[_Outcome] = []
    for other in found:
        other_kind = getattr(other, "kind", None)
        if other is primary or (other_kind != kind and kind not in _part_of(other)):
            continue
        parts.append(other)
        for name in names:
            if getattr(primary, name) in (None, ()) and name not in update:
                value = getattr(other, name, None)
                if value not in (None, ()):
                    update[name] = value
    if not update:
        return primary  # (the evidence below is kept only with an update)
    evidence = list(primary.evidence)
    for other in parts:
        evidence.extend(e for e in other.evidence[:1] if e not in evidence)
    update["evidence"] = tuple(evidence[:MAX_EVIDENCE])
    return primary.model_copy(update=update)


def _primary(found: list[_Outcome], rules: RuleSet) -> _Outcome:
    failures: list[_Outcome] = []
    booted: list[_Outcome] = []
    for o in found:
        (failures if o.is_failure else booted).append(o)
    if not failures:
        return booted[-1]
    if booted and booted[-1].evidence:
        last_failure = max((o.evidence[0].line for o in failures if o.evidence), default=0)
        if booted[-1].evidence[0].line > last_failure:
            return booted[-1]
    if len(failures) == 1:
        return failures[0]
    ranks = [_rank(o, rules) for o in failures]
    return failures[ranks.index(max(ranks))]  # the first of the highest rank


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
    kv_read: bool | None = None
    extra: list[Hit] = []
    for i, key, message, _ts in tail.markers:
        if key not in PROGRESS_RULES:
            continue
        for rule_id in PROGRESS_RULES[key]:
            rule = rules.get(rule_id)
            if rule is None:
                continue
            if _kv_verdict(rule):
                if kv_read is None:
                    kv_read = any(_kv_verdict(h.rule) for h in found)
                if kv_read:
                    continue
            groups = groups_of(rule, message)  # `rule.match(message)`, sorted
            if groups is not None:
                extra.append(Hit(i, rule, groups))
    return sorted(found + extra, key=hit_index) if extra else found


def _first_line(outcome: _Outcome) -> int:
    return outcome.evidence[0].line if outcome.evidence else 0


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
    tokens = tokens_of(tail)
    in_range = rules.for_version(version)
    # the echo rules are read only where no cause is found (an `unknown` skips their lines)
    apart = echoes_apart(in_range)
    found_hits, best = scan(tail, in_range, tokens, "causes" if apart else "all")
    out_of_range = False
    if version is not None:
        found_hits, out_of_range = _with_out_of_range(
            tail, found_hits, best, rules, version, tokens
        )
    found_hits = _with_progress(tail, found_hits, in_range)
    echoes: dict[int, Rule] = {}
    if not apart:  # (where they stand apart, every hit is a cause's)
        found_hits, echoes = _echoes(found_hits)
    phases = timeline.phase_lines(tail)
    facts = timeline.facts(tail)  # the Timeline's events are not kept: not built
    # one outcome per rule and groups: its first hit, cited by every line it was read on
    grouped: dict[tuple[str, Groups], tuple[Hit, list[int]]] = {}
    for h in found_hits:
        key = (h.rule.id, h.groups)
        same = grouped.get(key)
        if same is None:
            grouped[key] = (h, [h.index])
        else:
            same[1].append(h.index)
    found = [outcome(tail, h, idx, phases, facts) for h, idx in grouped.values()]
    if len(found) > 1:
        found.sort(key=_first_line)
    echo: Rule | None = None
    if len(found) == 1:
        primary = found[0]  # what `_merged(_primary(found, rules), found)` gives for one
    elif found:
        primary = _merged(_primary(found, rules), found)
    else:
        if apart:  # no cause at all: the echoes, as a scan of every rule reads them
            echoes = _echoes(scan(tail, in_range, tokens, "echoes")[0])[1]
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
    return _diagnosis(
        {
            "primary": primary,
            "matches": tuple(found),
            "vllm_version": _version_text(version) if version else None,
            "version_source": detected.source if detected else None,
            "phase": _last_phase(phases),
            "facts": facts,
            "lines_examined": len(tail),
            "version_out_of_range": out_of_range,
            "remediation": remediation,
            "match": rule.tier if rule else None,
            "repairs": repairs,
            "notes": (*notes, note) if note else notes,
        }
    )


_diagnosis = quick_build.layout(
    Diagnosis,
    (
        "primary",
        "matches",
        "vllm_version",
        "version_source",
        "phase",
        "facts",
        "lines_examined",
        "version_out_of_range",
        "remediation",
        "match",
        "repairs",
        "notes",
    ),
)
"""`quick_build.construct(Diagnosis, ...)` for the keys `diagnose` gives, checked once."""


def _version_text(version: Version) -> str:
    """`str(version)`, kept per Version object (`versions.parse_version` gives one per
    text; two equal Versions may read differently, `0.32` and `0.32.0`, so equality is no
    key): a log names one of a few releases, and `Version` builds its text each time."""
    got = _TEXTS.get(id(version))
    if got is None or got[0] is not version:
        if len(_TEXTS) >= 256:
            _TEXTS.clear()
        got = _TEXTS[id(version)] = (version, str(version))
    return got[1]


_TEXTS: dict[int, tuple[Version, str]] = {}


_PHASE_ORDER = {phase: k for k, phase in enumerate(timeline.PHASES)}


def _last_phase(phases: list[tuple[int, str]]) -> str | None:
    """The furthest boot phase reached (the Timeline's `last_phase`, without its events)."""
    if not phases:
        return None
    # `max(phases' names, key=_PHASE_ORDER.__getitem__)`: the name at the highest order
    return timeline.PHASES[max([_PHASE_ORDER[p] for _i, p in phases])]
