"""An indent a paste put in front of every row: a Markdown code block, a quoted e-mail.

Markdown's code block by indentation (four spaces, or a tab; more inside a list item)
is how many forums, issue trackers and chat clients take a pasted log, and a YAML block
scalar or a mail client's quoting indents it the same way. Left on, the indent makes
every row read as a traceback's indented source line: no record, banner or error line
is read as one, and the answer is wrong (33 of 33 sampled corpus tails).

No row tells such an indent from vLLM's own (a frame's two spaces, its code line's
four), so the tail decides as a whole: every row that is not blank starts with the same
run of blanks, and once it is taken off, a row starts as only a line of its own does
(a record, a process tag, a traceback's header; or a tool's stamp or prefix on every
line, a json-file record, a viewer's line numbers: a CI or journald log pasted as a code
block). vLLM never indents those, so a tail that is all frames and code (its last rows,
say) keeps its indent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .line_numbers import (
    WRAP_WIDTHS,
    as_shown,
    ends_near,
    full_head,
    strip_line_numbers,
    wrap_width,
)
from .wrappers import strip_prefixes

NAME = "indented"

_BLANKS = " \t\xa0"
"""Blanks of an indent; a no-break space is one (a copy from a rendered page made every
space one)."""
_TOP = re.compile(
    r"(?:\x1b\[[0-9;]*m)*"
    r"(?:\([A-Za-z][\w =.\xa0-]{0,64}?[ \xa0]pid=\d+\)(?:\x1b\[[0-9;]*m)*[ \xa0]?)?"
    r"(?:\x1b\[[0-9;]*m)*"
    r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ \xa0]\d\d-\d\d[ \xa0]|Traceback[ \xa0]\(most"
    r"|usage:[ \xa0]|[\w.]{1,64}(?:[ \xa0]serve)?:[ \xa0]error:[ \xa0]"
    r"|[IWEF]\d{4}[ \xa0]\d\d:\d\d:\d\d"
    r"|(?:[A-Za-z_]\w{0,63}\.){0,8}[A-Z]\w{0,63}(?:Error|Exception):[ \xa0])"
)
"""How a row starts that vLLM never indents: a record's level and date (behind colour
codes and a process tag), a traceback's header or its exception line, argparse's usage
and error lines, a glog record (torch's `W1129 17:22:43.347000 ...`). Each run is bounded
(names, tags and programs are short): a row costs a few steps whatever its length (a run
of `1.` cost an unbounded `[\\w.]+` 1.5 ms a 16 KB row, given back one step at a time)."""


_WRAPPED_STARTS = ('{"log"', '{"MESSAGE"', "^[[")
"""A json-file record's start and a caret-notation colour code: a row of its own too."""


def _own_line(row: str) -> bool:
    """Whether a row starts as only a line of its own does: vLLM's (`_TOP`), or behind a
    wrapper that tools put on every line (a journald or CI stamp, compose, stern, a quote:
    a log of those pasted as a code block), or a json-file record."""
    return bool(
        _TOP.match(row)
        or row.startswith(_WRAPPED_STARTS)
        or (row[:1] > " " and strip_prefixes(row)[1])
    )


def strip_indent(rows: Sequence[str]) -> tuple[list[str], list[bool]] | None:
    """The rows without the indent common to all of them, and which rows changed; None
    where there is none to take off (the common case costs two tests: a tail's first and
    last rows that are not blank start at their first column). A row at its first column
    after a longer one is the rest of that row that a terminal or an editor wrapped (see
    `_rest`): it has no indent and keeps its text."""
    if not rows:
        return None
    head, end = rows[0][:1], rows[-1][:1]
    if head and head not in _BLANKS and not _indented_near(rows) and not _head(rows):
        return None  # (most tails: a row at either end starts at its first column)
    if end and end not in _BLANKS and not ends_near(rows, _BLANK_SET):
        return None  # (a tail that ends on a wrapped row's rest has an indented row near)
    shown = as_shown(rows)
    width = wrap_width(shown)
    wrapped = WRAP_WIDTHS[0] <= width <= WRAP_WIDTHS[1]  # (rows this short were not wrapped)
    if not wrapped and ((head and head not in _BLANKS) or (end and end not in _BLANKS)):
        return None  # (a row at either end at its first column is a rest only if wrapped)
    at = next((k for k, r in enumerate(rows) if r[:1] in _BLANK_SET and not r.isspace()), -1)
    if at < 0 or (at >= _HEAD and not _head(rows, at)):
        return None  # (rows before the first indented one: the rest of a row before)
    first = rows[at]
    if strip_prefixes(first)[1] or strip_line_numbers(rows) is not None:
        return None  # the blanks are a wrapper's (`  | `) or a viewer's (`cat -n`) own
    indent = _lead(first)
    rest = [False] * len(rows)
    after_full: list[int] = []
    """Rows led by blanks short of the indent after a full row: indented ones, or the rest
    of that row, which a terminal cut right before blanks (told once the indent is known)."""
    for k, row in enumerate(rows):
        if row.startswith(indent) or not row or row.isspace():
            continue
        if k < at or (row[:1] not in _BLANK_SET and wrapped and _rest(shown, k, width)):
            rest[k] = True
            continue
        if wrapped and row[:1] in _BLANK_SET and len(shown[k - 1]) == width:
            after_full.append(k)
            continue
        indent = _shared(indent, [_lead(row)])  # the blanks all rows share (never past text)
        if not indent:
            return None
    short = [k for k in after_full if not rows[k].startswith(indent)]
    if short:
        # The blanks those rows share with the indent: the paste's indent, where the
        # first row's was longer (a viewer's right-aligned line number after it, `cat -n`
        # pasted as a code block); else they are rests, cut right before their blanks.
        low = _shared(indent, [_lead(rows[k]) for k in short])
        got = _cut(rows, rest, low) if low else None
        for k in short:
            rest[k] = True
        whole = _cut(rows, rest, indent)
        # the shorter indent only where it leaves no fewer rows that start a line of their
        # own: a rest cut right before a blank (` word`) leads with less than the indent,
        # and the indent less that blank leaves the rows as frames, not records
        if got is not None and (whole is None or _own_lines(got[0]) >= _own_lines(whole[0])):
            return got
        return whole
    return _cut(rows, rest, indent)


def _own_lines(rows: list[str]) -> int:
    return sum(map(_own_line, rows))


def _indented_near(rows: Sequence[str]) -> bool:
    """Whether a row of the first `_HEAD` past the first starts with a blank (tested one by
    one: most tails' second row does not, and a generator costs more than the tests)."""
    n = len(rows)
    return (
        (n > 1 and rows[1][:1] in _BLANK_SET)
        or (n > 2 and rows[2][:1] in _BLANK_SET)
        or (n > 3 and rows[3][:1] in _BLANK_SET)
    )


def _head(rows: Sequence[str], at: int = -1) -> bool:
    """`full_head` for an indented row."""
    return full_head(rows, lambda r: r[:1] in _BLANK_SET, at)


def _lead(row: str) -> str:
    return row[: len(row) - len(row.lstrip(_BLANKS))]


def _shared(indent: str, leads: list[str]) -> str:
    """The blanks at the start of `indent` that every one of `leads` starts with."""
    n = len(indent)
    for lead in leads:
        m = 0
        while m < n and m < len(lead) and lead[m] == indent[m]:
            m += 1
        n = m
    return indent[:n]


def _cut(rows: Sequence[str], rest: list[bool], indent: str) -> tuple[list[str], list[bool]] | None:
    """The rows with `indent` taken off all but the rests, where a row it came off starts
    as only a line of its own does (or the rows left are a viewer's numbered ones)."""
    cut = len(indent)
    out = [
        row if was else "" if row.isspace() else row[cut:]
        for row, was in zip(rows, rest, strict=True)
    ]
    stripped = [row for row, was in zip(out, rest, strict=True) if not was]
    if not any(map(_own_line, stripped)) and strip_line_numbers(stripped) is None:
        return None  # (a rest is no evidence: only a row the indent came off is)
    return out, [a != b for a, b in zip(rows, out, strict=True)]


_BLANK_SET = frozenset(_BLANKS)
_HEAD = 4
"""The most rows a tail may start with before its first indented one: the rest of a row
before the tail, cut into rows (the tail is the last rows a worker kept)."""


def _rest(rows: Sequence[str], k: int, width: int) -> bool:
    """Whether row `k`, at its first column, is the rest of the row before it that a
    terminal or an editor wrapped at `width` (`wrap_width`): the row before is not
    blank and the whole row would not have fit after it, with the blanks an editor drops
    at a break (it breaks where the next word does not fit; a terminal's row before is
    full)."""
    prev = rows[k - 1]
    return bool(prev.strip()) and len(prev) + len(rows[k]) + _DROPPED > width


_DROPPED = 48
"""The most blanks an editor may have dropped where it broke a row (a caret line under a
frame's code starts with 12 to 40: a wrap that drops white space at a break takes them all;
code_block then fold100: 27 of 226 corpus tails wrong at 24, 1 at 48)."""
