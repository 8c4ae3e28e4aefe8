"""One cheap pass over a tail, so classification stays well under a millisecond.

Parsing 400 lines with a full regex, or running `str.find` for every literal
over 50 KB of text, each cost milliseconds. So one pass sorts the lines:

* INFO/DEBUG records carry boot progress. Only their message start is tried,
  against the few timeline markers that begin with the same two characters.
* ERROR records and raw stderr may hold what ended the boot. WARNING records,
  traceback frames and source-code lines cannot, and are left out; the rest is
  joined once, and each rule's literal is found in that much smaller text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence

from . import logline

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_RECORD = re.compile(
    r"(?:\([^)]*\) ?)?(INFO|DEBUG|WARNING|ERROR|CRITICAL) (\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+)?"
    r" \[[^\]]*\] ?"
)
"""A logging record's prefix: process tag, level, timestamp, [file:line]."""
_FRAME = ("    ", "  File ")

SEARCH_WIDTH = 1024
"""Literals are searched in the first this-many characters of a line: vLLM's messages
state what they are about up front, and a 10 KB `Supported architectures: ...` list
must not cost every rule a scan. Rule patterns still run on the whole line."""
"""How traceback frames and their source lines start."""


class Tail:
    """The lines of a tail, sorted into progress and candidate-failure lines."""

    __slots__ = ("_found", "_parsed", "_starts", "lines", "markers", "other", "other_text")

    def __init__(
        self, lines: Sequence[str], progress: Callable[[str], str | None] | None = None
    ) -> None:
        self.lines = list(lines)
        self.markers: list[tuple[int, str, str, str]] = []
        """(index, marker group name, message, timestamp) for progress lines it matched."""
        other: list[int] = []
        record = _RECORD.match
        for i, line in enumerate(self.lines):
            if "\x1b" in line:
                line = _ANSI.sub("", line)
            if line[:1].isdigit():
                line = logline.strip_wrapping(line)  # a container runtime's timestamp
            rec = record(line)
            if rec is not None:
                level, j = rec[1], rec.end()
                if level == "INFO" or level == "DEBUG":
                    if progress is not None:
                        key = progress(line[j:])
                        if key is not None:
                            self.markers.append((i, key, line[j:], rec[2]))
                    continue
                if level == "WARNING" or line.startswith(_FRAME, j):
                    continue  # a warning is not what ended a boot; a frame is not a cause
            elif line.startswith(_FRAME) or (
                line[:1] == "(" and line.startswith(_FRAME, line.find(") ") + 2)
            ):
                continue  # a raw traceback frame or its source line (0.10-0.30 tag raw stderr)
            other.append(i)
        self.other = other
        heads = [self.lines[i][:SEARCH_WIDTH] for i in other]
        self.other_text = "\n".join(heads)
        starts: list[int] = []
        pos = 0
        for head in heads:
            starts.append(pos)
            pos += len(head) + 1
        self._starts = starts
        self._parsed: dict[int, logline.LogLine] = {}
        self._found: dict[str, list[int]] = {}

    def __len__(self) -> int:
        return len(self.lines)

    def find(self, literal: str) -> list[int]:
        """Indices of the candidate-failure lines that contain `literal`, in order."""
        cached = self._found.get(literal)
        if cached is not None:
            return cached
        found: list[int] = []
        self._found[literal] = found
        text, starts = self.other_text, self._starts
        pos = text.find(literal)
        while pos != -1:
            k = bisect_right(starts, pos) - 1
            found.append(self.other[k])
            if k + 1 >= len(starts):
                break
            pos = text.find(literal, starts[k + 1])
        return found

    def parsed(self, index: int) -> logline.LogLine:
        """The parsed line at a 0-based index (numbers in LogLine are 1-based)."""
        line = self._parsed.get(index)
        if line is None:
            line = logline.parse(self.lines[index], index + 1)
            self._parsed[index] = line
        return line
