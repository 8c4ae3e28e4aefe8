"""A terminal's and an editor's widths, as a tail's rows tell them (what `rejoin` reads
before it joins any): a terminal cuts its rows at exactly its width, an editor at word
breaks; a log wrapped twice shows both, and the second rejoin reads the first's rows."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence

from .row_starts import _STRONG_START, _starts

ROUND_WIDTHS = frozenset((72, 80, 100, 120, 132, 140, 150, 160, 180, 200, 240, 250))
"""Terminal widths: with one full row only, a row this long was cut by a terminal
(mid-word); any other length, by an editor at a word break."""


def first_word(text: str) -> int:
    stripped = text.lstrip(" ")
    cut = stripped.find(" ")
    return len(text) - len(stripped) + (cut if cut >= 0 else len(stripped))


def longest_worded(raw: Sequence[str], longest: str) -> int:
    """The length of the longest row with a space inside it (an editor's width): most
    often the longest row itself, so that one is tried before the others are, then the
    rows longest first up to the first with a space (1.2 M fewer instructions a pass over
    the corpus tails than testing every row). A quote's
    `> ` is not inside: a long word the editor could not break stays a row of its own,
    and a quote puts a space in front of it."""
    if worded(longest):
        return len(longest)
    size = list(map(len, raw))
    for k in sorted(range(len(size)), key=size.__getitem__, reverse=True):
        if worded(raw[k]):
            return size[k]
    return 0


_QUOTE_LEAD = re.compile(r"[> \t]*")
_SHORT_LEAD = 64
"""A lead (quote markers, blanks) this long or longer is not run through by the pattern."""


def worded(t: str) -> bool:
    """`" " in t.lstrip("> \t").rstrip()`: a space past the quote markers and before the
    last word. (`lstrip` with a set of three looks each character up in the set: 16 KB of
    `> ` cost it 0.2 ms a row; the pattern runs them through at C speed.)"""
    lead = _QUOTE_LEAD.match(t, 0, _SHORT_LEAD)  # (always matches: `[> \t]*`)
    at = lead.end() if lead else 0
    if at < _SHORT_LEAD or at == len(t) or not t.isascii():
        if at == _SHORT_LEAD:  # (a long lead in a wide text: read on by the pattern)
            lead = _QUOTE_LEAD.match(t, at)
            at = lead.end() if lead else at
        p = t.find(" ", at)  # (the first space is in, if any is)
        # (`not t[p:].isspace()`, without a copy of the rest: a row that ends in no blank
        # is its own `rstrip()`)
        return p >= 0 and len(t.rstrip()) > p
    # A long lead in an ASCII row (16 KB of tabs: the pattern's 40 us, 400 rows a tail): the
    # last space before the last word is past the lead, and then a space is, when a
    # character before it is none of the lead's, which a byte translation tells in C.
    last = t.rfind(" ", 0, len(t.rstrip()))
    return last > 0 and bool(t[:last].encode("ascii").translate(None, b"> \t"))


def wrapped_again(
    texts: Sequence[str],
    slow: list[int],
    before: list[int],
    width_of: Callable[[int], int],
    width: int,
    editor: int,
) -> int:
    """How many slow rows that would count as an editor's (their first word would not fit
    after the row before) go on a terminal's row wrapped again: a full row and the short one
    after it make a row of another terminal's width (a 100-column terminal's rows, cut again
    at 72: 72 and 28), and a row after them goes on it, as the second rejoin reads them."""
    n = 0
    for k, w in zip(slow, before, strict=True):
        if w < width and w + width in ROUND_WIDTHS and k >= 2 and width_of(k - 2) == width:
            row = texts[k]
            if w + 1 + first_word(row) > editor and not _STRONG_START.match(row):
                n += not _STRONG_START.match(texts[k - 1]) and not _starts(row)
    return n


def terminal_width(texts: Sequence[str], wide: int) -> int:
    """The width of a terminal's rows that a first rejoin (of rows `wide` wide) made: the
    one length that a third of the rows longer than `wide` have, four at least (-1: none).
    Not the longest row: where an editor wrapped a terminal's rows, the first rejoin can put
    an editor's row that started the terminal's next one on a full one (a few, longer)."""
    lengths = Counter(n for n in map(len, texts) if wide < n <= 300)
    if not lengths:
        return -1
    n, most = lengths.most_common(1)[0]
    return n if most >= 4 and 3 * most >= lengths.total() else -1


_UNDER_A_FOLD = frozenset((80, 100))
"""The terminal widths whose rows an e-mail or a ticket folds again (at 72, say): a line an
editor's wider rows rejoined reaches 120 or more by chance (a fold at 100 of a long error)."""


def terminal_row(length: int, width: int) -> bool:
    """A line an editor's rows (`width` wide) rejoined to a terminal's width: a terminal's
    full row, which a terminal wrapped before the editor did (a log wrapped at 80, then at
    72). The row after it is the terminal's next, joined on the second read without a space:
    the first does not join it with one."""
    return length > width and length in _UNDER_A_FOLD


def editor_width(texts: Sequence[str], wide: int) -> int:
    """The width of an editor's rows that a first rejoin (of a terminal's rows `wide` wide)
    made: the longest length that three rows longer than `wide` come within two of (-1:
    none). Not the longest row: an editor's row exactly `wide` long was put on the row
    after it (a few rows, longer, each of its own length)."""
    lengths = Counter(n for n in map(len, texts) if wide < n <= 300)
    for n in sorted(lengths, reverse=True):
        if lengths[n] + lengths[n - 1] + lengths[n - 2] >= 3:
            return n
    return -1


_CARET = re.compile(r"(?:\^\[|␛)\[[0-9;?]*[A-Za-z]")
"""One colour code in caret notation (`wrappers.ansi_text` takes them off)."""


def caret_widths(rows: Sequence[str]) -> list[str]:
    """The rows as a terminal or an editor cut them, where they hold colour codes in caret
    notation (`^[[0;36m`, which `ansi_text` takes off): each row as wide as what was cut.
    A terminal that showed the colours cut its rows at W visible columns (the codes count
    none: a caret copy of the screen), `fold` or an editor cut a file that held the ESC bytes
    (each code one column a byte) or the caret text (each character one); and where the codes
    a row held when cut are followed by codes a tool coloured it with after the cut (vLLM's
    tag coloured, then a level), the first count and the others do not. W is the widest row
    with its codes off (a code-free row, a line's rest, is as wide as it shows); each row is
    read as the widest of these readings that is no wider than W (a terminal's full row, or
    an editor's, at most W), a row with no code as it is."""
    shown: list[str] = []
    codes: list[list[int]] = []
    for row in rows:
        found = [m.span() for m in _CARET.finditer(row)] if "[" in row else []
        if found:
            text = _CARET.sub("", row)
            codes.append([b - a for a, b in found] + [int(row[a] == "^") for a, _ in found])
        else:
            text = row
            codes.append([])
        shown.append(text)
    width = max((n for n in map(len, shown) if n <= 300), default=0)
    out: list[str] = []
    for text, held in zip(shown, codes, strict=True):
        if held and len(text) < width:
            need, n = width - len(text), len(held) // 2
            as_text = as_bytes = best = 0
            for k in range(n):
                as_text += held[k]
                as_bytes += held[k] - held[n + k]  # (`^[` is one ESC byte)
                if as_bytes > need:
                    break
                best = as_text if as_text <= need else as_bytes
            text += "^" * best
        out.append(text)
    return out
