"""Quotes a paste changed: a chat client's or word processor's curly quotes, a web page's
HTML escapes.

A log pasted through a chat client or a word processor comes back with typographic quotes
(`’ ‘` for `'`, `“ ”` for `"`); one scraped from a page's HTML comes back escaped (`&quot;`
`&#39;` `&#x27;` `&lt;` `&gt;` `&amp;`). vLLM prints neither, but its messages quote what
they name (`model='...'`, `File "..."`, `<class '...'>`), and the rules that read those
quotes no longer match: the answer is wrong. Each row gets its quotes back and keeps its
place (no row is split or joined), so evidence cites the same line numbers.

A clean log may hold either of its own, inside a message: a model's name, a path, a URL's
`&`. So the tail is repaired only where the damage is the whole paste's: curly quotes that
outnumber the straight ones left, escapes where every `&` starts one (a page escapes every
`&`). A numeric escape of a line end or a control character is left as it is: a row stays
one row.

The test is what costs: an ASCII text (CPython keeps the flag) holds no curly quote, and
`&` is one memchr; a text that is not ASCII (vLLM's banner) costs two more.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SMART_QUOTES = "smart_quotes"
HTML_ESCAPES = "html_escapes"

CURLY = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}
"""The quotes a chat client or word processor types for `'` and `"`."""

_ESCAPE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,6});")
_NAMED = {"quot": '"', "apos": "'", "lt": "<", "gt": ">", "amp": "&", "nbsp": "\xa0"}


def smart_quoted(text: str) -> bool:
    """Whether the joined tail is a paste whose quotes were made curly: it holds curly
    quotes, more than the straight ones left. Only the closing ones are looked for first
    (two memchrs of a text that is not ASCII): a paste made curly holds one wherever it
    holds an opening one, and an apostrophe is one."""
    if text.isascii() or ("\u2019" not in text and "\u201d" not in text):
        return False
    curly = sum(text.count(c) for c in CURLY)
    return curly > text.count("'") + text.count('"')


def html_escaped(text: str) -> bool:
    """Whether the joined tail is a page's HTML escape of a log: every `&` in it starts an
    escape, and one of them stands for a character a row can hold."""
    if "&" not in text:
        return False
    escapes = _ESCAPE.findall(text)
    return len(escapes) == text.count("&") and any(_char(e) is not None for e in escapes)


def _char(escape: str) -> str | None:
    """The character an escape stands for; None for one a row cannot hold (a line end, a
    control character, a name not known)."""
    body = escape[1:-1]
    if body[0] != "#":
        return _NAMED.get(body)
    code = int(body[2:], 16) if body[1] in "xX" else int(body[1:])
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return None
    char = chr(code)
    return char if char.isprintable() or char in "\t\xa0" else None


def unquote_rows(rows: Sequence[str]) -> tuple[list[str], list[bool]]:
    """The rows with straight quotes for curly ones, and which rows changed."""
    out = [row if row.isascii() else _straight(row) for row in rows]
    return out, [a is not b for a, b in zip(out, rows, strict=True)]


def _straight(row: str) -> str:
    for curly, straight in CURLY.items():
        if curly in row:
            row = row.replace(curly, straight)
    return row


def unescape_rows(rows: Sequence[str]) -> tuple[list[str], list[bool]]:
    """The rows with the characters their HTML escapes stand for, and which rows changed."""
    out = [_ESCAPE.sub(_unescaped, row) if "&" in row else row for row in rows]
    return out, [a != b for a, b in zip(out, rows, strict=True)]


def _unescaped(m: re.Match[str]) -> str:
    char = _char(m[0])
    return m[0] if char is None else char
