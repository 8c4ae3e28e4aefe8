"""The rejoin's row-start tests (`text/row_starts.py`) held to their patterns on hostile rows.

`_source_at_start` finds the row's first white space by literal searches and
`_argparse_at` reads the program's name to the row's first `:`, where the `regex`
module's patterns stepped through 16 KB rows of `:` (bench_hostile's `:` after an ERROR
record: 0.1-0.2 ms a row). Each must answer what its pattern answers, on bench_hostile's
rows of every unit and on strings built of the pieces the patterns stop at.
"""

from __future__ import annotations

import sys
from pathlib import Path

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.text import rejoin, row_starts

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import bench_hostile

_SOURCE_LONG_WAY = regex.compile(r"\S*\.py:\d+: ")
"""`_source_at_start`'s pattern, as the `regex` module reads it (the long way)."""

_PIECES = [
    *":. -_aZ1é█\u0301\u0663\t\n\x0b\x0c\r\x1c\x1f\x85\xa0\u1680\u2007\u3000",
    ".py:",
    ".py:12: ",
    ": error: ",
    ": error:",
    "vllm serve",
    "a.py:1",
    "usage: ",
]


def _rows() -> list[str]:
    """bench_hostile's rows of every unit (alone and behind each head), at 16 KB and cut
    to 300 characters, and each with a frame's source or argparse's error in front."""
    rows = []
    for unit in bench_hostile.units(False):
        for make in bench_hostile.HEADS.values():
            for row in make(unit, 2):
                rows += [row, row[:300], "a.py:1: " + row, "vllm: error: " + row]
    return rows


def test_the_row_start_tests_answer_as_their_patterns_on_hostile_rows() -> None:
    for row in _rows():
        assert row_starts._source_at_start(row) == bool(_SOURCE_LONG_WAY.match(row)), row[:80]
        assert row_starts._argparse_at(row) == bool(row_starts._ARGPARSE_AT.match(row)), row[:80]


def test_short_hostile_rows_start_as_the_whole_pattern_says() -> None:
    """`_starts` (which asks both) is `_START.match` on the rows cut short (the whole
    pattern backtracks for milliseconds on some 16 KB rows)."""
    for row in _rows():
        if len(row) <= 320:
            assert row_starts._starts(row) == bool(row_starts._START.match(row)), row[:80]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=24), st.integers(0, 3))
def test_built_rows_start_as_the_patterns_say(pieces: list[str], times: int) -> None:
    row = "".join(pieces) * (1 + times * 40)
    assert row_starts._source_at_start(row) == bool(_SOURCE_LONG_WAY.match(row))
    assert row_starts._argparse_at(row) == bool(row_starts._ARGPARSE_AT.match(row))
    if len(row) <= 2000:
        assert row_starts._starts(row) == bool(row_starts._START.match(row))


def _worded_long_way(t: str) -> bool:
    return " " in t.lstrip("> \t").rstrip()


_LEAD_PIECES = [">", " ", "\t", "> ", "a", "é", "\x0b", "\x1c", "\n", "x y", "\xa0"]


def test_rows_are_worded_as_the_plain_statement_says() -> None:
    """`_worded` reads a lead of 64 or more by a byte translation in an ASCII row."""
    rows = [r for row in _rows() for r in (row, "\t" * 70 + row, "> " * 40 + row[:100])]
    for row in rows:
        assert rejoin._worded(row) == _worded_long_way(row), row[:80]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from([">", " ", "\t", "> "]), max_size=90),
    st.lists(st.sampled_from(_LEAD_PIECES), max_size=12),
)
def test_built_leads_are_worded_as_the_plain_statement_says(
    lead: list[str], rest: list[str]
) -> None:
    row = "".join(lead) + "".join(rest)
    assert rejoin._worded(row) == _worded_long_way(row)


def test_the_row_start_tests_hold_their_edge_cases() -> None:
    """A white space of the `regex` module before the space (and one it is not), a name
    of marks and digits, the literal after a later `:`."""
    assert row_starts._source_at_start("a.py:1: x")
    assert not row_starts._source_at_start("a\xa0b.py:1: x")
    assert not row_starts._source_at_start("a\tb.py:1: x")
    assert row_starts._source_at_start("a\x1cb.py:1: x") == bool(
        _SOURCE_LONG_WAY.match("a\x1cb.py:1: x")
    )
    assert row_starts._argparse_at("vllm serve: error: bad")
    assert row_starts._argparse_at("e\u0301\u0663: error: bad")
    assert not row_starts._argparse_at("a:b: error: bad")
    assert not row_starts._argparse_at(": error: bad")
