"""One cheap pass over a tail, so classification stays well under a millisecond.

Parsing 400 lines with a full regex, or running `str.find` for every literal
over 50 KB of text, each cost milliseconds. So one pass sorts the lines:

* INFO/DEBUG records carry boot progress. Only their message start is tried,
  with one anchored pattern (the timeline's markers), which fails at once on
  lines that are not progress lines.
* Every other line (ERROR/WARNING records, raw stderr) may hold a failure.
  Traceback frames and source-code lines cannot, and are left out; the rest is
  joined once, and each rule's literal is found in that much smaller text.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from . import logline

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Tail:
    """The lines of a tail, sorted into progress and candidate-failure lines."""

    __slots__ = ("_found", "_parsed", "_starts", "lines", "markers", "other", "other_text")

    def __init__(self, lines: Sequence[str], marker: re.Pattern[str] | None = None) -> None:
        self.lines = list(lines)
        self.markers: list[tuple[int, str, str]] = []
        """(index, marker group name, message) for progress lines the marker matched."""
        other: list[int] = []
        match = marker.match if marker is not None else None
        for i, line in enumerate(self.lines):
            if "\x1b" in line:
                line = _ANSI.sub("", line)
            j = line.find("] ")
            if j > 0:
                if line.find(" INFO ", 0, j) != -1 or line.find(" DEBUG ", 0, j) != -1:
                    if match is not None:
                        m = match(line, j + 2)
                        if m is not None and m.lastgroup is not None:
                            self.markers.append((i, m.lastgroup, line[j + 2 :]))
                    continue
                if line.find(" ERROR ", 0, j) != -1 or line.find(" WARNING ", 0, j) != -1:
                    if line.startswith("    ", j + 2) or line.startswith("  File ", j + 2):
                        continue  # a traceback frame or its source line, inside a record
                    other.append(i)
                    continue
            if line.startswith("    ") or line.startswith("  File "):
                continue  # a raw traceback frame or its source line
            other.append(i)
        self.other = other
        self.other_text = "\n".join(self.lines[i] for i in other)
        starts: list[int] = []
        pos = 0
        for i in other:
            starts.append(pos)
            pos += len(self.lines[i]) + 1
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
