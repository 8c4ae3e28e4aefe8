"""Where a line whose newlines were lost is cut: `split_collapsed` finds each kind of start
by its own literal-led search; here the starts are one alternation searched from each
cut, as the step first said it, and both must cut every line alike: corpus lines, their
collapsed copies, and lines hypothesis splices starts and process tags into."""

from __future__ import annotations

import sys
from pathlib import Path

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text.collapsed import lines_of, split_collapsed
from vllm_bootdiag.text.damage_check import HEAD
from vllm_bootdiag.text.wrappers import ESC_CSI

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
_SPLIT = regex.compile(
    r"(?:\([A-Za-z][\w =.-]{0,60}? pid=\d+\) ?)?"
    r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[[^\]\s]+:\d+\]|(?:INFO|WARNING|ERROR):     |usage: )"
    r"|Traceback \(most recent call last\):"
    r"|File \"[^\"\n]{1,400}\", line \d+, in "
)
_RECORD_AT = regex.compile(r"(?:\([^)]*\) ?)?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-")


def reference(text: str) -> list[str] | None:
    text = ESC_CSI.sub("", text)
    head = HEAD.match(text)
    pos = head.end() if head is not None else 0
    m = _SPLIT.search(text, pos)
    if (
        m is not None
        and m.start() == pos
        and not (head and head["level"] and _RECORD_AT.match(text, pos))
    ):
        m = _SPLIT.search(text, m.end())
    if m is None:
        return None
    parts, start = [], 0
    while m is not None:
        cut, end = m.start(), m.end()
        if text[start:cut].strip():
            parts.append(text[start:cut].rstrip())
        start = cut
        m = _SPLIT.search(text, end)
        if (
            m is not None
            and not text[end : m.start()].strip()
            and text[cut] != "T"
            and not _RECORD_AT.match(text, m.start())
        ):
            m = _SPLIT.search(text, m.end())
    parts.append(text[start:])
    return lines_of(parts)


def test_corpus_lines_and_their_collapsed_copies_are_cut_alike() -> None:
    cut = 0
    for log in LOGS[::3]:
        tail = logtail.read_tail(log)
        for line in [*tail, *damages.BY_NAME["collapse"].apply(list(tail))]:
            got = split_collapsed(line)
            assert got == reference(line), line[:200]
            cut += got is not None
    assert cut > 50


_POOL = sorted({line for log in LOGS[::6] for line in logtail.read_tail(log)[-30:]})
_STARTS = (
    "INFO 01-02 03:04:05 [api_server.py:1] ", "ERROR 11-29 17:04:04.123 [core.py:12] ",
    "(EngineCore_DP0 pid=12) ", "(APIServer pid=1)", "(Worker pid=7) WARNING 01-02 03:04:05 [a.py:3] ",
    'File "/x/y.py", line 3, in f ', "Traceback (most recent call last): ", "INFO:     ",
    "WARNING:     ", "ERROR:     ", "usage: vllm serve ", "ValueError: bad ", "-", "01-02 03:04:05",
    ":", '"', "(", ") ", "  ", "\x1b[0;36m",
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(_POOL),
    st.lists(st.tuples(st.sampled_from(_STARTS), st.integers(0, 200)), max_size=6),
)
def test_spliced_lines_are_cut_alike(line: str, splices: list[tuple[str, int]]) -> None:
    for piece, at in splices:
        line = line[:at] + piece + line[at:]
    assert split_collapsed(line) == reference(line)


_PADS = ('File "', "x", " ", '"', "a" * 399 + '"', "01-", "INFO 01-02 03:", ":")
"""What a long line (1 KB and more, where a frame is looked for from its `", line `) is
padded with: runs of a frame's start, of quotes, and paths up to the 400 characters a
frame's path may hold."""


_LONG_FRAMES = tuple(f'File "/{"p" * n}.py", line 7, in g ' for n in (200, 300, 395, 396, 397))
"""Frames whose path is 204-400 characters long (`/`, the name, `.py`), and one a character
too long for a frame."""


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(_POOL),
    st.lists(st.tuples(st.sampled_from(_PADS), st.integers(1, 400)), min_size=1, max_size=3),
    st.lists(
        st.tuples(st.sampled_from(_STARTS + _LONG_FRAMES), st.integers(0, 4000)), max_size=6
    ),
)
def test_long_spliced_lines_are_cut_alike(
    line: str, pads: list[tuple[str, int]], splices: list[tuple[str, int]]
) -> None:
    for pad, times in pads:
        line += pad * times
    line = (line * (1024 // len(line) + 1))[: max(1024, len(line))]
    for piece, at in splices:
        line = line[:at] + piece + line[at:]
    assert len(line) >= 1024
    assert split_collapsed(line) == reference(line)


_LEVEL_RECORDS = tuple(
    f"{level} 11-29 17:04:04{frac} [core.py:12] m "
    for level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
    for frac in ("", ".123", ",5")
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(("INFO 01-02 03:", "01-", "-", "01-01 01:01:01 ", "-:")),
    st.integers(80, 1200),
    st.lists(
        st.tuples(st.sampled_from(_LEVEL_RECORDS + _STARTS), st.integers(0, 16000)),
        min_size=1,
        max_size=8,
    ),
)
def test_lines_dense_in_dashes_are_cut_alike(
    pad: str, times: int, splices: list[tuple[str, int]]
) -> None:
    """A long line with a dash every few characters finds its records by their time's
    second colon, not by the dash: the same cuts as the reference's."""
    from vllm_bootdiag.text.collapsed import _Starts

    line = pad * times
    for piece, at in splices:
        line = line[:at] + piece + line[at:]
    if len(line) >= 1024 and line.count("-") * 16 >= len(line):
        assert _Starts(line).by_colon
    assert split_collapsed(line) == reference(line)
