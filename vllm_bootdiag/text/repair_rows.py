"""Which rows of a damaged tail a per-line repair step can change: the others pass as they are.

A tail the clean-tail check calls damaged often holds one damaged row among hundreds (a
run-on line at its end, a paste's one quoted line). `normalize._per_line` on every row costs
3-5 us a row (the collapsed-record search most), so such a tail paid a whole-tail repair.
Here each step's own first condition is tested for all rows at once, in C: a literal that
step needs (found in the joined text, then its row), a wrapper only where a row's first
character allows one, and a record, frame, traceback, argparse or uvicorn line past a row's
head. What is left out is a row no step changes, as each step's code says (see each test);
tests/test_repair_rows.py holds the rows repaired this way to every row through the steps.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate, compress, count, repeat
from operator import contains, not_

from .joined import Joined
from .row_scan import LEVELS, NO_BREAK_SPACE, RECORD, TAG
from .wrappers import _NAMED_PREFIX

_MAX_TEXT = 65536
"""A longer text goes through the steps row by row (where its scans would cost a hostile
text more than they save)."""

_CARET = re.compile(r"\^\[\[")
_RESET = re.compile(r"\[0(?<!\x1b\[0)(?:;0)?m")
"""caret_ansi's signs (`ansi_text` changes a row only with `^[[` or `␛[` in it, or, where it
holds no ESC, a `[0m` or `[0;0m`): a caret code, and a reset that no ESC leads."""
_SIGNS: tuple[tuple[str, str, re.Pattern[str] | None], ...] = (
    (NO_BREAK_SPACE, NO_BREAK_SPACE, None),  # (every row that holds one)
    ("␛", "␛[", None),
    ("^", "^[[", _CARET),
    ("[", "[0", _RESET),
)
"""The literal signs: (a character each holds, two that it holds, its pattern, or None where
the two are all of it). Most tails hold neither pair: each is found at C speed."""
_FENCES = ("```", "~~~", "<details>", "</details>", "<summary>", "</summary>")
"""How a row that `FENCE` matches starts, after its blanks."""
_MONTHS = ("Jan ", "Feb ", "Mar ", "Apr ", "May ", "Jun ", "Jul ", "Aug ", "Sep ", "Oct ",
           "Nov ", "Dec ")  # fmt: skip
_QUICK = (
    "(", "INFO ", "ERROR ", "WARNING ", "DEBUG ", "CRITICAL ", "INFO:", "WARNING:", "ERROR:",
    "Traceback ", "  File ", " - ", "\x1b[0;36m(", "\x1b[1;36m(", "\x1b[32mINFO ",
    "\x1b[33mWARNING ", "\x1b[31mERROR ",
)  # fmt: skip
"""Row starts (tested in C) that no wrapper, fence or json-file record begins with. A
wrapper begins with a digit, a blank, `|`, `[`, `>`, an ESC or a letter: after blanks
only a gutter's (a digit or `|` next); after colour codes only compose's (a letter or a
digit) or stern's (a small letter or a digit); with a capital only compose's (a word of
`[\\w.-]`, `-N`, blanks, then `|`) or journald's (a month and a space). A level (or
`Traceback`) and a space or a colon is none of these, nor vLLM's coloured tags and levels."""

_TAG_LINE = re.compile(r"\n(" + TAG + ") ")
"""A row that starts with a process tag and a space."""
_MAX_TAGS = 16
_RECORD_INSIDE = re.compile(
    r"-(?<![\n\x01]INFO \d\d-)(?<=[GORL] \d\d-)(?:"
    + "|".join(rf"(?<=[^\n\x01]{level} \d\d-)" for level in LEVELS)
    + r")(?=\d\d \d\d:\d\d:\d\d)"
)
"""A record's level and stamp (what `collapsed._RECORD` needs, less its source), found by
its stamp's dash, but at a row's start or right after a tag taken off (`\x01`). An INFO
record there (most of the stops) fails at the first test, which leaves out nothing more."""
_UVICORN_INSIDE = re.compile(
    ":     (?:"
    + "|".join(rf"(?<=[^\n\x01]{lv}:     )" for lv in ("INFO", "WARNING", "ERROR"))
    + ")"
)
"""uvicorn's line (`INFO:     `), but at a row's start or right after a tag taken off."""
_LEVEL_BY_END = {level[-2:]: len(level) for level in LEVELS}
_UVICORN_LEVEL = {"O": len("INFO"), "G": len("WARNING"), "R": len("ERROR")}
_FRAME_INSIDE = re.compile(r'"(?<=File ")(?<![\n\x01]  File ")')
_RAW = ("usage: ", "Traceback (most recent call last):")
"""argparse's line and a traceback's header (each a literal, searched at C speed)."""
"""A frame's `File "` (`collapsed._FRAME` starts so), but after a row's two-space indent."""

_LED = r"(?:\x01|[ \t]*(?:" + TAG + r" ?)?)"
_LED_RECORD = re.compile(_LED + r"[ \t]*")
_LED_OTHER = re.compile(_LED + "(?:" + RECORD + r")?[ \t]*")
"""What may stand before a start that `split_collapsed` does not cut at (`\x01`: a tag and
its space). Its head (`_HEAD_BUT_BLANKS`, the same tag and record) takes all of a text
these match, and the blanks after the head take the rest (a record begins with no blank),
so the start is where the line's message starts: passed over as the line's own, where the
head holds no record, or where it is no record itself. One start alone there cuts nothing,
and a second in the row is led by the first, not by these."""


def rows_to_repair(raw: Sequence[str], joined: Joined) -> list[int] | None:
    """The rows (indices into `raw`, ascending) that a per-line step may change, each
    found by a condition that step needs; None where not worked out (a long text, one
    whose joined text is not `raw` joined, a row that holds a newline): then any row may."""
    doc = joined.doc
    if len(doc) >= _MAX_TEXT or joined.lines is not raw:
        return None  # (a text made of other rows than these: a caller's mistake)
    found = _may_be_cut(raw, joined)
    if found is None:
        return None
    starts: list[int] | None = None
    for first, lit, scan in _SIGNS:
        if first not in doc or lit not in doc:  # (memchr first: a search costs 10-40x more)
            continue
        if starts is None:
            starts = list(accumulate(map((1).__add__, map(len, raw)), initial=1))
        if scan is None:
            p = doc.find(lit)
            while p >= 0:
                k = bisect_right(starts, p) - 1
                found.add(k)
                p = doc.find(lit, starts[k + 1])
        else:
            found.update(bisect_right(starts, m.start()) - 1 for m in scan.finditer(doc))
    _by_row_start(raw, found)
    return sorted(found)


def _by_row_start(raw: Sequence[str], found: set[int]) -> None:
    """Adds the rows that `strip_prefixes`, the fence step or the json-file step may change:
    each needs a start of its own; `_NAMED_PREFIX` is matched only where a row's start
    allows a wrapper."""
    for k in compress(count(), map(not_, map(str.startswith, raw, repeat(_QUICK)))):
        t = raw[k]
        c = t[:1]
        if c == "{":
            if '"log"' in t or '"MESSAGE"' in t:  # (what `json_log` reads, behind no wrapper)
                found.add(k)
        elif c in " \t`~<":
            s = t.lstrip(" \t")
            if s.startswith(_FENCES):
                found.add(k)
            elif c in " \t" and ("|" in t or s[:1].isdecimal()) and _NAMED_PREFIX.match(t):
                found.add(k)  # (after blanks, only a gutter: a digit or `|`)
        elif c.isalnum() or c in "|[>\x1b":
            if c.isupper() and c.isascii() and "|" not in t and not t.startswith(_MONTHS):
                continue
            if c == "[" and t[1:2].isupper() and t[1:2].isascii() and t[1:2] != "S":
                continue  # (`[Gloo] `: a bracket's stamp, pod or stage would follow)
            if _NAMED_PREFIX.match(t) is not None:
                found.add(k)


def _may_be_cut(raw: Sequence[str], joined: Joined) -> set[int] | None:
    """Rows `split_collapsed` may cut: each holds a start (a record, uvicorn's or argparse's
    line, a traceback header, a frame) that blanks, a process tag and (but before a record)
    a record's head alone do not lead, in the row without colour codes (as the step reads
    it). Read in that text with each row's tag and its space taken off (`\x01` in their
    place), where most starts follow a `\x01` or a newline, and the scans pass over them."""
    plain = joined.plain
    if "\x01" in plain:
        return None
    untagged = joined.untagged
    if untagged is not None:
        text = untagged[0]
    else:
        text = plain
        for tag in list(dict.fromkeys(_TAG_LINE.findall(plain)))[:_MAX_TAGS]:
            text = text.replace("\n" + tag + " ", "\n\x01")
    if any(map(contains, raw, repeat("\n"))):
        return None  # (a row that held a newline)
    at: list[tuple[int, bool]] = []  # (where a start is, whether it is a record)
    if "-" in text:
        for m in _RECORD_INSIDE.finditer(text):
            p = m.start() - 3
            at.append((p - _LEVEL_BY_END[text[p - 2 : p]], True))
    if ":     " in text:
        for m in _UVICORN_INSIDE.finditer(text):
            at.append((m.start() - _UVICORN_LEVEL[text[m.start() - 1]], False))
    for lit in _RAW:
        p = text.find(lit)
        while p >= 0:
            if text[p - 1] not in "\n\x01":
                at.append((p, False))
            p = text.find(lit, p + 1)
    if '"' in text:
        at.extend((m.start() - 5, False) for m in _FRAME_INSIDE.finditer(text))
    rows: set[int] = set()
    led: dict[tuple[str, bool], bool] = {}
    line, upto = 0, 0  # (the newlines counted up to `upto`: the row is the count less one)
    for p, record in sorted(at):
        start = text.rfind("\n", 0, p) + 1
        key = (text[start:p], record)
        known = led.get(key)
        if known is None:
            known = led[key] = (_LED_RECORD if record else _LED_OTHER).fullmatch(key[0]) is not None
        if not known:
            line += text.count("\n", upto, start)
            upto = start
            rows.add(line - 1)
    return rows
