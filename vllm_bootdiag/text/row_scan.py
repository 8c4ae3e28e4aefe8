"""The clean-tail check for the common tail, read row by row in C and searched as few times
as its signs allow.

`damage_check`'s scans of the joined text each cost a pass over every character (3-18 us
for an average corpus tail of 11 KB), and a tail's signs are many. Most tails are vLLM's own
output, where every row starts with a process tag (`(APIServer pid=1) `), a record, a frame
or a traceback line. Here the rows are tested with `str.startswith` over the tuple of the
starts seen (in C; Python sees only the rows that start otherwise, and one row per tag),
which tells a wrapper at a row's start and the rows that may go on their predecessor (what
`normalize._rejoin` looks at), and gives the tags: taken off each row's start with one
`str.replace` per tag, they leave a text where every record, frame, traceback, argparse and
uvicorn line vLLM prints starts a line (or follows a record's head), so each sign needs one
search that finds nothing. Anything else (a wrapper, a sign elsewhere, more than a few tags)
is left to `damage_check`'s scans: this answers "clean" or "not sure", never "damaged".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import compress, count, repeat
from operator import not_

import regex

from .joined import Joined
from .wrappers import OTHER_PREFIX_AT_START, PIPE_PREFIX_AT_START, Lazy

TAG = r"\([A-Za-z][\w =.-]*? pid=\d+\)"
"""vLLM's process tag, as a line's head reads it."""
RECORD = (
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[[^\]\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+:\d+\]"
)
"""A record's prefix, level to source, as a line's head reads it."""
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
RECORD_INSIDE = re.compile(
    r"-(?<=\d\d-)(?:"
    + "|".join(rf"(?<={level} \d\d-)" for level in LEVELS)
    + ")"
    + "".join(rf"(?<!\n{level} \d\d-)" for level in LEVELS)
    + r"(?=\d\d \d\d:\d\d:\d\d)"
)
"""A record's level and timestamp anywhere but at a line's start, found by the dash in
its timestamp (a literal: one scan for all five levels, which an alternation of the
levels would try at every character); records never overlap. The match is the dash
alone, so `findall` lists one shared string per record, not a copy of each."""
FRAME_INSIDE = re.compile(r'File "(?<!\n  File ")')
"""A frame's `File "` anywhere but right after a line's two-space indent."""
CARET = Lazy(regex.escape("^[["))
"""Caret notation for ESC (`^[[0;36m`): `^` alone is common (a traceback's markers)."""
BARE_SGR_END = re.compile(r"\[0(?<!\x1b\[0)(?:;0)?m")
"""A colour reset (`[0m`, `[0;0m`) whose ESC byte was lost."""
SGR_END = Lazy(r"\[0(?:;0)?m")
"""The same in a text with no ESC byte at all: the `regex` module finds it faster."""

_RECORD_INSIDE_AT = (
    r"-(?<=\d\d-)(?:"
    + "|".join(rf"(?<=[^\n\x01]{level} \d\d-)" for level in LEVELS)
    + r")(?=\d\d \d\d:\d\d:\d\d)"
)
"""`RECORD_INSIDE` in the text with the tags taken off, where a \\x01 after a newline stands
for a tag: a record there is at its line's head (its level after a character that is
neither). The long way of `_RECORD_INSIDE`, which tests the tests in another order."""
_BY_FREQUENCY = ("INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL")
_RECORD_INSIDE = re.compile(
    "-"
    + "".join(rf"(?<![\n\x01]{level} \d\d-)" for level in _BY_FREQUENCY[:2])
    + r"(?<=\d\d-)"
    + "".join(rf"(?<![\n\x01]{level} \d\d-)" for level in _BY_FREQUENCY[2:])
    + "(?:"
    + "|".join(rf"(?<={level} \d\d-)" for level in LEVELS)
    + r")(?=\d\d \d\d:\d\d:\d\d)"
)
"""`_RECORD_INSIDE_AT`, its tests ordered so a record at a line's head (most of its stops:
every record of a clean tail is one) fails at the first: that its level follows a newline
or a \\x01, INFO's and WARNING's before the stamp's digits are read (a stop costs one
lookbehind, not six; the scan 12% less). The same places: at most one level ends right
before a dash (no level ends another), and the text starts with a newline, so a level
has a character before it."""
_FRAME_INSIDE = re.compile(r'"(?<=File ")(?<![\n\x01]  File ")')
"""`FRAME_INSIDE` there, found by its quote (a literal of one character, rarer than `F`)."""
_USAGE_OR_UVICORN = re.compile(
    r": (?:(?<=usage: )|    (?<=INFO:     )|    (?<=WARNING:     )|    (?<=ERROR:     ))"
)
"""argparse's `usage: ` or uvicorn's `INFO:     ` (`WARNING`, `ERROR`), in one scan by the
`: ` they share."""
_UVICORN_LEVEL = {"O": len("INFO"), "G": len("WARNING"), "R": len("ERROR")}
_CARET_OR_RESET = re.compile(r"\[(?:(?<=\^\[\[)|0(?:;0)?m)")
"""`CARET` or `SGR_END`, in one scan that stops at each `[` (led by a literal of one
character: half the cost of the two searches)."""
_TAG_AT = re.compile(r"(?:\x1b\[[0-9;]*m)*(" + TAG + r")(?:\x1b\[[0-9;]*m)*")
"""A row's process tag (coloured or not) and the tag itself, as the plain text has it."""
_OTHER_AT = re.compile(OTHER_PREFIX_AT_START.pattern.removeprefix("\\n"))
_FIRST = re.match(r"\\n\(\?=(\[[^\]]*\])\)", OTHER_PREFIX_AT_START.pattern)
_SAFE = frozenset(
    c for c in map(chr, range(256)) if _FIRST is not None and not re.match(_FIRST[1], c)
)
"""First characters no such wrapper starts with (its lookahead's class, read from it; none
if it has none): a row that starts with one is not matched."""
"""A wrapper other than a `|` gutter at a row's start (its `$` read as the row's end, so it
finds a wrapper wherever the joined text's search does, and a lone `>` row more)."""
_RECORD_HEAD = re.compile(RECORD + r"[ \t]*")
"""A line's head that is a record's prefix alone: what may stand before a frame or a
traceback line once the row's tag is taken off (`ERROR ... [core.py:1]   File ...`)."""
QUICK_STARTS = (
    "INFO ", "ERROR ", "WARNING ", "DEBUG ", "CRITICAL ", "Traceback (", "  ", "\x1b", '{"log"',
)  # fmt: skip
"""How a row that surely starts a line of its own begins (with a process tag within its
first 80 characters, or blank, it does too): told with string tests only."""
_STARTS = ("INFO ", "WARNING ", "ERROR ", '  File "', "Traceback (", "DEBUG ", "CRITICAL ",
           "\x1b[32mI", "\x1b[33mW", "\x1b[31mE")  # fmt: skip
"""Row starts that are quick ones (above) and no wrapper's (none begins with a character
`OTHER_PREFIX_AT_START` looks for, or its colour codes are followed by one no tool's prefix
starts with): vLLM's records, frames, tracebacks. Two spaces join them where no fence can be
in the text."""
MAX_TAGS = 16
"""The most row starts (process tags) added to the tuple: past them the tail is left to the
scans, so a row costs at most this many tests (a hostile tail of 400 names)."""
_FENCES = ("```", "~~~", "<details>", "</details>", "<summary>", "</summary>")
"""What `OTHER_PREFIX_AT_START` finds after a row's indent (its only wrappers that may
start with a blank, less the `|` gutters this check leaves to the scans)."""
_TRACEBACK = "Traceback (most recent call last)"


NO_BREAK_SPACE = "\xa0"
"""What a paste from a rendered page (a chat client, a web view of a log) puts for each
space: vLLM prints none, so a tail holding one is repaired (found at memchr speed)."""


def clean_rows(joined: Joined) -> list[int] | None:
    """The rows (past the first) that may go on their predecessor (see `slow_rows`) when
    the tail surely needs no per-line repair; None when that is not sure."""
    doc = joined.doc
    lines = joined.lines
    if lines is None or "␛" in doc or "\x01" in doc or NO_BREAK_SPACE in doc:
        return None
    if "|" in doc and PIPE_PREFIX_AT_START.search(doc) is not None:
        return None  # a `|` gutter at a line's start (a `|` elsewhere: a bar, a table)
    rows = _rows(lines, doc)
    if rows is None:
        return None
    tags, slow, starts = rows
    text = _untagged(joined, tags, starts)
    # Caret codes and bare resets, in the text without codes or tags: a code holds none of
    # either (its `[` follows an ESC, its body is digits and `;`), nor does a tag, and
    # neither holds a newline, so each one in `doc` is one there (a reset the strip made
    # is found there too: then the scans answer). No stop at each code's `[`.
    if _CARET_OR_RESET.search(text) is not None:
        return None
    joined.untagged = (text, tuple(tags))  # triage's scan reads it too
    if _RECORD_INSIDE.search(text) is not None:
        return None
    heads: dict[str, bool] = {}
    if '"' in text and not _frames_at_heads(text, heads):
        return None
    usages: list[int] = []
    if not _raw_at_heads(text, heads, usages):
        return None
    joined.usages = len(usages)
    return slow


def _untagged(joined: Joined, tags: list[str], starts: list[str] | None) -> str:
    """`joined.plain` with each tag and its space taken off every line that starts with it,
    `\x01` in its place (a tag after it then starts no line). Where the colour codes are
    the tags' alone (vLLM colours its tags), the coloured tags are taken off the text as it
    is, and no colour code is left to strip: the same text, without a pass of the pattern
    over every code (30 us on a coloured tail). `starts`: every tag as rows start with it,
    coloured or not (None where some are not known)."""
    doc = joined.doc
    if starts and "\x1b" in doc:
        text = doc
        for start in starts:
            text = text.replace("\n" + start + " ", "\n\x01")
        if "\x1b" not in text:  # each row is a coloured tag and a plain rest, or plain
            return text
    text = joined.plain
    for tag in tags:
        text = text.replace("\n" + tag + " ", "\n\x01")
    return text


def _rows(lines: Sequence[str], doc: str) -> tuple[list[str], list[int], list[str] | None] | None:
    """(the process tags rows start with, as in the plain text; the slow rows; the tags as
    rows start with them, coloured or not, None where one is not passed over, or where a
    row that a new tag starts holds colour codes past it: a tail coloured all through,
    whose tags taken off the coloured text would leave codes, and `_untagged` strip the
    codes after all), or None where a row may start with a wrapper or the tags are too
    many. Each row is tested once: a new start to pass over goes into the tuple, and the
    rows after it are tested with the new tuple, by the same iterator."""
    starts: tuple[str, ...] = _STARTS
    seen: set[str] = set()
    long_tag = coloured = False
    tags: dict[str, None] = {}
    slow: list[int] = []
    it = iter(lines)
    k = -1
    while True:
        # the rows that start otherwise, by one iterator: a new start tests the rows after
        misses = compress(count(k + 1), map(not_, map(str.startswith, it, repeat(starts))))
        for k in misses:
            t = lines[k]
            c = t[:1]
            if c == " " or c == "\t" or c == "<":
                # `_OTHER_AT` on such a row is a fence after its indent (no tool's prefix
                # starts with a blank or `<`): each fence holds one of three characters,
                # found at memchr speed, and the indent is stripped (a copy of the row) only
                # where one is there (a 1 us match less for each `<venv>/...` or ` - ` row)
                if ("`" in t or "~" in t or "<" in t) and t.lstrip(" \t").startswith(_FENCES):
                    return None
                if c == " " and t[1:2] == " ":
                    continue  # quick (two spaces)
            else:
                if c == "(" or c == "\x1b":
                    m = _TAG_AT.match(t)
                    if m is not None:
                        tags[m[1]] = None
                        if m[0] not in seen and (c == "\x1b" or t.find(" pid=", 0, 80) >= 0):
                            if len(seen) == MAX_TAGS:
                                return None
                            seen.add(m[0])
                            starts = (m[0], *starts)
                            # codes past the tag: its row's other codes are the text's too
                            coloured = coloured or "\x1b" in t[m.end() :]
                            break  # (a quick row: a tag, or a colour code)
                        long_tag = long_tag or m[0] not in seen  # (` pid=` past 80 characters)
                if c not in _SAFE and _OTHER_AT.match(t) is not None:
                    return None  # (a `{"log"` row too: a quick start, but a wrapper's)
            # slow, as `slow_row` says: no quick start is left but a colour code's
            if k and c != "\x1b" and not (c == "(" and " pid=" in t[:80]) and t.strip():
                slow.append(k)
        else:
            return list(tags), slow, None if long_tag or coloured else list(seen)


def slow_row(t: str) -> bool:
    """Whether row `t` may go on its predecessor: it is not blank and does not start
    quickly (as `QUICK_STARTS` says, or with a process tag)."""
    return (
        not t.startswith(QUICK_STARTS)
        and not (t[:1] == "(" and " pid=" in t[:80])
        and bool(t.strip())
    )


def slow_rows(texts: Sequence[str]) -> list[int]:
    """The rows (past the first) for which `slow_row` holds, tested in C with
    `str.startswith`: each tagged row not passed over adds its tag's head (`(APIServer
    pid=`) to the tuple, so the rows with that tag after it are passed over too."""
    starts: tuple[str, ...] = QUICK_STARTS
    it = iter(texts)
    next(it, None)  # the first row goes on no predecessor
    slow: list[int] = []
    added = k = 0
    while True:
        misses = compress(count(k + 1), map(not_, map(str.startswith, it, repeat(starts))))
        for k in misses:
            t = texts[k]
            if t[:1] == "(" and (p := t.find(" pid=", 0, 80)) >= 0:
                if added < MAX_TAGS:
                    added += 1
                    starts = (t[: p + 5], *starts)
                    break
            elif t.strip():
                slow.append(k)
        else:
            return slow


def _record_head(text: str, pos: int, heads: dict[str, bool]) -> bool:
    """Whether only a record's prefix (and blanks) stands between `pos` and its line's start:
    with the row's tag taken off, the head a frame or a traceback line may follow."""
    before = text[text.rfind("\n", 0, pos) + 1 : pos].removeprefix("\x01")
    known = heads.get(before)
    if known is None:
        known = heads[before] = _RECORD_HEAD.fullmatch(before) is not None
    return known


def _frames_at_heads(text: str, heads: dict[str, bool]) -> bool:
    """Every frame's `File "` starts a line after two spaces, or follows a record's head
    and three spaces. Each line's text before its frame is judged once (a traceback that
    a record logged repeats one head on every frame: 71 of them in a corpus tail cost the
    test of each 0.6 us), kept apart from `heads` (which `_record_head` keys by the text
    before a record head's end, not a frame's)."""
    seen: dict[str, bool] = {}
    for m in _FRAME_INSIDE.finditer(text):
        p = m.start() - 5  # (the quote's match: `File "` starts five before it)
        before = text[text.rfind("\n", 0, p) + 1 : p]
        known = seen.get(before)
        if known is None:
            known = seen[before] = before[-4:] == "]   " and _record_head(
                before, len(before) - 3, heads
            )
        if not known:
            return False
    return True


def _raw_at_heads(text: str, heads: dict[str, bool], usages: list[int] | None = None) -> bool:
    """Every traceback's first line, argparse's `usage: ` and uvicorn's line starts a line
    or follows a record's head. The traceback's found by `str.find` (few are there, a long
    needle, each search resumes), the others by one scan; `usages` gets where each `usage: `
    is (the scan finds every one)."""
    p = text.find(_TRACEBACK)
    while p >= 0:
        if text[p - 1] not in "\n\x01" and not _record_head(text, p, heads):
            return False
        p = text.find(_TRACEBACK, p + 1)
    for m in _USAGE_OR_UVICORN.finditer(text):
        p = m.start()
        if text[p - 5 : p] == "usage":
            p -= 5
            if usages is not None:
                usages.append(p)
        else:
            p -= _UVICORN_LEVEL[text[p - 1]]
        if text[p - 1] not in "\n\x01" and not _record_head(text, p, heads):
            return False
    return True
