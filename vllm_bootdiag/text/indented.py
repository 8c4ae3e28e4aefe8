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

from .line_numbers import strip_line_numbers
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
    last rows that are not blank start at their first column)."""
    if not rows:
        return None
    head, end = rows[0][:1], rows[-1][:1]
    if (head and head not in _BLANKS) or (end and end not in _BLANKS):
        return None  # (most tails: a row at either end starts at its first column)
    first = next((r for r in rows if r and not r.isspace()), None)
    if first is None or first[:1] not in _BLANKS:
        return None
    last = next(r for r in reversed(rows) if r and not r.isspace())
    if last[:1] not in _BLANKS:
        return None
    if strip_prefixes(first)[1] or strip_line_numbers(rows) is not None:
        return None  # the blanks are a wrapper's (`  | `) or a viewer's (`cat -n`) own
    indent = first[: len(first) - len(first.lstrip(_BLANKS))]
    for row in rows:
        if not row.startswith(indent) and row and not row.isspace():
            # the blanks all rows share: a prefix of this one's (never past its text)
            lead = row[: len(row) - len(row.lstrip(_BLANKS))]
            n = 0
            while n < len(lead) and n < len(indent) and lead[n] == indent[n]:
                n += 1
            indent = indent[:n]
            if not indent:
                return None
    cut = len(indent)
    out = ["" if row.isspace() else row[cut:] for row in rows]  # (no copy made to test)
    if not any(map(_own_line, out)) and strip_line_numbers(out) is None:
        return None
    return out, [a != b for a, b in zip(rows, out, strict=True)]
