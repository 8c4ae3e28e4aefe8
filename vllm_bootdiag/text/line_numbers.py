"""Line numbers a viewer put in front of every row: `cat -n`, `nl`, `less -N`, an editor.

A user who shares "the log, with line numbers" pastes rows like `    12\tINFO ...` or
`     12 (APIServer pid=1) ...`: a right-aligned number, then a tab or a space. Left on,
the number's blanks make every row read as a traceback's indented source line, and the
error is never read. No single row tells such a number from text (a raw line may start
with one: `1 validation error for ...`), so the tail decides as a whole: the rows are
numbered when most of them carry a number, each number is the one before it plus one,
and every other row is blank or a wrapped row's rest (`nl` numbers no empty line,
`less -N` leaves a wrapped row's number column blank; a terminal that wrapped `cat -n`'s
rows, or an editor, starts the rest at the first column).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

NAME = "line_numbers"

_NUMBER = re.compile(r"[ \t\xa0]{0,7}(\d{1,7})(?:\t|[ \xa0]+)")
"""A viewer's number column: up to 7 blanks of right-alignment, the number, and the tab
(`cat -n`, `nl`) or the spaces (`less -N`, vim: one) after it. Of the spaces, only as
many as the tail's fewest are the viewer's: a row's own indent (a frame's) follows them.
A no-break space counts as a space (a copy from a rendered page made every space one)."""
_FIRST = frozenset(" \t\xa00123456789")
"""What a numbered row starts with: any other first character at either end of the tail
says it is not numbered, with no pattern run."""
MIN_ROWS = 3
"""Fewer rows numbered with a space after the number than this are no evidence of a
viewer (two rows of a table may count up by one). One row will do where a tab follows
its number (`cat -n`, `nl`)."""


REST_ROWS = 16
"""The most rows at the tail's end that may all be a wrapped row's rest (a terminal's cut
of a line 16 times its width): past them, the tail is not read as numbered."""


WRAP_WIDTHS = (40, 300)
"""The widths a terminal or an editor wraps at (the rejoin's): the longest row of a tail
whose rows were wrapped is one."""


def ends_near(rows: Sequence[str], first: frozenset[str]) -> bool:
    """Whether one of the last `REST_ROWS` rows starts with one of `first`: a tail whose
    last row does not may end on a wrapped row's rest."""
    return any(row[:1] in first for row in rows[-REST_ROWS:])


def strip_line_numbers(rows: Sequence[str]) -> tuple[list[str], list[bool]] | None:
    """The rows without a viewer's line numbers, and which rows changed; None where the
    rows are not numbered (then nothing is changed: the common case costs two tests)."""
    if (not rows or rows[0][:1] not in _FIRST) and (
        len(rows) < 2 or rows[1][:1] not in _FIRST or _NUMBER.match(rows[1]) is None
    ):
        return None  # (a tail may start on a wrapped row's rest: then its next is numbered)
    if rows[-1][:1] not in _FIRST and not ends_near(rows, _FIRST):
        return None
    # the first and last numbered rows: a tail may start on a wrapped row's blank column,
    # and end on a blank row (`nl`) or a long row's rest (each match fails within 8 blanks)
    first = next(filter(None, map(_NUMBER.match, rows)), None)
    last = next(filter(None, map(_NUMBER.match, reversed(rows))), None)
    if first is None or last is None or int(last[1]) - int(first[1]) >= len(rows):
        return None  # (numbered rows count up by one: the last is at most len - 1 past)
    matches = list(map(_NUMBER.match, rows))
    previous = int(first[1]) - 1
    numbered: list[re.Match[str]] = []
    for m in matches:
        if m is not None and int(m[1]) == previous + 1:
            previous += 1
            numbered.append(m)
    # (a tab after a number at a row's start is a viewer's: no text is laid out so)
    tabbed = first[0][-1] == "\t"
    if len(numbered) < (1 if tabbed else MIN_ROWS):
        return None
    spaces = 0 if tabbed else min(m.end() - m.end(1) for m in numbered)  # (the viewer's)
    out: list[str] = []
    changed: list[bool] = []
    gutter = first.end(1) + (1 if tabbed else spaces)
    previous = int(first[1]) - 1
    rests = 0
    width = max(map(len, rows))
    wrapped = WRAP_WIDTHS[0] <= width <= WRAP_WIDTHS[1]  # (rows this short were not wrapped)
    for k, (row, m) in enumerate(zip(rows, matches, strict=True)):
        if m is not None and int(m[1]) == previous + 1:
            previous += 1
            gutter = m.end(1) + (1 if tabbed else spaces)
            out.append(row[gutter:])
            changed.append(True)
        elif not row.strip():
            out.append("")
            changed.append(row != "")
        elif row[:gutter].isspace():  # a wrapped row, its number column blank
            out.append(row[gutter:])
            changed.append(True)
        elif wrapped and (
            (m is None or len(rows[k - 1]) == width) and rows[k - 1].strip()
            if k
            else matches[1:2] != [None]
        ):
            # the rest of the row before, which a terminal or an editor wrapped: at the first
            # column, after a row that is not blank (the tail's first row: the rest of a row
            # before the tail, where the next one is numbered); one that reads as a number
            # that is not the next only after a full row (a terminal cut before it). Any such
            # row: an editor that dropped a frame's indent at the break left a row whose
            # first word would have fit, and the numbers counting up are the evidence.
            out.append(row)
            changed.append(False)
            rests += 1
        else:
            return None
    if rests and not tabbed and len(numbered) < MIN_ROWS:
        return None  # (a rest or two after a row or two numbered: no evidence of a viewer)
    return out, changed
