"""classify(): read -> normalize -> boots -> version -> match -> diagnose.

`boots` finds where the last boot in the tail starts; only its lines are read
for the version and the cause.

One direction, no back and forth: the input is cut to its tail before any
work (a 1M-line list or a 750 KB string costs what 400 lines cost), then each
stage hands the next what it needs.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterable, Sequence
from itertools import repeat

from . import boots, logtail, timeline
from .diagnosis import Diagnosis
from .engine.diagnose import diagnose
from .rules.ruleset import RuleSet, resolve
from .rules.schema import Rule
from .text import tail as text_tail
from .text.joined import Joined
from .text.normalize import normalize_rows
from .text.recognize import is_vllm_output
from .text.triage import Tail

COUNT_LIMIT_CHARS = 8 * 2**20
"""Lines before the tail are counted (for file line numbers in evidence) only in text
up to this long: past it, counting would cost more than classifying."""


def _cut_text(text: str, lines: int) -> tuple[str, int]:
    """The last `lines` lines of `text` (found from the end) and the 1-based number
    of the first one kept."""
    end = len(text) - 1 if text.endswith("\n") else len(text)
    cut = end
    for _ in range(lines):
        cut = text.rfind("\n", 0, cut)
        if cut < 0:
            return text, 1
    if cut > COUNT_LIMIT_CHARS:
        return text[cut + 1 :], 1  # numbered within the tail, as the file reader does
    return text[cut + 1 :], text.count("\n", 0, cut + 1) + 1


def _lines(log: str | Iterable[str], lines: int) -> tuple[list[str], int]:
    """The tail as clean lines (no CR, NUL or overlong line) and its first line number."""
    if isinstance(log, (bytes, bytearray)):
        log = text_tail.decode(bytes(log))
    if isinstance(log, str):
        text, first = _cut_text(log, lines)
        if "\x00" in text:  # dropped, as the file reader and a list's lines drop them
            text = text.replace("\x00", "")
        kept, before = text_tail.split_tail(text, lines)
        return kept, first + before
    if isinstance(log, (list, tuple)):
        first = max(len(log) - lines, 0) + 1
        kept = list(log[first - 1 :])
    elif isinstance(log, Iterable):
        # a deque (no slices), a file object, a generator: its last lines, counted
        window: deque[str] = deque(maxlen=lines)
        seen = 0
        for line in log:
            window.append(line)
            seen += 1
        first, kept = seen - len(window) + 1, list(window)
    else:
        raise TypeError(
            f"classify() takes the log as text or as lines of text, not {type(log).__name__}"
        )
    try:
        broken, longest, flat = _damage(kept)
    except TypeError:  # lines read as bytes (a pipe opened in binary), or not text at all
        kept = [_text(x) for x in kept]
        broken, longest, flat = _damage(kept)
    if not broken and longest > logtail.MAX_LINE_CHARS:
        # Lines with no line end in them, only overlong: each cut as a split would cut it
        # (joining and splitting 400 lines of 16 KB costs 13 ms). A split drops the "" after
        # a last newline, so a last empty line goes here too.
        kept = [text_tail.cut_line(s, len(kept)) for s in kept]
        if kept[-1] == "":
            kept.pop()
        return kept, first
    if broken:
        # An element is one line as a worker kept it, with its newline (`for line in
        # proc.stdout`) or without: joined as the file held them, never a blank line between.
        if all(map(str.endswith, kept, repeat("\n"))):
            text = flat
        else:
            text = "\n".join(s[:-1] if s.endswith("\n") else s for s in kept)
        text = text.replace("\x00", "") if "\x00" in text else text
        if text.count("\n") > lines:  # lines holding lines: cut before splitting
            text, cut = _cut_text(text, lines)
            first += cut - 1
        kept, before = text_tail.split_tail(text, lines)
        first += before
    return kept, first


def _damage(kept: list[str]) -> tuple[bool, int, str]:
    """Whether any line holds a line end or a NUL, the longest line's length (the text's
    where that is no longer than `MAX_LINE_CHARS`: no line is then cut; 0 where a line end
    is found), and the lines joined (TypeError when a line is not text). The join comes
    first: the tests of it run at memchr speed, and each line's length is read only where
    a line may be overlong (a pass of `len` over 400 lines costs more than the join)."""
    flat = "".join(kept)
    if "\n" in flat or "\r" in flat:
        return True, 0, flat
    size = len(flat)
    longest = max(map(len, kept), default=0) if size > logtail.MAX_LINE_CHARS else size
    # A NUL in a text of two-byte characters (vLLM's banner puts block characters in 150 of
    # 226 corpus tails) is no memchr: its low byte is every ASCII character's high one, and
    # `in` steps through them slower than `re`'s search does (4.7 -> 3 us a tail; 400 rows
    # of 16 KB of block characters: 10 ms for `in` row by row, 5 for the search of them all).
    return ("\x00" in flat if flat.isascii() else _NUL.search(flat) is not None), longest, flat


_NUL = re.compile("\x00")


def _text(line: object) -> str:
    """One line of a list as text: bytes decoded as a file's are, anything else refused."""
    if isinstance(line, str):
        return line
    if isinstance(line, (bytes, bytearray)):
        return text_tail.decode(bytes(line))
    raise TypeError(f"classify() takes lines of text, not {type(line).__name__}")


def run(
    raw: Sequence[str],
    version: str | None,
    rules: RuleSet,
    *,
    first_line: int = 1,
    lookahead: bool = True,
) -> Diagnosis:
    """The pipeline after reading: `raw` is the tail, `first_line` its first line's number
    in the original input; `lookahead=False` for a stream (no rejoining of lines)."""
    joined: Joined | None = Joined.of(raw)  # the clean-tail check's and triage's text
    lines, repairs = normalize_rows(
        raw, first_line=first_line, lookahead=lookahead, joined=joined, rows_if_clean=False
    )
    texts: Sequence[str] = raw  # no repair ran: the rows are the lines read, in order
    numbers: Sequence[int] = range(first_line, first_line + len(raw))
    if repairs:
        texts = [ln[0] for ln in lines]
        numbers = [ln[1] for ln in lines]
        joined = None
    tail = Tail(texts, timeline.progress_key, numbers, timeline.MESSAGE_STARTS, joined=joined)
    found = boots.find(tail, timeline.PHASE_OF)
    update: dict[str, object] = {}
    if found.count == 1:
        d = diagnose(tail, version, rules, repairs)
    else:
        start = found.last
        tail = Tail(texts[start:], timeline.progress_key, numbers[start:], timeline.MESSAGE_STARTS)
        note = (
            f"the tail holds {found.count} boots; the last one, from line {numbers[start]}, "
            "is classified"
        )
        d = diagnose(tail, version, rules, repairs, (note,))
        update = {"boots_in_tail": found.count, "boot_start_line": numbers[start]}
    # A line a rule reads (a pasted torch or hub error) is vLLM's boot output too, even with
    # no logger record or `vllm` in sight: saying "no vLLM output" there would be a wrong answer.
    if not d.matches and not is_vllm_output(raw):
        update["vllm_output_found"] = False
        # every line read, not the logical lines left after rejoining: 400 nginx lines
        # with no vLLM prefix rejoin into one "wrapped" line
        update["lines_examined"] = len(raw)
    return d.model_copy(update=update) if update else d


def classify(
    log: str | Iterable[str],
    version: str | None = None,
    *,
    rules: RuleSet | None = None,
    extra_rules: Iterable[Rule] = (),
    first_line: int = 1,
) -> Diagnosis:
    """Classify a boot log given as text or as lines (the tail a worker kept: a list,
    a deque, an open file; each line with its newline or without).

    Input longer than the default tail is cut to its last 400 lines, as a worker
    keeps them. `rules` replaces the built-in table; `extra_rules` are added to it.
    `first_line` is the number of the log's first line in its file, when the log
    is itself a tail (evidence then cites file line numbers).
    Never raises on content: unreadable input gives `unknown`.
    """
    lines, first = _lines(log, logtail.DEFAULT_LINES)
    return run(lines, version, resolve(rules, extra_rules), first_line=first + first_line - 1)


def classify_file(
    path: str | os.PathLike[str],
    version: str | None = None,
    lines: int = logtail.DEFAULT_LINES,
    *,
    rules: RuleSet | None = None,
    extra_rules: Iterable[Rule] = (),
) -> Diagnosis:
    """Classify the tail of a log file ("-" for stdin); evidence cites file line numbers.
    Raises LogReadError."""
    t = text_tail.read(path, lines)
    return run(t.lines, version, resolve(rules, extra_rules), first_line=t.first_line or 1)
