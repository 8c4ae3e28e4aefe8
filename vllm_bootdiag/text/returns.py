"""Carriage returns inside a line: a progress bar's redraws, or the ends of its lines.

A lone `\\r` is two things in the logs users hand over. tqdm redraws one line with it (vLLM
loading weights, capturing CUDA graphs): a terminal shows the last frame, and so do we. A
log saved with classic-Mac line ends, or a terminal capture that kept only the carriage
returns, ends every line with it: the whole log is one "line" of records, and reading it
as redraws keeps only its last row (30 of 38 corpus logs so converted lost their answer).

They are told apart by what lies between the returns. A bar's frame holds its bar or its
rate (`%|`, `/s]`, `/it]`: `45%|###`, `1.5it/s]`, `2.1s/it]`, `220MB/s]`); a line holding
two parts that are neither blank nor a frame (among its first and last four: a log's lines
are there, and a test of every part cost 400 lines of 4,000 frames 200 ms) is lines, not
redraws, and is split at every `\\r`. There a run of frames is still a bar redrawn, and only
its last frame is a row, as in a line of redraws; a blank part or a bare process tag before
a frame is drawn over too (vLLM writes its tag at a line's start, tqdm starts a frame with
`\\r`). Every other `\\r` ends a line, as a `\\n` would: a run of them holds empty lines, as
an editor shows them, and a `\\r` at the end ends the last line. So a log's rows are those of
the log with newlines, its empty lines too, and evidence cites the lines the user sees
(tests/test_carriage_returns.py: every corpus log).

No test takes a Python step per part where a line has many: a line of 16 KB holds 8,000
parts, a tail 3 million. Each runs per part in C (`map`, `compress`), at memchr speed, or
on the first four parts alone.
"""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import and_, contains, not_, or_, truth

_MARKS = ("%|", "/s]", "/it]")
"""What a bar's frame holds: its bar (`45%|###`), its rate (`1.5it/s]`, `2.1s/it]`,
`220MB/s]`)."""
_TAG_ONLY = re.compile(r"[^\S\r]*\([^()\r]{0,300}\)[^\S\r]*")
"""A part that is only a process tag (vLLM writes one at the start of a line)."""


def _frames(parts: list[str]) -> list[bool]:
    """Which parts are frames (each test run per part in C: a Python step per part cost a
    line of 8,000 parts 2 ms)."""
    a, b, c = (list(map(contains, parts, repeat(mark))) for mark in _MARKS)
    return list(map(or_, map(or_, a, b), c))


def _holds_mark(line: str) -> bool:
    """`any(mark in line for mark in _MARKS)`, each mark's last character looked for first:
    one character is a memchr, where a longer needle is a loop over every character (16 KB
    of `\\r` cost the three searches 30 us a line, 400 lines 38 ms of a 50 ms bound)."""
    return ("%" in line and "%|" in line) or ("]" in line and ("/s]" in line or "/it]" in line))


def _is_frame(part: str) -> bool:
    return "%|" in part or "/s]" in part or "/it]" in part


def ends_lines(line: str) -> bool:
    """Whether the `\\r` in `line` end lines: two of its parts are not blank and not frames."""
    if not _holds_mark(line):
        # No frame at all: two parts are not blank where a `\r` after the first character
        # that is not white space comes before the last one (three scans at memchr speed).
        start = len(line) - len(line.lstrip())
        cr = line.find("\r", start)
        return 0 <= cr < len(line.rstrip())
    # A log's lines show in its first and last parts (a log of carriage returns starts with
    # vLLM's first records and ends with its last); a bar's frames are every part of it.
    # The parts between are not read: a test per part costs a 16 KB line of 4,000 frames
    # 0.5 ms even in C, and 400 such lines 200 ms (issue 10 bounds a tail at 50).
    found, start = 0, 0
    for _ in range(_ENDS):
        end = line.find("\r", start)
        part = line[start:] if end < 0 else line[start:end]
        if part.strip() and not _is_frame(part):
            found += 1
            if found == 2:
                return True
        if end < 0:
            return False
        start = end + 1
    stop = len(line)
    for _ in range(_ENDS):
        cr = line.rfind("\r", start - 1, stop)
        if cr < start - 1:
            return False  # (the parts met: each was read once)
        part = line[cr + 1 : stop]
        if part.strip() and not _is_frame(part):
            found += 1
            if found == 2:
                return True
        stop = cr
    return False


_ENDS = 4
"""Parts read at each end of a line that holds a bar's mark."""


def read(out: list[str], lines: int | None) -> tuple[list[str], int]:
    """The last `lines` rows of `out`, each line holding a `\\r` read as its last redraw
    or as the lines it holds (`rows`), and how many rows come before them: lines
    are read from the end, and only counted once enough rows are kept."""
    got: list[list[str]] = []
    taken = 0
    at = len(out)
    while at > 0 and (lines is None or taken < lines):
        at -= 1
        line = out[at]
        if "\r" in line:
            part, n = rows(line, None if lines is None else lines - taken)
            got.append(part)
            taken += len(part)
            before = n - len(part)
            if before:
                break
        else:
            got.append([line])
            taken += 1
    else:
        before = 0
    before += sum(rows_in(line) if "\r" in line else 1 for line in out[:at])
    return [row for part in reversed(got) for row in part], before


def rows(line: str, last: int | None = None) -> tuple[list[str], int]:
    """What a line holding `\\r` reads as, its last redraw or its lines (a `\\r` at its end
    ends its last line, as a `\\n` at the end of a text does): the last `last` of those rows
    (all when None) and how many there are."""
    if not ends_lines(line):
        return [last_redraw(line)], 1
    parts = _parts(line) if "\r\r" in line and ".py:" in line else None
    if not _holds_mark(line):
        if parts is None:
            if line.endswith("\r"):
                line = line[:-1]  # (the last line's end)
            count = line.count("\r") + 1
            if last is None or last >= count:
                return line.split("\r"), count
            return line.rsplit("\r", last)[1:], count
        kept = parts
    else:
        if parts is None:
            parts = line.split("\r")
            if line.endswith("\r"):
                parts.pop()
        frames = _frames(parts)
        # A part a frame after it draws over goes: a frame (the bar redrawn), a blank part or
        # a bare process tag. Only a part that is not a frame before one is looked at alone.
        after = [*frames[1:], False]
        over = list(map(bool, map(min, frames, after)))  # a frame before a frame
        for i in compress(range(len(parts)), map(min, map(not_, frames), after)):
            over[i] = not parts[i].strip() or _TAG_ONLY.fullmatch(parts[i]) is not None
        kept = list(compress(parts, map(not_, over)))
    if last is None or last >= len(kept):
        return kept, len(kept)
    return (kept[-last:] if last else []), len(kept)


def rows_in(line: str) -> int:
    """How many rows a line holding `\\r` is, each part one where they are lines (a bar's
    frames too, as an editor numbers them: only the rows kept are drawn over, which costs a
    line of 8,000 parts 3 ms), an empty one too, less the one after a `\\r` at the end."""
    if not ends_lines(line):
        return 1
    if "\r\r" in line and ".py:" in line:
        return len(_parts(line))
    return line.count("\r") + 1 - line.endswith("\r")


_SOURCE = re.compile(r"\.py:\d{1,6}\]")
"""A logger record's source, `[file.py:N]` (its `]`)."""


def _parts(line: str) -> list[str]:
    """`line` split at its returns, none after the last one (the last line's end), and the
    empty part dropped between a logger record and a part that is not empty (or the end):
    two returns after a record end it, a copy of vLLM's `\\r\\n` (its engine's records, in
    162 of 226 corpus logs) that kept the `\\r` of both (a terminal's capture, a `\\n` made
    `\\r`). Elsewhere they are a line end and an empty line, as an editor shows them: the
    empty lines vLLM's boots print are a traceback's, after an exception's line or Python's
    `During handling of the above exception ...`, never after a record. Each test runs per
    part in C; a Python step is taken only for an empty part after a part holding `.py:`."""
    parts = line.split("\r")
    if line.endswith("\r"):
        parts.pop()
    full = list(map(truth, parts))
    ends = [*full[2:], True]  # (part i+1 is not empty, or i is the last part)
    py = map(contains, parts, repeat(".py:"))
    pairs = list(map(and_, map(not_, full[1:]), map(and_, py, ends)))  # (i - 1 for part i)
    drop = list(
        compress(compress(range(1, len(parts)), pairs), map(_SOURCE.search, compress(parts, pairs)))
    )
    if not drop:
        return parts
    keep = [True] * len(parts)
    for i in drop:
        keep[i] = False
    return list(compress(parts, keep))


def last_redraw(line: str) -> str:
    """The text a terminal shows for a line redrawn with carriage returns."""
    if "\r" not in line:
        return line
    # The last of its `\r`-parts that is not blank (what `[p for p in line.split("\r") if
    # p.strip()][-1]` says, without a step per part: 16 KB of `\r` cost that 0.8 ms): the
    # part that holds the line's last character that is not white space.
    last = len(line.rstrip())  # (`\r` is white space: trailing blank parts go too)
    if last == 0:
        return ""
    end = line.find("\r", last)
    return line[line.rfind("\r", 0, last) + 1 : end if end >= 0 else len(line)]
