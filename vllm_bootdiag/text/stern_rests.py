"""A wrapped row's rest that reads as a stern prefix keeps its words.

stern prints `pod container ` in front of every line of a pod. A terminal's cut can
leave a row whose first two words look like that (`er-0 died unexpectedly, ...`, the
rest of `Worker proc VllmWorker-0 died`): taken off as a prefix, the line lost them,
and with them the literal a rule reads (`died unexpectedly`). A row's stern prefix is
put back where the row follows a full row (the one the terminal cut) and no other line
starts with that prefix: stern's prefix is the same on every line of its pod.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .line_numbers import WRAP_WIDTHS, wrap_width
from .rejoin import Row
from .wrappers import prefix_end, strip_prefixes

STERN = "stern_prefix"
_ONLY_STERN = (STERN,)


def keep_rest_words(
    lines: list[Row], raw: Sequence[str], widths: Sequence[str], first_line: int, ran: set[str]
) -> list[Row]:
    """`lines` (the per-line steps' rows of `raw`, whose row `i` is line `first_line + i`,
    as wide as `widths[i]` was shown) with each row that only lost a stern-looking prefix
    given it back where it is a wrapped row's rest (see above); `STERN` leaves `ran` (the
    names of the steps that ran) where no row had one taken off then."""
    width = wrap_width(widths) if widths else 0
    wrapped = WRAP_WIDTHS[0] <= width <= WRAP_WIDTHS[1]
    prefixes: list[str] = []
    counts: Counter[str] = Counter()
    out: list[Row] = []
    kept = False
    for row in lines:
        if STERN in row[3]:
            i = row[1] - first_line
            if wrapped and row[3] == _ONLY_STERN and i >= 1 and len(widths[i - 1]) == width:
                if not prefixes:  # (each line's stern prefix, once a row may be a rest)
                    prefixes = list(map(_stern_prefix, raw))
                    counts.update(prefixes)
                if counts[prefixes[i]] == 1:
                    out.append((raw[i], row[1], row[2], ()))
                    continue
            kept = True
        out.append(row)
    if not kept:
        ran.discard(STERN)
    return out


def _stern_prefix(text: str) -> str:
    """The stern prefix among the wrappers in front of `text` ("" if none)."""
    names = strip_prefixes(text)[1]
    if STERN not in names:
        return ""
    k = names.index(STERN)
    return text[prefix_end(text, k) : prefix_end(text, k + 1)]
