"""A tail's lines joined once, for the scans of the joined text that two stages make.

The clean-tail check (`damage_check.damaged`) and triage (`triage.Tail`) each scan
"\\n" + the lines joined, and each reads it without colour codes (most 0.2x logs are
coloured). Stripping them costs a pass over the whole text, so it is done once, by
whichever stage asks first, and the other reads the same string.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import accumulate

from .logline import strip_codes

_BY_LINE = 65536
"""A text this long (past the corpus tails, which the check reads row by row) is stripped
of its codes line by line."""


class Joined:
    """ "\\n" + a tail's lines joined (`doc`), and the same without colour codes (`plain`,
    stripped on first use). A code never holds a newline, so `plain` keeps every line
    start where `doc` has it, and each line is what `logline.strip_wrapping` leaves of
    its colour codes."""

    __slots__ = ("_plain", "doc", "lines", "plain_lines", "untagged", "usages")

    def __init__(self, doc: str, lines: Sequence[str] | None = None) -> None:
        self.doc = doc
        self.lines = lines
        """The lines joined, when known: where each starts in `doc` follows from them."""
        self._plain: str | None = None
        self.plain_lines: list[str] | None = None
        """Each line without colour codes, where `plain` was made line by line (a long
        tail): what a later stage reads of a line instead of stripping it again."""
        self.untagged: tuple[str, tuple[str, ...]] | None = None
        """`plain` with each of the process tags (the second item) and its space taken off
        every line that starts with it, `\\x01` in their place (`row_scan.clean_rows` makes
        it on its way; triage's scan reads it): None until then."""
        self.usages: int | None = None
        """How many `usage: ` (argparse's line) the text holds, where the clean-tail check
        counted them on its way (`row_scan.clean_rows`; a tag holds no `:`, so taking the
        tags off left each one): boots searches for argparse's `usage: vllm` only where
        there is one. None: not counted."""

    @classmethod
    def of(cls, lines: Sequence[str]) -> Joined:
        """The lines joined, each after a newline."""
        return cls("\n".join(["", *lines]), lines)

    def line_starts(self) -> Iterator[int]:
        """Where each line starts in `doc` (`lines` must be known): computed in C, where
        a scan of a long text for its newlines costs a pass over every character."""
        assert self.lines is not None
        return accumulate(map((1).__add__, map(len, self.lines[:-1])), initial=1)

    @property
    def plain(self) -> str:
        """`doc` without colour codes (the same string when it has no ESC byte). A long
        one is stripped line by line, each as `logline.strip_codes` strips a line (a line
        that repeats one unit of codes costs that unit: 400 x 16 KB of them 40 -> 1 ms; the
        whole text repeats it only over its first line, and the pattern took the rest: 40 x
        16 KB of `\x1b[`, 9 ms)."""
        if self._plain is None:
            doc = self.doc
            if "\x1b" not in doc:
                self._plain = doc
            elif self.lines is not None and len(doc) >= _BY_LINE:  # (a code holds no newline)
                self.plain_lines = list(map(strip_codes, self.lines))
                self._plain = "\n".join(["", *self.plain_lines])
            else:
                self._plain = strip_codes(doc)
        return self._plain
