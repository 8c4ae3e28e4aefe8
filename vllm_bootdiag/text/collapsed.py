"""Records run together on one line (a paste lost its newlines): where to cut it.

A line is cut before each record, uvicorn or argparse line, traceback header and frame
that comes after its own head. As one alternation, these starts were tried at every
character of the line (0.1-2.5 ms on a 16 KB line, so 40 ms to a second for a 400-line
tail behind a CI gutter). Here each kind of start is found by a pattern that begins with
a literal (a record by the dash of its timestamp), the leftmost wins, and a process tag
right before a record is taken into the cut: the same cuts, each kind's search once over
the line.
"""

from __future__ import annotations

import re
from functools import cache, cached_property

from . import exception_names
from .damage_check import HEAD
from .logline import strip_codes
from .wrappers import Lazy

_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_BLANKS_AFTER = r"[ \t]*"
assert HEAD.pattern.endswith(_BLANKS_AFTER)
_RECORD = re.compile(
    r"-(?<=[GORL] \d\d-)(?=\d\d \d\d:\d\d:\d\d)(?:"
    + "|".join(rf"(?<={level} \d\d-)" for level in _LEVELS)
    + r")\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \["
    + r"[^\]\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+:\d+\]"
)
"""A record's prefix, level to source, found by the dash of its timestamp. The source is
anything but `]` and what the `regex` module calls a space (`re`'s `\\s` also has
U+001C-U+001F), as the step's first pattern, in the `regex` module, read it. At each
dash the cheapest tests come first, each implied by what follows: a level's last letter
five characters back, then the rest of the stamp, then the level itself (16 KB of
`01-`, `INFO 01-02 03:` or `01-01 01:01:01 ` behind a gutter: 43-72 us a line, not
57-250)."""
_SOURCE = r"[^\]\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+:\d+\]"


@cache
def _record_by_second_colon() -> re.Pattern[str]:
    """`_RECORD` found by the second colon of its time (`INFO 01-02 03:04:`): for a long
    line dense in dashes, where a stop at each costs more than one at each colon whose
    lookbehind fails at its first test (16 KB runs of `INFO 01-02 03:` behind a gutter).
    Compiled on first use: only such a line needs it."""
    return re.compile(
        r":(?<=[GORL] \d\d-\d\d \d\d:\d\d:)(?=\d\d)(?:"
        + "|".join(rf"(?<={level} \d\d-\d\d \d\d:\d\d:)" for level in _LEVELS)
        + r")\d\d(?:[.,]\d+)? \["
        + _SOURCE
    )


_LEVEL_BY_END = {level[-2:]: len(level) for level in _LEVELS}
"""How long the level before a record's timestamp is, by its last two letters."""
_UVICORN = re.compile(r":     (?:(?<=INFO:     )|(?<=WARNING:     )|(?<=ERROR:     ))")
_UVICORN_LEVEL = {"O": len("INFO"), "G": len("WARNING"), "R": len("ERROR")}
"""How far before its `:` uvicorn's line starts, by the level's last letter."""
_USAGE = re.compile(r"usage: ")
_TRACEBACK = Lazy(r"Traceback \(most recent call last\):")
_FRAME = re.compile(r"File \"[^\"\n]{1,400}\", line \d+, in ")
_FRAME_END = re.compile(r'", line ')
"""Where a frame's path ends: a literal, searched in a long line without a stop at each
`File "` (16 KB of them: 140 us for the frame's pattern, 4 for this), and a frame starts
at most 406 characters before it."""
_TAG = Lazy(r"\([A-Za-z][\w =.-]{0,60}? pid=\d+\) ?")
"""vLLM's process tag before a record: a cut goes before it."""
_RECORD_AT = Lazy(r"(?:\([^)]{0,80}\) ?)?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-")
"""A record (its process tag included) at a start: the message of an empty record before it
is not this record (a banner's blank row is a line of its own)."""
_LEVEL_STARTS = tuple(f"{level} " for level in _LEVELS)


def _record_at(text: str, at: int) -> bool:
    """`_RECORD_AT.match(text, at)`: its tag opens with `(`, and without one the record
    opens with a level and a space, told by `str.startswith` (a line of 1,500 uvicorn
    starts asks at each of them)."""
    if text[at : at + 1] != "(" and not text.startswith(_LEVEL_STARTS, at):
        return False
    return _RECORD_AT.match(text, at) is not None


_HEAD_BUT_BLANKS = re.compile(HEAD.pattern.removesuffix(_BLANKS_AFTER))
_BLANKS = re.compile(_BLANKS_AFTER)
"""`HEAD` is `_HEAD_BUT_BLANKS` then `_BLANKS` (which always matches, so the match never
goes back into the head): the blanks after a head are read only where a `:` or `"` comes
after them (a record of 16 KB of blanks, a paste's no-break spaces made spaces: 15 us)."""
_KINDS = (_RECORD, _UVICORN, _USAGE, _TRACEBACK, _FRAME)
_HOLDS = ("", ":", "u", "(", '"')
"""A character each kind's match holds (at or after where it starts): a line without one
from a position on holds no such match there, found at memchr speed (16 KB of stamps: 0.1
us, where the search for `usage: ` costs 7 and a frame's 5)."""


def _record_end(text: str) -> int:
    """Where the last record in `text` may end: after its last `]` with a digit before it
    (`\\d` is one of `str.isdigit`'s). Eight `]` without one are stepped over at most,
    then the next `]` is taken as it is: the end of its run, at memchr speed."""
    end = text.rfind("]")
    for _ in range(8):
        if end <= 0 or text[end - 1].isdigit():
            break
        end = text.rfind("]", 0, end)
    return end + 1


class _Starts:
    """The starts in one line, found from a position on. Each kind's next match is kept:
    positions only grow, so each kind's search runs over the line once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.record_end = _record_end(text)
        """A record ends with its source's `:N]`: none is searched for past the last `]`
        after a digit (a 16 KB run of `ERROR 01-02 03:04:05 [` has 745 stamps, each a stop,
        and no `]`, or one after the last `[`)."""
        self.found: list[tuple[int, int] | None] = [(-1, -1)] * len(_KINDS)
        self.live = list(range(len(_KINDS)))
        """The kinds still found further on: one found no more is not looked at again
        (a line of records run together asks 188 times)."""

    @cached_property
    def by_colon(self) -> bool:
        """Records are found by their time's second colon (see `_record_by_second_colon`);
        worked out where a record is looked for (a line with no `]` holds none)."""
        return len(self.text) >= 1024 and self.text.count("-") * 16 >= len(self.text)

    def _first(self, k: int, pos: int) -> tuple[int, int] | None:
        """(start, end) of kind k's first match that starts at `pos` or later."""
        text, pattern = self.text, _KINDS[k]
        if pattern is _RECORD and self.record_end <= pos:
            return None
        if _HOLDS[k] and text.find(_HOLDS[k], pos) < 0:
            return None
        stop = self.record_end if pattern is _RECORD else len(text)
        # (a short stretch is searched by the dash: the count that picks the colon costs a
        # 16 KB line more than the stretch, as a `]` near its start leaves one)
        by_colon = pattern is _RECORD and stop - pos >= 1024 and self.by_colon
        if by_colon:
            pattern = _record_by_second_colon()
        if pattern is _FRAME and len(text) >= 1024:
            end = _FRAME_END.search(text, pos)
            if end is None:
                return None
            pos = max(pos, end.start() - 406)  # a frame's `", line ` is within 406 of it
        m = pattern.search(text, pos, stop)
        while m is not None:
            at = m.start()
            if by_colon:  # the second colon: the level ends twelve characters before
                at -= 12 + _LEVEL_BY_END[text[at - 14 : at - 12]]
            elif pattern is _RECORD:  # the dash: the level ends three characters before
                at -= 3 + _LEVEL_BY_END[text[at - 5 : at - 3]]
            elif pattern is _UVICORN:
                at -= _UVICORN_LEVEL[text[at - 1]]
            if at >= pos:
                return at, m.end()
            m = pattern.search(text, m.start() + 1, stop)
        return None

    def next(self, pos: int) -> tuple[int, int] | None:
        """(start, end) of the leftmost start at `pos` or later, a process tag before a
        record, uvicorn's or argparse's line included (the tag cannot hold a start: its
        name has no `:`, `"` or `(`, and every start has one of them before it ends)."""
        best: tuple[int, int] | None = None
        gone = False
        for k in self.live:
            hit = self.found[k]
            if hit is not None and hit[0] < pos:
                hit = self.found[k] = self._first(k, pos)
            if hit is None:
                gone = True
            elif best is None or hit[0] < best[0]:
                best = hit
        if gone:
            self.live = [k for k in self.live if self.found[k] is not None]
        if best is None or (best[0] > 0 and self.text[best[0] - 1] not in ") "):
            return best
        at = best[0]
        tag = self.text.rfind("(", pos, at)
        if tag >= 0 and self.text[at] not in "TF" and _TAG.fullmatch(self.text, tag, at):
            return tag, best[1]
        return best


def split_collapsed(text: str) -> list[str] | None:
    """Cut a line at each record start after its own: the newlines a paste lost."""
    if "\x1b" in text:
        if ":" not in text and '"' not in text:
            return None  # (as below: the codes' strip takes characters away, adds none)
        text = strip_codes(text)  # only a line that is cut comes back without them
    head = _HEAD_BUT_BLANKS.match(text)
    pos = head.end() if head is not None else 0
    if text.find(":", pos) < 0 and text.find('"', pos) < 0:
        return None  # every start holds one (found at memchr speed: a search is slower)
    pos = _BLANKS.match(text, pos).end()  # type: ignore[union-attr]  # (`[ \t]*` matches)
    starts = _Starts(text)
    m = starts.next(pos)
    if m is not None and m[0] == pos and not (head and head["level"] and _record_at(text, pos)):
        m = starts.next(m[1])  # the line's own start, unless it is a record after a record
    if m is None:
        return None
    parts: list[str] = []
    start = 0
    while m is not None:
        cut, end = m
        part = text[start:cut].rstrip()
        if part.strip():
            parts.append(part)
        start = cut
        m = starts.next(end)
        if (
            m is not None
            and not text[end : m[0]].strip()
            and text[cut] != "T"
            and not _record_at(text, m[0])
        ):
            m = starts.next(m[1])  # a record's own message: `Traceback ...`, not a record
    parts.append(text[start:])
    return lines_of(parts)


def lines_of(parts: list[str]) -> list[str] | None:
    """The lines a cut line comes back as: a frame indented as a traceback's, and the
    exception's line that ran on after it on a line of its own; None if it is one line."""
    out: list[str] = []
    for part in parts:
        if part.startswith('File "'):
            part = "  " + part
            # an exception's line, `(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|...): `, found
            # without the pattern's backtracking (a 16 KB frame of `A.`: a minute)
            exc = exception_names.search(part, part.find(", in ") + 5)
            if exc is not None:
                out.extend((part[: exc[0]].rstrip(), part[exc[0] :]))
                continue
        out.append(part)
    return out if len(out) > 1 else None
