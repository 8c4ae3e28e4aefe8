"""Properties of the two viewer steps on any rows (hypothesis): they never raise, keep one
row for each row, only ever take a row's start off (a rest keeps its text), and leave rows
alone that hold no viewer's mark at all."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.text.indented import strip_indent
from vllm_bootdiag.text.line_numbers import strip_line_numbers

_PIECES = st.sampled_from(
    [" ", "  ", "    ", "\t", "\xa0", "1", "12", "  3\t", "     4\t", "INFO 01-02 03:04:05 ",
     "[core.py:1] ", "(APIServer pid=1) ", "Traceback (most recent call last):", 'File "x"',
     "ValueError: x", "x" * 40, "word ", "^^^^", "\x1b[0m", "|", "> "]
)  # fmt: skip
_ROW = st.lists(_PIECES, max_size=12).map("".join)
_ROWS = st.lists(_ROW, max_size=40)
Step = Callable[[Sequence[str]], tuple[list[str], list[bool]] | None]


def _suffixes(rows: list[str], out: list[str], changed: list[bool]) -> None:
    assert len(out) == len(rows) == len(changed)
    for row, new, was in zip(rows, out, changed, strict=True):
        assert row.endswith(new) or (new == "" and not row.strip()), (row, new)
        assert was == (row != new)


@pytest.mark.parametrize("step", [strip_indent, strip_line_numbers], ids=["indent", "numbers"])
@settings(max_examples=400, deadline=None)
@given(rows=_ROWS)
def test_a_viewer_step_only_takes_a_rows_start_off(step: Step, rows: list[str]) -> None:
    got = step(rows)
    if got is not None:
        _suffixes(rows, *got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abc xyz:.()", max_size=120), max_size=30))
def test_rows_with_no_blank_start_and_no_digit_are_left_alone(rows: list[str]) -> None:
    rows = [r.lstrip() for r in rows]
    assert strip_indent(rows) is None
    assert strip_line_numbers(rows) is None
