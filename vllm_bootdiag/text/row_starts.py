"""How a row that starts a line of its own begins: the rejoin's test of each row it may join.

A record, a frame, an exception's or warning's name, a bar, argparse's lines: such a row is
never the rest of the row above. `_START` is the long way, one alternation; `_starts`
answers the same with its costly branches asked apart, each in linear time (the tests hold
it to `_START`).
"""

from __future__ import annotations

from .exception_names import starts_line
from .wrappers import Lazy

_STRONG_START = Lazy(
    r"[ \t]*$|[ \t]*(?:\x1b\[[0-9;]{0,32}m){0,8}\((?:[A-Za-z][\w =.-]*? )?pid=\d+\)"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"
    r"|Traceback \(most recent|[ \t]{2}|\{\"(?:log|MESSAGE)\": ?\""
    r"|\([^()\n]{0,200}\) (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"
)
"""A row that begins a line of its own even when the row above is full width (a docker
json-file record too: a terminal wraps the record, not its message). A record behind any
group in parentheses is one: the clean-tail check takes such a group for a process tag (Ray
writes `(RayWorkerWrapper pid=3, ip=...)`), so a tag a paste garbled (`(EngineCore\xa0pid=1)`,
a no-break space) must not put its record on the row above."""
_START = Lazy(
    _STRONG_START.pattern
    + r"|During handling of|The above exception|usage: |[\w .-]+: error: "
    + r"|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)(?::|\s*$)"
    + r"|\[rank\d|\[?[WEIF]\d{4} |(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):"
    + r"|\S*\.py:\d+: |.{0,300}(?:%\||it/s\]|s/it\])"
    + r"|Process [\w.-]+:\s*$"
)
"""A row that begins a new line: a record, a frame, an exception, a warning, a bar (its
rate within its first 300 characters: `.*` before it cost a 16 KB row 0.65 ms),
multiprocessing's `Process EngineCore:` header over a child's traceback. The long way of
`_starts`, which the tests hold it to."""
_BAR = r"|.{0,300}(?:%\||it/s\]|s/it\])"
_NAME = r"|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)(?::|\s*$)"
_SOURCE = r"|\S*\.py:\d+: "
_ARGPARSE = r"|[\w .-]+: error: "
_START_BUT_BAR = Lazy(
    _START.pattern.replace(_BAR, "", 1)
    .replace(_NAME, "", 1)
    .replace(_SOURCE, "", 1)
    .replace(_ARGPARSE, "", 1)
)
"""`_START` less its bar's branch, which tries each of 300 places (2 us a row, 11 in a row
of 300 characters, matched or not), less its exception's or warning's name, which
backtracked 10 ms on a 16 KB row of `A.` (`exception_names.starts_line` answers it in
linear time), and less its `file.py:N: ` (`_source_at_start`: 3.6 ms on a 16 KB row of
`.py:`, quadratic in the `regex` module), and less argparse's `prog: error: `, asked
alone (`_ARGPARSE_AT`: in the alternation it ran its class through a 16 KB row, 90-230 us;
alone, its literal is looked for first: 5-10 us; release's edits)."""
_ARGPARSE_AT = Lazy(_ARGPARSE.removeprefix("|"))
_TWO_BLANKS = frozenset(("  ", " \t", "\t ", "\t\t"))
"""How a row that `_START`'s `[ \t]{2}` reads starts: told before the branches that run
through a 16 KB row of blanks first (1.3 ms)."""
_SPACE = Lazy(r"\s")
_SOURCE_END = Lazy(r"(?r)\.py:\d+:")


def _source_at_start(row: str) -> bool:
    """`regex.match(r"\\S*\\.py:\\d+: ", row)`: what comes before the space that ends it is
    not white space, so that space is the row's first, and the `.py:N:` ends right before
    it (each found by one scan: the row's `\\S*` and its search backtracked at each `.py:`).
    The row's first space is found at memchr speed, and in an ASCII row the white space
    before it by five such searches: the `regex` module's search for `\\s` steps through a
    16 KB row of `:` in 100 us."""
    if ":" not in row:  # (memchr: the search for a space runs through a row without one)
        return False
    at = row.find(" ")
    if at < 0:  # no white space, or its first is not a space
        return False
    if row.isascii():
        if any(row.find(c, 0, at) >= 0 for c in _ASCII_SPACES):
            return False
    elif _SPACE.search(row, 0, at) is not None:
        return False
    return _SOURCE_END.match(row, 0, at) is not None


_ASCII_SPACES = "\t\n\x0b\x0c\r"
"""What the `regex` module's `\\s` matches in ASCII besides the space."""
_ARGPARSE_PROG = Lazy(r"[\w .-]+")


def _argparse_at(row: str) -> bool:
    """`_ARGPARSE_AT.match(row)` (`[\\w .-]+: error: `): a `:` is no name character, so the
    program's name runs to the row's first `:`, found at memchr speed, and the literal is
    there or nowhere (the pattern stepped through a 16 KB row of `:` in 47 us)."""
    colon = row.find(":")
    return (
        colon > 0
        and row.startswith(": error: ", colon)
        and _ARGPARSE_PROG.fullmatch(row, 0, colon) is not None
    )


_BAR_AT = Lazy(_BAR.removeprefix("|"))


def _starts(row: str) -> bool:
    """`_START.match(row)`: its bar's branch only where the row's first 305 characters
    (the bar's rate within 300 of them, and its 5) hold a rate."""
    if (
        row[:2] in _TWO_BLANKS
        or _START_BUT_BAR.match(row)
        or starts_line(row)
        or _source_at_start(row)
        or _argparse_at(row)
    ):
        return True
    head = row[:305]
    return ("%|" in head or "it/s]" in head or "s/it]" in head) and bool(_BAR_AT.match(row))
