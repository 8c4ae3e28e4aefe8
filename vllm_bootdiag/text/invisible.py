"""Invisible characters a paste put into the text: zero-width spaces, joiners, soft hyphens.

Chat clients, web pages and editors insert characters that show as nothing at the places
a line may break: a zero-width space (U+200B) after a space or inside a long word, a
zero-width non-joiner or joiner (U+200C, U+200D), a word joiner (U+2060), a byte-order
mark inside the text (U+FEFF), a soft hyphen (U+00AD). vLLM prints none of them, and the
log reads the same on screen, but a record's stamp broken by one is no longer a record
and a rule's wording broken by one no longer matches: the answer is wrong. They are taken
off every row before any other step reads it; each row keeps its place (no row is split
or joined), so evidence cites the same line numbers.

The test is what costs: 150 of 226 corpus tails are not ASCII (vLLM's banner), and on
those each character is one memchr of the joined text (two bytes a character). An ASCII
text answers `str.isascii()` at once (CPython keeps the flag).
"""

from __future__ import annotations

from collections.abc import Sequence

NAME = "invisible_characters"

INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff\xad"
"""The characters taken off: zero-width space, non-joiner, joiner, word joiner, the
byte-order mark (read anywhere as a zero-width no-break space), the soft hyphen."""


def holds_invisible(text: str) -> bool:
    """Whether `text` holds one of the INVISIBLE characters. An ASCII text (the flag is
    kept by CPython) holds none; any other costs one memchr of it per character, which
    `in` runs (a class in `re` steps through it 30x slower)."""
    return not text.isascii() and (
        "\u200b" in text
        or "\u200c" in text
        or "\u200d" in text
        or "\u2060" in text
        or "\ufeff" in text
        or "\xad" in text
    )


def strip_invisible(rows: Sequence[str]) -> tuple[list[str], list[bool]]:
    """The rows without INVISIBLE characters, and which rows changed."""
    out = [row if row.isascii() else _stripped(row) for row in rows]
    return out, [a is not b for a, b in zip(out, rows, strict=True)]


def _stripped(row: str) -> str:
    """`row` without INVISIBLE characters (the same string where it holds none): each one
    it holds replaced at memchr speed (`str.translate` looks every character up in a dict,
    300 ms for 400 rows of 16 KB)."""
    for char in INVISIBLE:
        if char in row:
            row = row.replace(char, "")
    return row
