"""BootWatcher.feed sorts a line in one match (`watcher._SORT`) where `triage.sort_line`
costs a call and two or three: the two must agree on every line, or a watch would report
a line classify does not read (or miss one it does)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import BootWatcher, corpus, logtail
from vllm_bootdiag.engine import watcher
from vllm_bootdiag.rules import RULES
from vllm_bootdiag.text import logline, triage

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
ENTRIES = corpus.entries(CORPUS)


def _fast(line: str) -> tuple[str, str] | None:
    """(kind, message) as feed reads a line it sorts itself (kind and, for a progress
    line, the text from its message start, as feed's branches read them); None for the
    lines it hands to sort_line (a runtime's prefix, a tag the pattern does not read)."""
    text = logline.strip_codes(line) if "\x1b" in line else line
    m = watcher._SORT_MATCH(text)
    if m is None:
        return None if text[:1] == "(" or text[:1].isdigit() else (triage.CANDIDATE, "")
    if m.lastindex == watcher._PROGRESS_GROUP:
        return triage.PROGRESS, text[m.end() :]
    if m.lastindex == watcher._ERROR_GROUP and not text.startswith(triage.FRAME_STARTS, m.end()):
        return triage.CANDIDATE, ""
    tagged = m.lastindex == watcher._FRAME_GROUP and m.start(1) >= 0
    if tagged and watcher._PROCESS_TAG(text, 0, m.end(1) + 1) is None:
        return triage.CANDIDATE, ""
    return triage.SKIP, ""


def _slow(line: str) -> tuple[str, str]:
    kind, text, start, _ = triage.sort_line(line)
    return kind, text[start:] if kind == triage.PROGRESS else ""


def _agree(line: str) -> None:
    fast = _fast(line)
    if fast is not None:
        assert fast == _slow(line), repr(line)


def test_every_corpus_line_sorts_as_sort_line_sorts_it() -> None:
    kinds = set()
    for entry in ENTRIES:
        for line in logtail.read(entry.log_path, logtail.MAX_LINES).lines:
            if "\n" not in line and "\r" not in line:
                _agree(line)
                kinds.add(_slow(line)[0])
    assert kinds == {triage.PROGRESS, triage.SKIP, triage.CANDIDATE}


_PIECES = st.sampled_from(
    [
        "(APIServer pid=1) ", "(EngineCore_DP0 pid=12)", "(Worker_TP1 pid=7, ip=10.0.0.1) ",
        "(x) ", "(", ")", " ", "    ", "  File ", "File ", "INFO ", "DEBUG ", "WARNING ",
        "WARN ", "ERROR ", "CRITICAL ", "INFO", "11-29 16:19:50 ", "11-29 16:19:50.123 ",
        "01-02 03:04:05,9 ", "[api_server.py:1] ", "[core.py:12]", "[", "]", "[x] ",
        "[rank0]:", "W1129 16:51:14.768 ", "[W1129 16:00:21 ", "pid=", "2026-01-02T03:04:05Z ",
        "\x1b[0;36m", "\x1b[0m", "Starting vLLM API server", "Traceback", "x", "9", "\t",
    ]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_lines_built_from_a_records_pieces_sort_alike(line: str) -> None:
    _agree(line)


@pytest.mark.parametrize(
    "line",
    [
        "(tag pid=1)    x",  # the tag's space taken: three left, not a frame
        "(tag pid=1)     x",
        "(tag pid=1)  File x",
        "(tag pid=1) [rank0]:W1129 16:51:14 x",
        '(tag) ERROR 11-29 16:19:50 [a.py:1]   File "x"',
        "(tag) ERROR 11-29 16:19:50 [a.py:1]     x",
        "ERROR 11-29 16:19:50 [a.py:1] x",
        "\x1b[1;36m(tag pid=1)\x1b[0;0m INFO 11-29 16:19:50 [a.py:1] Starting vLLM API server",
        "2026-01-02T03:04:05Z INFO 11-29 16:19:50 [a.py:1] x",
        "WARN 11-29 16:19:50 [a.py:1] x",
        "[W1129 16:00:21 x",
        "(tag)     x",  # a frame's indent after a tag that is no process tag: raw
        "(tag)  File x",
        "(tag) [W1129 16:00:21 x",
        "(tag pid=1)INFO 11-29 16:19:50 [a.py:1] x",
        "(tag pid=1)  INFO 11-29 16:19:50 [a.py:1] x",
        "(tag pid=1)    File x",
        "(tag pid=1)\tx",
        "(" + "t" * 300 + ") INFO 11-29 16:19:50 [a.py:1] x",  # the longest tag a record has
        "(" + "t" * 301 + ") INFO 11-29 16:19:50 [a.py:1] x",
        "(t pid=" + "1" * 300 + ")     x",  # a process tag longer than a record's
        "(t pid=" + "1" * 300 + ")  File x",
        "(" + "t" * 80 + " pid=1" + "x" * 200 + ")     x",
        "(" + "t" * 81 + " pid=1)     x",
        "(t pid=1" + "x" * 201 + ")     x",
        "(t pid=1)(u pid=2)     x",
        "",
    ],
)
def test_edges_of_the_one_match(line: str) -> None:
    _agree(line)


def _reports(lines: list[str], fast: bool) -> tuple[int | None, str | None]:
    w = BootWatcher()
    feed = w.feed if fast else w._feed_one  # _feed_one: the sort_line path
    for n, line in enumerate(lines):
        d = feed(line)
        if d is not None:
            return n, d.model_dump_json()
    return None, None


@pytest.mark.parametrize("entry", ENTRIES[::7], ids=[e.id for e in ENTRIES[::7]])
def test_a_watch_reports_where_the_sort_line_path_reports(entry: corpus.Entry) -> None:
    lines = logtail.read_tail(entry.log_path)
    assert _reports(lines, True) == _reports(lines, False)


_RULE_LINES = sorted({e for r in RULES for e in r.examples if "\n" not in e})[::3]
_WATCH_LINES = st.sampled_from(
    [
        '(EngineCore_DP0 pid=12)   File "core.py", line 1, in run',
        "(EngineCore_DP0 pid=12)     raise ValueError(x)",
        "(EngineCore_DP0 pid=12)    x",  # a tag's space and three: no frame
        '(EngineCore_DP0 pid=13)   File "core.py", line 1, in run',
        '(Worker_TP1 pid=7, ip=10.0.0.1)   File "w.py", line 2, in f',
        '(tag)   File "x.py", line 1, in f',  # no process tag: a raw line
        "(tag)     x",
        '  File "x.py", line 1, in f',
        "    x = 1",
        "(EngineCore_DP0 pid=12) [rank0]:W1129 16:51:14.768 x",
        "(EngineCore_DP0 pid=12) ERROR 11-29 16:19:50 [core.py:1] EngineCore failed to start.",
        "(EngineCore_DP0 pid=12) ERROR 11-29 16:19:50 [core.py:1]   File x",
        "(APIServer pid=1) INFO 11-29 16:19:50 [api_server.py:1] vLLM API server version 0.17.0",
        "(APIServer pid=1) INFO 11-29 16:19:50 [utils.py:1]  █ ▀▄▀ █  version 0.13.0",
        "    █ ▀▄▀ █  version 0.22.0",  # a banner's rest that a terminal wrapped
        "(APIServer pid=1) INFO 11-29 16:19:50 [launcher.py:1] Starting vLLM API server 0",
        "\x1b[1;36m(EngineCore_DP0 pid=12)\x1b[0;0m   File x",
        *_RULE_LINES,
        # a rule's line indented after a tag: a frame only after a process tag
        *(
            tag + "     " + line
            for tag in ("(tag)", "(EngineCore_DP0 pid=12)")
            for line in _RULE_LINES[:6]
        ),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WATCH_LINES, max_size=24))
def test_a_watch_over_tagged_frames_and_rule_lines_reports_as_sort_line_does(
    lines: list[str],
) -> None:
    """feed knows a frame after the process tag of the frame before without the match;
    what it reports, where, and the version it reads must be the sort_line path's."""
    assert _reports(lines, True) == _reports(lines, False)
    fast, slow = BootWatcher(), BootWatcher()
    for line in lines:
        fast.feed(line)
        slow._feed_one(line)
    assert fast._version == slow._version
