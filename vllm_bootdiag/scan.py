"""Find which lines of a tail contain a literal, fast.

Classification must stay well under a millisecond for a 400-line tail. Parsing
every line with a regex costs more than that, so we join the tail once and let
`str.find` (a fast C substring search) locate each rule's literal; only the
lines it lands on are parsed and matched.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from . import logline


class Tail:
    """The lines of a tail, searchable by literal, parsed on demand and cached."""

    __slots__ = ("_parsed", "_starts", "lines", "text")

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)
        self.text = "\n".join(self.lines)
        starts = [0] * len(self.lines)
        pos = 0
        for i, line in enumerate(self.lines):
            starts[i] = pos
            pos += len(line) + 1
        self._starts = starts
        self._parsed: dict[int, logline.LogLine] = {}

    def __len__(self) -> int:
        return len(self.lines)

    def find(self, literal: str) -> list[int]:
        """0-based indices of the lines that contain `literal`, in order."""
        found: list[int] = []
        text, starts = self.text, self._starts
        pos = text.find(literal)
        while pos != -1:
            index = bisect_right(starts, pos) - 1
            found.append(index)
            if index + 1 >= len(starts):
                break
            pos = text.find(literal, starts[index + 1])
        return found

    def parsed(self, index: int) -> logline.LogLine:
        """The parsed line at a 0-based index (numbers in LogLine are 1-based)."""
        line = self._parsed.get(index)
        if line is None:
            line = logline.parse(self.lines[index], index + 1)
            self._parsed[index] = line
        return line
