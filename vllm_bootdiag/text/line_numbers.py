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
from collections.abc import Callable, Sequence

from .widths import longest_worded
from .wrappers import FENCE

NAME = "line_numbers"

_NUMBER = re.compile(r"[ \t\xa0]{0,7}(\d{1,7})(?:\t|[ \xa0]+)")
"""A viewer's number column: up to 7 blanks of right-alignment, the number, and the tab
(`cat -n`, `nl`) or the spaces (`less -N`, vim: one) after it. Of the spaces, only as
many as the tail's fewest are the viewer's: a row's own indent (a frame's) follows them.
A no-break space counts as a space (a copy from a rendered page made every space one)."""
_SHIFTED = re.compile(r"[ \t\xa0]{8,}\d{1,7}(?:\t|[ \xa0])")
"""A number column behind more blanks than a viewer's: an indent in front of it (a numbered
log pasted as a code block), for the indent's step to take off first; never a rest."""
_FIRST = frozenset(" \t\xa00123456789")
"""What a numbered row starts with: any other first character at either end of the tail
says it is not numbered, with no pattern run."""
_FENCE_STARTS = frozenset(("```", "~~~"))
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


def as_shown(rows: Sequence[str]) -> Sequence[str]:
    """The rows as they were wrapped: a terminal wraps at a column, tabs expanded to its stops
    of 8 (`cat -n` puts one after each number), a tool that cuts characters counts a tab as
    one. Where rows hold tabs, the reading under which more rows are exactly as long as the
    longest (cut there) is taken."""
    if not any("\t" in r for r in rows):
        return rows
    # (a row past the widest terminal is no terminal's row whatever its tabs: left as it is,
    # so 400 rows of 16 KB of tabs are not made 50 MB of blanks)
    top = WRAP_WIDTHS[1]
    expanded = [r.expandtabs() if "\t" in r and len(r) <= top else r for r in rows]
    return expanded if _full_rows(expanded) > _full_rows(rows) else rows


def _full_rows(rows: Sequence[str]) -> int:
    width = max(map(len, rows))
    return sum(len(r) == width for r in rows)


def wrap_width(rows: Sequence[str]) -> int:
    """The width a terminal or an editor wrapped `rows` at, were they wrapped: the longest
    row with a space inside (an editor keeps a longer word whole), or the longest row where
    none has one (a copy from a rendered page made every space a no-break space)."""
    longest = max(rows, key=len)
    return longest_worded(rows, longest) or len(longest)


def ends_near(rows: Sequence[str], first: frozenset[str]) -> bool:
    """Whether one of the last `REST_ROWS` rows starts with one of `first`: a tail whose
    last row does not may end on a wrapped row's rest."""
    return any(row[:1] in first for row in rows[-REST_ROWS:])


LONG_HEAD = 64
"""The most full rows a tail may start with before the first row a viewer marked."""


def full_head(rows: Sequence[str], marked: Callable[[str], bool], at: int = -1) -> bool:
    """Whether the tail starts with a terminal's full rows of one line cut before the tail
    (a config dump of 2,000 characters is 25 rows of 80): rows of one length (the first
    two: one test, where most tails' first two rows differ), then a row `marked` by the
    viewer (numbered, indented) within `LONG_HEAD` rows (`at`: the first, where known)."""
    n = len(rows[0])
    if len(rows) < 3 or len(rows[1]) != n or not WRAP_WIDTHS[0] <= n <= WRAP_WIDTHS[1]:
        return False
    if at < 0:
        at = next((k for k, r in enumerate(rows[:LONG_HEAD]) if marked(r)), -1)
    return 0 < at < LONG_HEAD and all(len(r) == n for r in rows[: at - 1])


def _numbered(row: str) -> bool:
    return row[:1] in _FIRST and _NUMBER.match(row) is not None


def strip_line_numbers(rows: Sequence[str]) -> tuple[list[str], list[bool]] | None:
    """The rows without a viewer's line numbers, and which rows changed; None where the
    rows are not numbered (then nothing is changed: the common case costs two tests)."""
    if (not rows or rows[0][:1] not in _FIRST) and (
        len(rows) < 2 or (not _numbered(rows[1]) and not full_head(rows, _numbered))
    ):
        return None  # (a tail may start on a wrapped row's rest: then a row near is numbered)
    if rows[-1][:1] not in _FIRST and not ends_near(rows, _FIRST):
        return None
    # the first and last numbered rows: a tail may start on a wrapped row's blank column,
    # and end on a blank row (`nl`) or a long row's rest (each match fails within 8 blanks)
    at, first = next(((k, m) for k, m in enumerate(map(_NUMBER.match, rows)) if m), (0, None))
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
    shown = as_shown(rows)
    width = wrap_width(shown)
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
        elif row[:3] in _FENCE_STARTS and FENCE.fullmatch(row):  # a paste's code fence
            out.append(row)
            changed.append(False)
        elif row[:gutter].isspace():  # a wrapped row, its number column blank
            out.append(row[gutter:])
            changed.append(True)
        elif _SHIFTED.match(row) is None and (
            k < at
            or (wrapped and (m is None or len(shown[k - 1]) == width) and rows[k - 1].strip())
        ):
            # the rest of the row before, which a terminal or an editor wrapped: at the first
            # column, after a row that is not blank (the rows before the first numbered one:
            # the rest of a row before the tail, see above); one that reads as a number
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
