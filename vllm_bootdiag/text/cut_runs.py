"""Runs of blanks a terminal cut: rows that start as a line of their own does (with blanks),
yet go on the row above, where a terminal's wrap fell inside a run of blanks (a banner row's
gaps, a caret line's indent behind a record's head). A full row that ends in a blank, then a
row that starts with one: vLLM prints no line of exactly a terminal's width that ends in a
blank, so the row goes on it; nor one that starts with blanks and a block character, which
goes on a full row that ends in one (a cut at the start of a banner's gap). A log wrapped
twice (a terminal's rows, cut again by an e-mail or a ticket) leaves such rows at either
width."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import compress, count, repeat

from .row_scan import RECORD

_BLANKS = (" ", "\t")
_RESETS = ("\x1b[0m ", "\x1b[0;0m ")
"""A colour's reset and a space: no line of vLLM's starts so (a coloured record's head
ends its level and its source each with one): a row that does is the rest of the row
above, which a cut left at its reset (`cat -n` of a coloured log, cut at 100 columns)."""
_PIECE_STARTS = (*_BLANKS, *_RESETS)
_BLOCKS = ("█", "▀", "▄")
_BLOCKS_AFTER_BLANKS = re.compile("[ \t]+[█▀▄]")
"""The rest of a banner row (vLLM's ASCII art) that a cut left at a gap's start: no line
of vLLM's starts with blanks and then a block character (the banner's are records)."""
_HEAD_AT_END = re.compile(RECORD + r"\Z")
"""A record's head (level to source) at a row's end: searched only in the row's last 120
characters (a head is shorter: a level, a stamp and a file name)."""


def blank_pieces(texts: Sequence[str], read: Sequence[str] | list[int], width: int) -> list[int]:
    """The rows (each but the first) that start with a blank and whose predecessor ends in
    one, its last read row (`read[k - 1]`: that row, or its length) `width` long. Such a row
    starts as a line of its own does, so it is no slow row: these are found in C (a
    `str.startswith` of each row), only where the rows are a terminal's."""
    out = []
    for k in compress(count(), map(str.startswith, texts, repeat(_PIECE_STARTS))):
        w = read[k - 1] if k else -1
        if (w if isinstance(w, int) else len(w)) == width and cuts_a_run(texts[k - 1], texts[k]):
            out.append(k)
    return out


def cuts_a_run(prev_text: str, row: str) -> bool:
    """`row` goes on the blanks `prev_text` ends in (both are in one run of blanks), or on
    a record's head that ends it: vLLM's format puts a space after the head, so a row that
    ends at the head's `]` was cut there."""
    if row.startswith(_RESETS):
        return True  # a colour's reset: the colour it ends was opened on the row above
    if not row.startswith(_BLANKS):
        return False
    if prev_text.endswith(_BLANKS):
        return True
    if prev_text.endswith(_BLOCKS) and _BLOCKS_AFTER_BLANKS.match(row) is not None:
        return True  # the banner's art cut where one of its gaps starts
    return (
        prev_text.endswith("]") and _HEAD_AT_END.search(prev_text, len(prev_text) - 120) is not None
    )
