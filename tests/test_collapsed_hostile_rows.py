"""`split_collapsed`'s shortcuts held to the long way on bench_hostile's rows.

A coloured line with no `:` and no `"` is answered before its codes are stripped (16 KB of
`\\x1b[0m`: 35 us a row, 400 rows a tail), and a record at a start is looked for only where
a tag's `(` or a level opens it (a line of 1,500 uvicorn starts asked the pattern at each).
Both must cut as the one alternation of `test_normalize_collapsed.reference` cuts, on rows of
every unit behind every head, coloured or not.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.text import collapsed
from vllm_bootdiag.text.collapsed import split_collapsed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_hostile
from test_normalize_collapsed import reference

_CODES = ("", "\x1b[0m", "\x1b[1;31m", "\x1b[")


def _rows(width: int) -> list[str]:
    """bench_hostile's rows of every unit behind every head, cut to `width` (the long way
    tries its alternation at every character), bare and with colour codes around them."""
    rows = []
    for unit in bench_hostile.units(False):
        for make in bench_hostile.HEADS.values():
            for row in make(unit, 2):
                rows += [code + row[:width] + code for code in _CODES]
    return rows


def test_hostile_rows_are_cut_as_the_long_way_cuts_them() -> None:
    for row in _rows(600):
        assert split_collapsed(row) == reference(row), row[:80]


def test_long_coloured_rows_without_a_start_character_are_cut_as_the_long_way() -> None:
    """Whole 16 KB rows of the units holding no `:` or `"` (where the shortcut answers)."""
    for row in _rows(16_384):
        if ":" not in row and '"' not in row:
            assert split_collapsed(row) is None is reference(row), row[:80]


def test_long_rows_behind_a_head_are_cut_as_the_long_way() -> None:
    """Whole 16 KB rows of blanks (and a start after them, or none) behind each head: the
    blanks after a head are read only where a `:` or `"` follows."""
    heads = ["", "  ", "ERROR 01-02 03:04:05 [a.py:1] ", "(A pid=1) INFO 01-02 03:04:05 [a.py:1]"]
    ends = ["", " 3", " x: y", ' "q"', " INFO:     x", " usage: vllm", ' File "a.py", line 1, in f']
    for head in heads:
        for blank in (" ", "\t", " \t"):
            for end in ends:
                row = head + blank * (16_000 // len(blank)) + end
                assert split_collapsed(row) == reference(row), (head, blank, end)


_PIECES = ["(", ")", "(a pid=1) ", "(a)", "ERROR", " ", "x", "0", "01-", "1-", "02 "]
_PIECES += [f"{level} " for level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16), st.integers(0, 8))
def test_a_record_at_a_start_is_the_pattern(pieces: list[str], at: int) -> None:
    text = "".join(pieces)
    for pos in range(min(at, len(text)), len(text) + 1):
        assert collapsed._record_at(text, pos) == bool(collapsed._RECORD_AT.match(text, pos))
