"""The diagnosis's shortcuts give what the long way gives.

diagnose reads the last boot phase without building the timeline's events, an evidence
line's message without parsing its tag and source, a plain `3.0` GiB without the size
pattern. Each is checked against the long way on every line of every corpus log, and on
generated values.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import timeline
from vllm_bootdiag.engine import outcome_fields
from vllm_bootdiag.outcomes import base
from vllm_bootdiag.rules.ruleset import default_rules
from vllm_bootdiag.text import logline
from vllm_bootdiag.text.triage import Tail

diagnose_module = importlib.import_module("vllm_bootdiag.engine.diagnose")
CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _tail(lines: list[str]) -> Tail:
    return Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)


def _lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]


def test_the_corpus_is_there() -> None:
    assert len(LOGS) > 200


def test_an_evidence_message_is_the_parsed_lines_message() -> None:
    seen = 0
    for log in LOGS:
        tail = _tail(_lines(log))
        for i in range(len(tail)):
            assert outcome_fields.line_message(tail, i) == tail.parsed(i).message, (log, i)
            head = logline.head(tail.lines[i])  # what `_unknown` reads, and hands on
            assert head.text[head.start :].strip() == tail.parsed(i).message, (log, i)
            is_error = head.level in diagnose_module._ERROR_LEVELS
            assert is_error == tail.parsed(i).is_error, (log, i)
            seen += 1
    assert seen > 20_000


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=40),
            st.sampled_from(
                [
                    "(EngineCore_DP0 pid=12) ERROR 11-29 16:51:14 [core.py:1] ValueError: x  ",
                    "\x1b[1;36m(EngineCore pid=3)\x1b[0m INFO 01-02 03:04:05 [a.py:9] up\r",
                    "2025-01-02T03:04:05.123Z stdout F WARNING 01-02 03:04:05 [b.py:2] w",
                    '  File "x.py", line 3, in <module>',
                ]
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_an_evidence_message_is_the_parsed_one_on_any_line(lines: list[str]) -> None:
    tail = _tail(lines)
    for i in range(len(tail)):
        assert outcome_fields.line_message(tail, i) == tail.parsed(i).message
        head = logline.head(tail.lines[i])
        assert head.text[head.start :].strip() == tail.parsed(i).message
        is_error = head.level in diagnose_module._ERROR_LEVELS
        assert is_error == tail.parsed(i).is_error


def test_the_last_phase_is_the_timelines() -> None:
    for log in LOGS:
        tail = _tail(_lines(log))
        phases = timeline.phase_lines(tail)
        built = timeline.build_from_tail(tail, phases)
        assert diagnose_module._last_phase(phases) == built.last_phase, log
        d = diagnose_module.diagnose(_tail(_lines(log)), None, default_rules())
        assert d.phase == built.last_phase and d.facts == built.facts, log


_RAW_PHASES = {phase for _literal, phase, _device in timeline._RAW_MARKERS}


def _phase_lines_long_way(tail: Tail) -> list[tuple[int, str]]:
    """`timeline.phase_lines` as it was written: every raw marker's lines, then a sort."""
    hits = [(i, p) for i, key, _, _ in tail.markers if (p := timeline.PHASE_OF[key]) is not None]
    for literal, phase, _device in timeline._RAW_MARKERS:
        hits.extend((i, phase) for i in tail.find(literal))
    hits.sort()
    return hits


def test_the_phase_lines_are_the_long_ways() -> None:
    """`phase_lines` sorts only where a raw marker added lines (the markers alone come in
    line order, one a line): the same list on every corpus tail and its damaged copies."""
    sys.path.insert(0, str(CORPUS.parent / "tests" / "damage"))
    import damages

    raw = 0
    for log in LOGS:
        lines = _lines(log)
        for variant in (lines, *(d.apply(lines) for d in damages.DAMAGES[::3])):
            fast = timeline.phase_lines(_tail(variant))
            assert fast == _phase_lines_long_way(_tail(variant)), log
            raw += any(p in _RAW_PHASES for _i, p in fast)
    assert raw > 50


def _slow_gib(value: str) -> object:
    """`_to_gib` without its shortcut: the size pattern for every string."""
    m = base._SIZE.match(value)
    if m:
        unit = m[2].lower() or "gib"
        if unit in base._UNITS:
            return round(float(m[1]) * base._UNITS[unit], 6)
    return value


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        st.from_regex(r"[0-9.]{1,24}", fullmatch=True),
        st.from_regex(r"-?[0-9]{0,6}(\.[0-9]{0,8})? ?(GiB|MiB|B)?", fullmatch=True),
        st.text(alphabet="0123456789.٣²", max_size=8),
    )
)
def test_a_plain_gib_number_is_what_the_size_pattern_reads(value: str) -> None:
    fast, slow = base._to_gib(value), _slow_gib(value)
    assert type(fast) is type(slow) and fast == slow


_EDGES = [
    "0", "0.0", "7", "3.0", "0.5", "0.000001", "0.0000005", "0.1234565", "0.999999",
    "0.9999995", "8589934591.999999", "8589934592.000001", "8589934592.5", "17179869183.999999",
    "9007199254740993", "9007199254740993.000001", "123456789012345678901234567890.123456",
    "9" * 400, "9" * 400 + ".5", "1" + "0" * 308 + ".000001", "4503599627370495.5",
]  # fmt: skip


@settings(max_examples=1000, deadline=None)
@given(
    st.one_of(
        st.sampled_from(_EDGES),
        st.from_regex(r"[0-9]{1,20}(\.[0-9]{1,7})?", fullmatch=True),
        st.floats(min_value=0, allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.{6}f}"),
        st.integers(min_value=0, max_value=2**70).map(lambda n: f"{n / 10**6:.6f}"),
        st.integers(min_value=0, max_value=2**70).map(lambda n: f"{n // 10**6}.{n % 10**6:06d}"),
    )
)
def test_six_decimals_or_fewer_are_the_rounded_float(value: str) -> None:
    """`_to_gib` leaves `round(..., 6)` out for a plain number of six decimals or fewer:
    the float is what rounding it gives, at every magnitude (both sides of 2**33, where
    the float's step passes a millionth, and past 2**53 and 1e308)."""
    fast, slow = base._to_gib(value), _slow_gib(value)
    assert type(fast) is type(slow) is float
    assert fast == slow or (fast != fast and slow != slow)


def test_the_out_of_range_pass_keeps_what_the_full_pass_keeps() -> None:
    """`outranking` runs no pattern where no rule the tail's words allow could outrank
    the best in-range cause; what it keeps is what a full pass over the same rules keeps."""
    from vllm_bootdiag import versions
    from vllm_bootdiag.engine import match

    rules = default_rules()
    bests = [None, *sorted({r.precedence for r in rules})]
    releases = sorted({log.parent.name for log in LOGS})
    kept = 0
    for log in LOGS:
        for release in releases:
            version = versions.parse_version(release)
            assert version is not None
            outside = rules.outside(version)
            tail = _tail(_lines(log))
            every = match.hits(tail, outside)
            for best in bests:
                want = [
                    h
                    for h in every
                    if h.rule.role == "cause"
                    and match.FAILURE[h.rule.outcome]
                    and (best is None or h.rule.precedence > best)
                ]
                assert match.outranking(tail, outside, best) == want, (log, release, best)
                kept += len(want)
    assert kept > 1000


def test_no_out_of_range_pass_where_no_failure_cause_outranks() -> None:
    """`_with_out_of_range` skips the pass where `cause_top`, the highest precedence of a
    failure cause outside the range, is not above the best cause found (or there is none):
    then no rule there is one `outranking` keeps. Every release, every precedence."""
    from vllm_bootdiag import versions
    from vllm_bootdiag.engine import match
    from vllm_bootdiag.rules.ruleset import RuleSet

    rules = default_rules()
    bests = [None, *sorted({r.precedence for r in rules})]
    skipped = 0
    for release in sorted({log.parent.name for log in LOGS}):
        version = versions.parse_version(release)
        assert version is not None
        outside = rules.outside(version)
        for best in bests:
            top = outside.cause_top
            if top is None or (best is not None and top <= best):
                assert not any(match._above(r, best) for r in outside), (release, best)
                skipped += 1
            else:
                assert any(match._above(r, best) for r in outside), (release, best)
    assert skipped > 10
    assert RuleSet(r for r in rules if r.role != "cause").cause_top is None


def test_a_versions_text_is_its_own_not_an_equal_ones() -> None:
    """`_version_text` keeps `str(version)` per Version object: `0.32` and `0.32.0` are
    equal Versions with their own texts, and a Version made again reads as itself."""
    from packaging.version import Version

    short, full = Version("0.32"), Version("0.32.0")
    assert short == full
    for _ in range(2):
        assert diagnose_module._version_text(short) == "0.32"
        assert diagnose_module._version_text(full) == "0.32.0"
    for text in ("0.9.0.1", "0.33.0rc1", "1.0.post2", "0.8.5"):
        assert diagnose_module._version_text(Version(text)) == str(Version(text))
