"""`boots.find` searches import lines only from the first line that may be a failure on:
it must give what searching every line gives (the walk as it was, kept here), on every
corpus tail, its damaged copies, two logs appended and shuffled lines."""

from __future__ import annotations

import sys
import time
from bisect import bisect_right
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import boots, logtail, timeline, versions
from vllm_bootdiag.outcomes.lifecycle import ERROR_LOOKING, may_look_like_error
from vllm_bootdiag.rules.markers import _RAW_MARKERS
from vllm_bootdiag.text import damage_check
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.normalize import normalize_rows
from vllm_bootdiag.text.triage import Tail

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
TAILS = [logtail.read_tail(log) for log in LOGS]


# --- the walk as it was: every line searched for an import line --------------------------


def _last_failure(tail: Tail, start: int, end: int) -> int | None:
    other, lines = tail.other, tail.lines
    k = bisect_right(other, end - 1) - 1
    while k >= 0 and other[k] >= start:
        i = other[k]
        k -= 1
        if not may_look_like_error(lines[i]):
            continue
        line = tail.parsed(i)
        msg = line.message
        if line.is_error or ERROR_LOOKING.match(msg) or boots._ARGPARSE_ERROR.match(msg):
            return i
    return None


def _import_lines(tail: Tail) -> list[int]:
    text = "\n" + "\n".join(tail.lines)
    if len(text) > boots._WIDE_TEXT:
        text = "\n".join(["", *(line[: boots.SEARCH_WIDTH] for line in tail.lines)])
    found: set[int] = set()
    for literal in boots._IMPORT_LINES:
        pos = text.find(literal)
        while pos >= 0:
            found.add(text.count("\n", 0, pos) - 1)
            pos = text.find(literal, pos + 1)
    return sorted(found)


def reference(tail: Tail) -> tuple[int, ...]:
    phase_of = timeline.PHASE_OF
    weak = [(i, "import", "", "") for i in _import_lines(tail)]
    weak += [(i, boots._RAW_BUSY, "", "") for lit, _p, _d in _RAW_MARKERS for i in tail.find(lit)]
    events = sorted(tail.markers + weak)
    if not events:
        return (0,)
    versioned = sum(1 for e in events if e[1] in boots._VERSION_KEYS) > 1
    starts = [0]
    version = None
    pid: str | None = None
    busy: int | None = None
    for i, key, message, _ts in events:
        found = None
        if versioned and key in boots._VERSION_KEYS:
            d = versions.detect((message,))
            found = d.version if d is not None else None
        this_pid = boots._api_pid(tail.lines[i])
        new = False
        if key in boots._OPENING_KEYS:
            since = starts[-1] if busy is None else busy
            failed = _last_failure(tail, since, i) if since < i else None
            busy = failed if failed is not None else busy
            new = busy is not None if key in boots._START_KEYS else failed is not None
        other_version = found is not None and version is not None and found != version
        other_server = this_pid is not None and pid is not None and this_pid != pid
        new = new or other_version or other_server
        if new and i > starts[-1]:
            starts.append(min(i, busy + 1) if busy is not None and busy >= starts[-1] else i)
            busy = None
            version = None
            pid = None
        if found is not None:
            version = found
        if this_pid is not None:
            pid = this_pid
        if key == boots._RAW_BUSY or phase_of.get(key) not in boots._QUIET_PHASES:
            busy = i
    return tuple(starts)


# --- the new walk against it ---------------------------------------------------------------


def _tail(lines: list[str], shared: bool) -> Tail:
    joined = None
    if shared:  # as the pipeline builds it: the clean-tail check's text shared with the scan
        joined = Joined.of(lines)
        damage_check.damaged(joined)
    return Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS, joined=joined)


def _same(lines: list[str]) -> tuple[int, ...]:
    want = reference(_tail(lines, False))
    for shared in (False, True):
        assert boots.find(_tail(lines, shared), timeline.PHASE_OF).starts == want, lines
    return want


def test_every_corpus_tail_and_its_damaged_copies() -> None:
    for n, tail in enumerate(TAILS):
        assert _same(tail) == (0,)  # (a corpus log is one boot)
        for damage in damages.DAMAGES:
            lines = damage.apply(list(tail))
            _same(lines)  # as read, and (a third of them) repaired as the pipeline does
            rows, repairs = normalize_rows(lines) if n % 3 == 0 else ([], ())
            if repairs:
                _same([row[0] for row in rows])


def test_two_corpus_logs_appended() -> None:
    several = 0
    for before in TAILS[::19]:
        for tail in TAILS:
            for lines in (before + tail, before[-60:] + tail):
                several += len(_same(lines[-400:])) > 1
    assert several > 200  # (the restarts are found, so the walk past the edge is held)


def test_the_edge_is_where_the_first_line_that_may_be_a_failure_is() -> None:
    # an import line of another server before the failure: the walk must see its pid
    lines = [
        "(APIServer pid=1) INFO 01-02 03:04:05 [api_server.py:1] vLLM API server version 0.11.0",
        "(APIServer pid=1) INFO 01-02 03:04:05 [core.py:1] Capturing CUDA graphs",
        "(APIServer pid=2) WARNING 01-02 03:04:05 [__init__.py:1] Triton not installed",
        "(APIServer pid=2) INFO 01-02 03:04:05 [core.py:1] Capturing CUDA graphs",
        "(APIServer pid=2) ERROR 01-02 03:04:05 [core.py:2] RuntimeError: boom",
    ]
    assert _same(lines) == (0, 2)
    # one server's pid before the failure, then a failure and a new boot's import line
    lines[2] = lines[2].replace("pid=2", "pid=1")
    lines[3] = lines[3].replace("pid=2", "pid=1")
    assert _same([*lines, "Triton not installed"]) == (0, 5)
    # the only tag before the failure is an import line's: the walk past it needs its pid
    lines = [
        "(APIServer pid=1) WARNING 01-02 03:04:05 [__init__.py:1] Triton not installed",
        "RuntimeError: boom",
        "(APIServer pid=2) INFO 01-02 03:04:05 [gpu_model_runner.py:1] Capturing CUDA graphs",
    ]
    assert _same(lines) == (0, 2)
    assert _same(lines[1:]) == (0,)


_POOL = sorted(
    {line for tail in TAILS[::4] for line in tail[-30:]}
    | {line for tail in TAILS for line in tail if any(s in line for s in boots._IMPORT_LINES)}
    | {line for tail in TAILS[::3] for line in tail if boots._api_pid(line) is not None}
)
_PIDS = ("(APIServer pid=1) ", "(APIServer pid=2) ", "(APIServer pid=1", "")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_POOL), st.sampled_from(_PIDS)), min_size=1, max_size=40))
def test_shuffled_lines(parts: list[tuple[str, str]]) -> None:
    _same([pid + line for line, pid in parts])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TAILS), st.randoms(use_true_random=False))
def test_a_shuffled_corpus_tail(tail: list[str], rnd: object) -> None:
    lines = list(tail)
    rnd.shuffle(lines)  # type: ignore[attr-defined]
    _same(lines)


_USAGE = "usage: vllm serve [-h] [--model MODEL]"
_SERVER = "(APIServer pid=1) INFO 01-02 03:04:05 [api_server.py:1] vLLM API server version 0.11.0"
_FAILED = "(APIServer pid=1) ERROR 01-02 03:04:05 [core.py:2] RuntimeError: boom"


@pytest.mark.parametrize(
    "usage",
    [
        _USAGE,
        f"(APIServer pid=1) {_USAGE}",
        f"(APIServer pid=2) {_USAGE}",
        f"x {_USAGE}",
        f"(APIServer pid=1) ERROR 01-02 03:04:05 [a.py:1] {_USAGE}",
        "usage: vllm",
        "usage: vllmusage: vllm",
        "usage:  vllm",
        f"\x1b[0;36m(APIServer pid=1)\x1b[0;0m {_USAGE}",
    ],
)
def test_argparse_usage_lines_the_check_found_read_as_searched(usage: str) -> None:
    """argparse's `usage: vllm` is searched for only where the clean-tail check counted a
    `usage: ` (`Tail.usages`): the same boots, wherever the line is."""
    for lines in (
        [_SERVER, _FAILED, usage, _SERVER],
        [_SERVER, usage, _FAILED, usage, "vllm serve: error: argument --dtype: bad"],
        [usage, _FAILED, _SERVER],
        [_FAILED, _SERVER, usage],
    ):
        _same(lines)
        shared = _tail(lines, True)
        if usage in (_USAGE, f"(APIServer pid=1) {_USAGE}"):
            assert shared.usages  # (the rows answered: the hand-off is read)


def test_the_usages_the_check_counts_are_every_one_in_the_text() -> None:
    for tail in TAILS:
        tail = [*tail[:50], _USAGE, *tail[50:], f"(APIServer pid=9) {_USAGE}"]
        joined = Joined.of(tail)
        damage_check.damaged(joined)
        if joined.usages is not None:
            assert joined.usages == joined.doc.count("usage: ") > 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                _USAGE,
                "Triton not installed",
                _FAILED,
                "RuntimeError: boom",
                _SERVER,
                "(APIServer pid=2) INFO 01-02 03:04:05 [core.py:1] Capturing CUDA graphs",
                "(APIServer pid=1) INFO 01-02 03:04:05 [platforms.py:1] Automatically detected platform cuda.",
                "x = 1",
            ]
        ),
        min_size=1,
        max_size=60,
    )
)
def test_failures_asked_again_up_to_a_later_line_read_as_asked_once(lines: list[str]) -> None:
    """The walk asks for the last failure since the same line up to later and later lines
    (each import line); the lines read for one answer are not read again: the same boots."""
    _same(lines)


def test_many_import_lines_after_a_failure_are_walked_once() -> None:
    lines = ["RuntimeError: boom", *([f"{_USAGE} {'[-h] ' * 3000}"] * 399)]
    tail = _tail(lines, True)
    t0 = time.perf_counter()
    found = boots.find(tail, timeline.PHASE_OF)
    took = time.perf_counter() - t0
    assert found.starts == reference(_tail(lines, False))
    if sys.gettrace() is None and sys.getprofile() is None:  # (a tracer slows every line)
        assert took < 0.1, took  # (each import line read every line before it: 0.2 s)
