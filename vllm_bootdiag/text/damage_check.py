"""Is a tail clean? One check over the joined text, before any per-line repair runs.

Most tails are what vLLM printed (coloured or not): for them normalize skips every
per-line step, and this check is all it costs. It must never call a damaged tail
clean: it looks for every sign a per-line step acts on (a wrapper at a line start,
caret or bare ANSI, a record, a traceback header or a frame anywhere but right after
a line's head). Each sign costs one scan of the text in C, plus a look at the few
places found.
"""

from __future__ import annotations

import re

import regex

from .wrappers import ESC_CSI, OTHER_PREFIX_AT_START, PIPE_PREFIX_AT_START, Lazy

HEAD = Lazy(
    r"[ \t]*(?:\x1b\[[0-9;]*m)*(?:\([A-Za-z][\w =.-]*? pid=\d+\)(?:\x1b\[[0-9;]*m)* ?)?"
    r"(?:(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[[^\]\s]+:\d+\])?[ \t]*"
)
"""Where a line's message starts: after indentation, a process tag and a record prefix."""
_HEAD_RE = re.compile(HEAD.pattern)
"""`HEAD` for the standard engine: the same expression, matched with less overhead."""

_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_RECORDS_AT = tuple(re.compile(level + r" \d\d-\d\d \d\d:\d\d:\d\d") for level in _LEVELS)
"""A record's level and timestamp, one level at a time: each pattern starts with a
literal, which the engine finds fast; records never overlap, so together they find
every record one alternation would."""
_FRAME_HEADS = ('\n  File "', ']   File "', ')   File "')
_RAW_STARTS = ("Traceback (most recent call last)", "INFO:     ", "ERROR:     ", "usage: ")
"""Raw lines (no record prefix) that begin a line: a traceback, uvicorn, argparse."""
_RAW_GATES = ("Traceback", "INFO:", "ERROR:", "usage:")
"""A part of each without its spaces, looked for first: CPython's substring search
slows to a crawl on a 16 KB run of spaces or backticks when the needle has a space
(the two collide in its skip filter), and these parts find nothing there."""
_ESC_CSI_RE = re.compile(ESC_CSI.pattern)


def damaged(doc: str) -> bool:
    """Whether any line of `doc` ("\\n" + the lines joined) needs a per-line repair.

    Most tails are clean, and a few scans of the joined text in C cost less than a
    step per line: a wrapper at a line start, caret ANSI, a record, a traceback
    header or a frame anywhere but at the start of its line. Where a record or a frame
    starts is judged without colour codes, as `split_collapsed` judges it: vLLM's own
    coloured output is clean.
    """
    if ("|" in doc and PIPE_PREFIX_AT_START.search(doc)) or OTHER_PREFIX_AT_START.search(doc):
        return True
    if ("^" in doc and "^[[" in doc) or ("␛" in doc and "␛[" in doc):
        return True
    if "[0m" in doc and regex.search(r"(?<!\x1b)\[0(?:;0)?m", doc):
        return True
    if "\x1b" in doc:
        doc = _ESC_CSI_RE.sub("", doc)
    heads: dict[str, bool] = {}
    return _frames_damaged(doc, heads) or _raw_damaged(doc, heads) or _records_damaged(doc, heads)


def _frames_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A frame's `File "` after anything but a line's head."""
    if "File" not in doc:
        return False  # (a needle without a space first: see _RAW_GATES)
    if doc.count('File "') != sum(doc.count(h) for h in _FRAME_HEADS):
        return True
    for head in _FRAME_HEADS[1:]:  # after a record or a process tag: at the line's head?
        pos = doc.find(head)
        while pos >= 0:
            if not _at_head(doc, pos + 1, heads):
                return True
            pos = doc.find(head, pos + 1)
    return False


def _raw_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A traceback header, uvicorn's or argparse's line after anything but a line's head."""
    for raw_start, gate in zip(_RAW_STARTS, _RAW_GATES, strict=True):
        pos = doc.find(raw_start) if gate in doc else -1
        while pos >= 0:
            if not _at_head(doc, pos, heads):
                return True
            pos = doc.find(raw_start, pos + 1)
    return False


def _records_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A record anywhere but at a line's start or after its head."""
    for record in _RECORDS_AT:
        for m in record.finditer(doc):
            p = m.start()
            if doc[p - 1] == "\n":
                continue
            start = doc.rfind("\n", 0, p) + 1
            if doc[p - 2 : p] == ") " and doc[start] == "(" and doc.find(") ", start) == p - 2:
                continue  # after the process tag
            if not _at_head(doc, p, heads):
                return True
    return False


def _at_head(doc: str, pos: int, heads: dict[str, bool]) -> bool:
    """Whether only a line's head (indent, process tag, record prefix) precedes `pos`.
    `heads` keeps the answer per text before `pos`: a traceback's frames share one."""
    start = doc.rfind("\n", 0, pos) + 1
    before = doc[start:pos]
    known = heads.get(before)
    if known is None:
        head = _HEAD_RE.match(before)
        known = heads[before] = head is not None and head.end() == len(before)
    return known
