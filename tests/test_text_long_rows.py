"""Shortcuts taken for 400 x 16 KB tails (bench_classify's shapes), each held to the long
way it stands for: the rejoin's error tests in a cheaper order, and the clean-tail check's
records found in one scan of the text, not one per level."""

from __future__ import annotations

import re

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.text import collapsed, damage_check, error_rows, rejoin, row_starts
from vllm_bootdiag.text.damage_check import HEAD
from vllm_bootdiag.text.joined import Joined

EXCEPTION = regex.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt): ")
START = regex.compile(row_starts._START.pattern)
"""The rejoin's patterns as they were, in the `regex` module: the long way."""


def _is_error_long_way(text: str) -> bool:
    """`error_rows._is_error` as it first read: the pydantic head searched for first."""
    head = HEAD.match(text)
    msg = text[head.end() :] if head is not None else text
    if error_rows._PYDANTIC_HEAD.search(msg):
        return False
    level = head["level"] if head is not None else None
    return bool(EXCEPTION.match(msg)) or level in ("ERROR", "CRITICAL")


def _continues_long_way(prev: str, row: str) -> bool:
    if START.match(row) or " " not in row.strip() or not _is_error_long_way(prev):
        return False
    if row[:1].islower() or rejoin._CONTINUES.match(row):
        return True
    end = prev.rstrip()[-1:]
    return end.isalnum() or end in ",;:(-"


_PIECES = (
    "ERROR 01-02 03:04:05 [a.py:1] ", "CRITICAL 01-02 03:04:05 [a.py:1] ", "INFO 01-02 03:04:05 [",
    "(EngineCore pid=1) ", "ValueError: ", "torch.OutOfMemoryError: ", "KeyboardInterrupt: ",
    "SystemExit: ", "2 validation errors for Config", "1 validation error for x.Y", "Error",
    "Exception", "ERROR", "CRITICAL", "Exit", "Interrupt", "]", ":", ",", "(", " ", "  ", "x",
    "a.py:1: ", ".py:", "12", ": ", "\t", "\u0663", "\x1c", "\xa0", "File.py:3:",
    "vllm serve: error: ", "x: error: ", "-", "%|", "it/s]", "Process x:", "[rank0]",
    "a.b.", "Try ", "and ", "\x1b[0;36m", "\x1b[0m", "%|", "Traceback (most recent call last):",
)  # fmt: skip
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


@settings(max_examples=500, deadline=None)
@given(_TEXT, _TEXT, st.integers(0, 3))
def test_the_error_tests_answer_as_the_long_way(prev: str, row: str, pad: int) -> None:
    """The same answers in the cheaper order; and an error line always holds an error
    word, so the words are a sound prefilter (a long row skips them)."""
    prev += "x" * (pad * 400)
    assert error_rows._is_error(prev) == _is_error_long_way(prev)
    assert rejoin._continues(prev, row) == _continues_long_way(prev, row)
    assert row_starts._starts(row) == (START.match(row) is not None)
    assert row_starts._starts(prev) == (START.match(prev) is not None)
    if error_rows._is_error(prev):
        assert error_rows._has_error_word(prev)
        assert error_rows._may_be_error(prev)
    long = prev + "x" * 1024
    if error_rows._is_error(long):
        assert error_rows._may_be_error(long)


def test_a_long_row_of_stamps_costs_no_searches_of_the_words() -> None:
    """`]` then 16 KB of `ERROR 01-02 03:04:05 [`: not an error line (no record at its head,
    and an exception's name starts with a letter), told without the exception's match, the
    pydantic search or `_START`, which run only after `_is_error` holds."""
    row = "]" + ("ERROR 01-02 03:04:05 [" * 745)[:16383]
    calls: list[str] = []

    class Spy:
        def __init__(self, name: str, pattern: object) -> None:
            self.name, self.pattern = name, pattern

        def match(self, text: str) -> object:
            calls.append(self.name)
            return self.pattern.match(text)  # type: ignore[attr-defined]

        search = match

    saved = row_starts._START_BUT_BAR, error_rows._PYDANTIC_HEAD, error_rows._exception_at_start
    row_starts._START_BUT_BAR, error_rows._PYDANTIC_HEAD = Spy("start", saved[0]), Spy("pydantic", saved[1])  # type: ignore[assignment]
    error_rows._exception_at_start = lambda text: calls.append("exception") or saved[2](text)  # type: ignore[assignment]
    try:
        assert not rejoin._continues(row, row)
        assert not rejoin._continues("ValueError " + row, row)
    finally:
        row_starts._START_BUT_BAR, error_rows._PYDANTIC_HEAD, error_rows._exception_at_start = saved
    assert calls == ["exception"]  # (the second row starts as an exception's name does)


def _records_long_way(doc: str) -> list[int]:
    """Every record (level and stamp) not at a line's start, one level's scan at a time."""
    found = []
    for level in damage_check._LEVELS:
        for m in re.finditer(level + " " + damage_check._STAMP, doc):
            if doc[m.start() - 1] != "\n":
                found.append(m.start())
    return sorted(found)


_DOC_PIECES = (
    "\n", "INFO 01-02 03:04:05 ", "DEBUG 11-29 16:19:50.5 [a.py:1] m", "WARNING 01-02 03:04:05",
    "ERROR 01-02 03:04:05 [", "CRITICAL 01-02 03:04:05 ", "(EngineCore pid=1) ", "]", "-", ":",
    "01-", "01:", "INFO 01-02 03:", "x", " ", "GO 01-02 03:04:05", "\nINFO 01-02 03:04:05 [a.py:1]",
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_DOC_PIECES), max_size=40), st.integers(1, 30))
def test_one_scan_finds_the_records_each_levels_scan_finds(pieces: list[str], times: int) -> None:
    """Each pattern the check may choose finds, in one scan, the records not at a line's
    start that a scan per level finds (the line-start ones it passes over)."""
    doc = "\n" + "".join(pieces) * times
    want = _records_long_way(doc)
    for inside, back in (
        (damage_check._RECORD_INSIDE, 3),
        (damage_check._record_inside_by_colon(), 9),
        (damage_check._record_inside_by_second_colon(), 12),
    ):
        assert list(damage_check._records_inside(doc, inside, back)) == want
    got = [p for p in damage_check._records_inside(doc, None, 0) if doc[p - 1] != "\n"]
    assert sorted(got) == want


def test_long_tails_of_open_codes_are_checked_as_the_plain_statement() -> None:
    """400 x 16 KB of codes left open (`\\x1b[`), with a bare reset in one line or none: the
    check's `m` before its searches for `[0m` says what the plain statement says."""
    from test_normalize_damage_check import reference

    for unit in ("\x1b[", "[\x1b", "\x1b[0;", "\x1b[0m\x1b["):
        line = (unit * 8192)[:16384]
        for odd in ("", "[0m", "[0;0m", "m", "\x1b[0m"):
            lines = [line] * 399 + [line[:8000] + odd + line[8000:16000]]
            doc = "\n".join(["", *lines])
            want = reference(doc)
            assert damage_check.damaged(doc) == want, (unit, odd)
            assert damage_check.damaged(Joined.of(lines)) == want, (unit, odd)


def _lines_of_long_way(parts: list[str]) -> list[str] | None:
    """`collapsed.lines_of` with the exception's line found by its pattern."""
    out: list[str] = []
    for part in parts:
        if part.startswith('File "'):
            part = "  " + part
            exc = EXCEPTION.search(part, part.find(", in ") + 5)
            if exc is not None:
                out.extend((part[: exc.start()].rstrip(), part[exc.start() :]))
                continue
        out.append(part)
    return out if len(out) > 1 else None


_FRAME_PIECES = (
    'File "/x/a.py", line 3, in f', 'File "b.py", line 1, in <module>', " ", "ValueError: boom",
    "torch.OutOfMemoryError: CUDA", "a.", "A.", "0.", "Error", ": ", "x", ".", "1Error: ", ", in ",
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_FRAME_PIECES), max_size=8).map("".join), max_size=4))
def test_a_frames_exception_is_cut_where_the_pattern_finds_it(parts: list[str]) -> None:
    assert collapsed.lines_of(parts) == _lines_of_long_way(parts)


def test_a_frame_line_of_name_parts_is_cut_in_linear_time() -> None:
    """16 KB of `A.` in a frame line run together with another: the pattern's search took
    12 s for half of it; the answer is the one the pattern gives on a short copy."""
    for run, tail in (("A.", ": "), ("A.", "Error: x"), ("a.0", "ValueError: x"), ("é.", "")):
        cut = 'File "a", line 1, in f File "b", line 2, in '
        many = run * (16000 // len(run))
        got = collapsed.split_collapsed(cut + many + tail)
        want = collapsed.split_collapsed(cut + run * 20 + tail)
        assert want is not None and got is not None
        assert [p.replace(many, "R") for p in got] == [p.replace(run * 20, "R") for p in want]


def test_a_row_of_sources_is_read_in_linear_time() -> None:
    """16 KB rows of `.py:` (and of `x.py:1`) cost the `\\S*\\.py:\\d+: ` branch of `_START`
    3.6 ms each in the `regex` module; `_starts` reads them by their first space, with the
    answer the pattern gives on a short copy of the same row."""
    for unit, tail in ((".py:", ""), ("x.py:1", ""), (".py:", "1: x"), ("x.py:1", ": x")):
        for row in (unit * (16384 // len(unit)) + tail, unit * 8 + tail):
            assert row_starts._starts(row) == (START.match(unit * 8 + tail) is not None), row[:40]
