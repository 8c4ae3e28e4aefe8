"""A log handed over as one escaped string: a worker's JSON error, a Python list's repr.

A serving worker that reports a failed boot often puts the lines it kept into one JSON
field (`{"error": "INFO ...\\nERROR ..."}`), and a user pastes that; or a script prints the
list of lines it kept (`['INFO ...', 'ERROR ...']`). Each is one row whose newlines are
the two characters `\\n`, so no record starts a row and nothing is read. Such a row is
decoded (by `json` or `ast.literal_eval`, which run no code; or, cut short, at its `\\n`
escapes) into the rows it holds, each keeping the number of the row it came from.

Only a short input is looked at (a pasted document is a few rows, a pretty-printed one a
few more): a tail of vLLM's own rows costs one length test.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Sequence
from itertools import islice

from .tail import DEFAULT_LINES

NAME = "escaped_log"

MAX_ROWS = 32
"""The most rows an input may have for its rows to be looked at."""
MIN_ROWS_HELD = 2
"""A row decodes into a log only when it holds this many log rows at least."""

_LOG_ROW = re.compile(
    r"(?:\x1b\[[0-9;]{0,32}m){0,4}(?:\([^()\n]{1,300}? pid=\d+[^()\n]{0,200}\)"
    r"(?:\x1b\[[0-9;]{0,32}m){0,4} ?)?(?:\x1b\[[0-9;]{0,32}m){0,4}"
    r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"
    r"|Traceback \(most recent call last\)|  File \"|[\w.]{1,200}(?:Error|Exception): "
    r"|usage: |[\w .-]{1,100}: error: )"
)
"""How a row of vLLM's output starts (behind its process tag or not, coloured or not): a
record, a traceback, a frame, an exception line, argparse's usage and error."""
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[nrt\"'\\/])")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "'": "'", "\\": "\\", "/": "/"}
_ITEM_END = re.compile(r"""(?<!\\)['"], ['"]""")
"""Where one item of a list's repr ends and the next starts (`', '`)."""
_LITERAL_CHARS = 64 * 1024
"""The longest text read as a Python literal (parsing costs 0.25 ms a KB); a longer list's
repr is split at its items."""
_LIST_ENDS = ("['", '["', "']", '"]')
_KEY_VALUE = re.compile(r'\s*"[^"\\]{1,64}"\s*:\s*(".*")\s*,?\s*')
"""A pretty-printed JSON object's `"key": "value",` row."""


def unescaped_rows(rows: Sequence[str]) -> tuple[list[str], list[int], list[bool]] | None:
    """The rows with each escaped log decoded into the rows it holds, and for each row
    out the index of the row it came from and whether it was decoded; None where no row
    holds one."""
    found = _wrapped(rows) if len(rows) > 1 else None
    if found is not None or len(rows) > MAX_ROWS:
        return found
    return _direct(rows)


def _direct(rows: Sequence[str]) -> tuple[list[str], list[int], list[bool]] | None:
    """`unescaped_rows` of rows as they are (at most MAX_ROWS)."""
    if not any(map(_may_hold, rows)):
        return None
    out: list[str] = []
    origin: list[int] = []
    decoded: list[bool] = []
    for k, row in enumerate(rows):
        held = _held(row) if _may_hold(row) else None
        if held is None:
            out.append(row)
            origin.append(k)
            decoded.append(False)
        else:
            out.extend(held)
            origin.extend([k] * len(held))
            decoded.extend([True] * len(held))
    if not any(decoded):
        return None
    # the last lines, as a worker keeps them (a document may hold thousands)
    return out[-DEFAULT_LINES:], origin[-DEFAULT_LINES:], decoded[-DEFAULT_LINES:]


def _wrapped(rows: Sequence[str]) -> tuple[list[str], list[int], list[bool]] | None:
    """`unescaped_rows` of rows a terminal hard-wrapped (a JSON error field shown in one,
    then copied): a row as wide as the widest goes on in the next. Looked at only where
    escaped newlines stand in one of the first or last four rows (vLLM's rows seldom hold
    one); each row decoded cites the first row its line was wrapped over."""
    if not any("\\n" in row for row in (*rows[:4], *rows[-4:])):
        return None
    width = max(map(len, rows))
    starts = [0, *(k + 1 for k, row in enumerate(rows[:-1]) if len(row) < width)]
    if len(starts) > MAX_ROWS or (len(rows) - len(starts) < 2 and len(starts) > 1):
        return None  # (too many lines; or one row that goes on, not one line wrapped)
    ends = [*starts[1:], len(rows)]
    lines = ["".join(rows[a:b]) for a, b in zip(starts, ends, strict=True)]
    found = _direct(lines)
    if found is None:
        return None
    out, origin, decoded = found
    return out, [starts[k] for k in origin], decoded


def _held(row: str) -> list[str] | None:
    """The log rows an escaped row holds (its last DEFAULT_LINES, of which at least
    MIN_ROWS_HELD start as vLLM's rows do), or None."""
    text = row.strip()
    value = _decoded(text)
    if value is None:
        m = _KEY_VALUE.fullmatch(row)
        value = _decoded(m[1]) if m is not None else None
    if value is not None:
        held = [r for s in _strings(value) if "\n" in s for r in _split(s)[-DEFAULT_LINES:]]
    else:  # cut short (a worker or a reader kept part of it): at its items or escapes
        text = _last_escaped_lines(text)
        if (text[:2] in _LIST_ENDS or text[-2:] in _LIST_ENDS) and _ITEM_END.search(text):
            held = [_unescaped(item).removesuffix("\n") for item in _ITEM_END.split(text)]
        else:
            held = _split(_unescaped(text))
    held = held[-DEFAULT_LINES:]
    logged = filter(None, map(_LOG_ROW.match, held))
    if next(islice(logged, MIN_ROWS_HELD - 1, None), None) is None:
        return None
    return held


def _last_escaped_lines(text: str) -> str:
    """`text` from the escaped newline before its last DEFAULT_LINES rows on (all of it
    when it has fewer): a hostile row of 100,000 escapes is split 400 times, not 100,000."""
    at = len(text)
    for _ in range(DEFAULT_LINES):
        at = text.rfind("\\n", 0, at)
        if at < 0:
            return text
    return text[at + 2 :]


def _may_hold(row: str) -> bool:
    """Whether a row may be an escaped log: escaped newlines, or a list's repr."""
    return "\\n" in row or row.lstrip()[:2] in ("['", '["')


def _unescaped(text: str) -> str:
    """`text` with its backslash escapes read (where it holds one)."""
    return _ESCAPE.sub(_unescape, text) if "\\" in text else text


def _decoded(text: str) -> object | None:
    """`text` read as a JSON document or a Python literal (a list's or a string's repr);
    None where it is neither. Neither reader runs code; a deeply nested one gives up."""
    if text[:1] not in "{[\"'":
        return None
    value: object
    try:
        value = json.loads(text)
        return value
    except (ValueError, RecursionError):
        pass
    if len(text) > _LITERAL_CHARS:
        return None
    try:
        value = ast.literal_eval(text)
        return value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _strings(value: object) -> Iterator[str]:
    """Every string in a decoded value, in order (a dict's values, a list's items)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        if value and all(isinstance(v, str) and "\n" not in v.rstrip("\n") for v in value):
            # a list of lines (`readlines()`, a deque's repr): one row each
            yield "\n".join(v.rstrip("\n") for v in value) + "\n"
            return
        for item in value:
            yield from _strings(item)


def _split(text: str) -> list[str]:
    """`text`'s rows, without CR line ends and without an empty row after its last newline."""
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    return [r[:-1] if r.endswith("\r") else r for r in rows]


def _unescape(m: re.Match[str]) -> str:
    """One backslash escape as JSON (and a Python repr) writes it."""
    escape = m[0]
    if escape[1] in "ux":
        return chr(int(escape[2:], 16))
    return _ESCAPES[escape[1]]
