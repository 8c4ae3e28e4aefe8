"""Triage: one cheap pass says which lines of a tail a rule or a marker can concern.

Classification must stay under a millisecond. Parsing 400 lines with a full
regex, or running `str.find` for every literal over 50 KB of text, each cost
milliseconds. So one pass sorts the lines:

* INFO/DEBUG records carry boot progress. Only their message start is tried,
  against the few timeline markers that begin with the same two characters.
* ERROR records and raw stderr may hold what ended the boot. WARNING records,
  traceback frames and source-code lines cannot, and are left out; the rest is
  joined once, and each rule's literal is found in that much smaller text.

Most lines need no sort at all: one scan of the joined text finds the WARNING records,
the frames and the progress lines whose message no marker can start with, and only the
rest (a fifth of a corpus tail) are sorted one by one.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, repeat

from .. import versions
from . import logline
from .joined import Joined

_RECORD_MATCH = logline.RECORD.match

FRAME_STARTS = ("    ", "  File ")
"""How traceback frames and their source lines start."""
_TORCH_WARNING = re.compile(r"(?:\[rank\d+\]:)?\[?W\d{4} \d\d:\d\d:\d\d")
"""torch's glog-style warnings (`[rank0]:W1129 16:51:14.768 ...`, `[W1129 16:00:21 ...]`):
warnings, not causes (a compile-cache write that fails is only a warning)."""

SEARCH_WIDTH = 1024
"""Literals are searched in the first this-many characters of a line: vLLM's messages
state what they are about up front, and a 10 KB `Supported architectures: ...` list
must not cost every rule a scan. Rule patterns still run on the whole line."""


PROGRESS, CANDIDATE, SKIP = "progress", "candidate", "skip"


def sort_line(line: str) -> tuple[str, str, int, str | None]:
    """(kind, text, message start, timestamp) for one line.

    PROGRESS: an INFO/DEBUG record (its message may be a boot phase). CANDIDATE:
    an ERROR/CRITICAL record or raw stderr that may say what ended the boot.
    SKIP: a WARNING record, torch's own warnings, traceback frames and their source
    lines, which never do. `text` is the line without ANSI codes and a container
    runtime's prefix.
    """
    text = line
    if "\x1b" in text or text[:1].isdigit() or text[-1:] == "\r":
        text = logline.strip_wrapping(text)
    rec = _RECORD_MATCH(text)
    if rec is not None:
        level, j = rec[1], rec.end()
        if level == "INFO" or level == "DEBUG":
            return PROGRESS, text, j, rec[2]
        if level[0] == "W" or text.startswith(FRAME_STARTS, j):
            return SKIP, text, j, rec[2]
        return CANDIDATE, text, j, rec[2]
    # Raw stderr; 0.10-0.30 put a process tag in front of it too.
    j = logline.tag_end(text) if text[:1] == "(" else 0
    if text.startswith(FRAME_STARTS, j) or _TORCH_WARNING.match(text, j):
        return SKIP, text, j, None
    return CANDIDATE, text, j, None


_CONCERN: dict[tuple[str | tuple[str, ...], bool], re.Pattern[str]] = {}
_SOURCE_MAX = 256
"""The longest record source (`[api_server.py:1043]`) the scan reads; a record whose
source runs longer is sorted (`sort_line` reads any), so no 16 KB line without a `]` costs
the scan a pass over it."""
_STAMP = rf" \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+|) \[[^\]\n\r]{{0,{_SOURCE_MAX}}}\](?: |(?! ))"
"""A record's timestamp and source, and the space after them if there is one. Each
optional group is written `(?:X|)`, not `(?:X)?`: the same match, but a branch, where `re`
runs a group's `?` as a repeat (its state saved at each line: the scan 15% slower)."""
_FRAME_AT = "(?:    |  File )"
_TORCH_AT = r"(?:\[rank\d+\]:|)\[?W\d{4} \d\d:\d\d:\d\d"
"""`_TORCH_WARNING`, as the scan writes it."""
_SORT_ME = (
    r"\d{4}-|(?:\([^()\n\r]{0,300}\) ?|)(?:INFO|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d"
    rf"(?=(?:[.,]\d+|) \[[^\]\n\r]{{0,{_SOURCE_MAX}}}\])[^\n]*"
    r"|(?:\([^()\n\r]{0,300}\) ?|)(?:INFO|DEBUG|WARNING|WARN|ERROR|CRITICAL) "
    rf"(?=\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+|) \[[^\]\n\r]{{{_SOURCE_MAX + 1}}})"
)
"""What the scan captures of a line it keeps and cannot call a candidate: a runtime's
prefix (`sort_line` strips it and reads what follows); a progress record whole, from its
tag (or the `\x01` in its place) on, which `Tail` reads as `sort_line` would: its level
and timestamp where they start, its message after the first `]` past them, and a space
(the record is `logline.RECORD`'s), in the text without colour codes, so the line is not
stripped again; or a record's level whose source runs past `_SOURCE_MAX` (sorted: it ends
with its level and a space)."""


_ASCII_STAMP = _STAMP.replace(
    r" \d\d-\d\d \d\d:\d\d:\d\d", " [0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"
)
"""`_STAMP` with its date and time in ASCII digits: `re` tests a class of ten characters
faster than Unicode's decimal digits (the scan 4% less on the corpus tails)."""
_LONG_SOURCE = rf"(?=\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+|) \[[^\]\n\r]{{{_SOURCE_MAX + 1}}})"
"""`_SORT_ME`'s last branch's lookahead: a record whose source runs past `_SOURCE_MAX`."""
assert _LONG_SOURCE in _SORT_ME
_SORT_ME_ASCII = _SORT_ME.replace(
    _LONG_SOURCE,
    _LONG_SOURCE[:-1]
    + r"|(?![0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9])\d\d-\d\d \d\d:\d\d:\d\d)",
)
"""`_SORT_ME` for a scan that reads stamps in ASCII digits: its last branch captures a
record's level (a code `Tail` sorts, as `sort_line` reads any digit) where its stamp holds
a decimal digit that is not ASCII (`٠١-٠٢`), which `_ASCII_STAMP` leaves boring to no
branch. The last branch, so a line the others capture is captured as the long way does."""


def _any_start(starts: tuple[str, ...]) -> str:
    """An expression for any of `starts`, grouped by first character (a branch per
    character the engine rejects at once, not a branch per string)."""
    by_first: dict[str, set[str]] = {}
    for s in starts:
        if s:
            by_first.setdefault(s[0], set()).add(s[1:])
    alts = []
    for first, rests in sorted(by_first.items()):
        rest = "" if "" in rests else "|".join(re.escape(r) for r in sorted(rests))
        alts.append(re.escape(first) + (f"(?:{rest})" if rest else ""))
    return "|".join(alts) if alts else "(?!)"


def _concern(starts: str | tuple[str, ...]) -> re.Pattern[str]:
    """Matches at the newline before each line, in "\\n" + the joined text, and captures
    nothing when `sort_line` would call the line SKIP (a WARNING record, torch's warning,
    a traceback frame, raw or after a record or a process tag) or PROGRESS with a message
    that starts with none of `starts` (which no marker reads; where `starts` is one string,
    it is a pattern's source, matched where the message starts). Otherwise it captures what
    the line starts with: two or more characters where `sort_line` must read the line (a
    progress record, a runtime's prefix), one (or the newline of an empty line) where the
    line is a CANDIDATE (no sort needed). So `findall` gives one string per line, empty
    for the lines nothing concerns, and the indices of the others come out of `compress`
    in C, where mapping each match's offset to its line would cost a step in Python.
    `RECORD` and `_TAG` keep newlines out of their classes, so each stays on its line,
    and ` ?` is written `(?: |(?! ))` so no backtracking moves the message. It stays
    apart from the clean-tail check's scans of the same line starts: one pattern for both
    was measured slower (`findall` then builds a tuple per line)."""
    return _CONCERN.get((starts, False)) or _compile(starts, False)


def _ahead(starts: Sequence[str]) -> str | tuple[str, ...]:
    """The key `_concern` caches a pattern by: `starts` as given where it is a pattern's
    source (one string), else the literal starts as a tuple."""
    return starts if isinstance(starts, str) else tuple(starts)


def _compile(starts: str | tuple[str, ...], untagged: bool) -> re.Pattern[str]:
    """`_concern`'s pattern; `untagged`: for `Joined.untagged`, where `\\x01` stands for a
    process tag and its space taken off (`logline`'s tag: a raw frame after it is one).

    `_concern_source`'s, with its boring lines' branches grouped by how a line starts (a
    `\\x01`, a parenthesis, anything else), so a line tries the branches its start can
    take: `\\x01` and a record are one branch, not a failed frame branch first and then
    the tag's three alternatives again (the scan 5% less on the corpus tails). The same
    matches: each branch of the long way is one of these, and a boring line's match ends
    on its line either way (no class or literal in them takes a newline), so `findall`
    resumes at the same newline. A record's stamp is read in ASCII digits
    (`_ASCII_STAMP`); one in other decimal digits is sorted (`_SORT_ME_ASCII`)."""
    ahead = starts if isinstance(starts, str) else _any_start(starts)
    skip_at = f"(?:{_FRAME_AT}|{_TORCH_AT})"
    levels = (
        f"(?:INFO|DEBUG){_ASCII_STAMP}(?!{ahead})"
        + f"|(?:WARNING|WARN){_ASCII_STAMP}"
        + f"|(?:ERROR|CRITICAL){_ASCII_STAMP}{_FRAME_AT}"
    )
    boring = (
        (rf"\x01(?:{skip_at}|{levels})|" if untagged else "")
        # a raw frame or torch warning after a process tag (whose lazy search for ` pid=`
        # runs only once a frame is known to follow the parenthesis), or a record after
        # a parenthesis
        + rf"\((?:(?=[^()\n\r]{{0,300}}\)(?: |(?! )){skip_at})"
        + r"[A-Za-z][^()\n\r]{0,80}? pid=\d+[^()\n\r]{0,200}\)(?: |(?! ))"
        + rf"{skip_at}|[^()\n\r]{{0,300}}\) ?(?:{levels}))"
        + f"|{skip_at}|{levels}"
    )
    sort_me = _SORT_ME_ASCII
    sort_me = sort_me.replace(r"|(?:\(", r"|(?:\x01|\(") if untagged else sort_me
    pattern = _CONCERN[(starts, untagged)] = re.compile(
        f"\\n(?:{boring}|(?=({sort_me}|[\\s\\S]))|)"
    )
    return pattern


def _concern_source(starts: str | tuple[str, ...], untagged: bool) -> str:
    """The long way of `_compile`'s pattern (its source): a boring line is a frame or a
    torch warning after a tag or none, or a record after a tag or none, each tried in turn."""
    took = "\x01|" if untagged else ""
    ahead = starts if isinstance(starts, str) else _any_start(starts)
    skip_at = f"(?:{_FRAME_AT}|{_TORCH_AT})"
    boring = (
        rf"(?:{took}\((?=[^()\n\r]{{0,300}}\)(?: |(?! )){skip_at})"
        + r"[A-Za-z][^()\n\r]{0,80}? pid=\d+[^()\n\r]{0,200}\)(?: |(?! ))|)"
        + skip_at
        + rf"|(?:{took}\([^()\n\r]{{0,300}}\) ?|)(?:"
        + f"(?:INFO|DEBUG){_STAMP}(?!{ahead})"
        + f"|(?:WARNING|WARN){_STAMP}"
        + f"|(?:ERROR|CRITICAL){_STAMP}{_FRAME_AT})"
    )
    sort_me = _SORT_ME.replace(r"|(?:\(", rf"|(?:{took}\(")
    return f"\\n(?:{boring}|(?=({sort_me}|[\\s\\S]))|)"


def _untagged(joined: Joined) -> str | None:
    """`joined.untagged`'s text where each tag taken off is one `logline`'s tag reads (and
    a record's: 300 characters at most), so a line that starts with `\\x01` reads as the
    line with its tag: None where there is none, or a tag is not."""
    untagged = joined.untagged
    if untagged is None:
        return None
    text, tags = untagged
    for tag in tags:
        if len(tag) > 302 or logline._TAG.fullmatch(tag) is None:
            return None
    return text


def _concerned(
    lines: list[str], starts: Sequence[str], joined: Joined
) -> tuple[Iterable[int], Iterable[str] | None]:
    """Indices of the lines a marker or a rule can concern, in order, and for each its
    code (see `_concern`; None: sort each): one scan of the joined text instead of a sort
    per line. Only where no line holds a carriage return or a newline (which
    `strip_wrapping` or the join would move): elsewhere every line is sorted."""
    if not lines:
        return range(0), None
    # a one-character test of the joined text runs at memchr speed, and a newline inside a
    # line shows as one line start too many; past 1 MB each line is tested (no join then)
    wide = len(joined.doc) > 2**20
    if any("\r" in line or "\n" in line for line in lines) if wide else "\r" in joined.doc:
        return range(len(lines)), None
    # each line start after a newline (the engine finds that character fast), read as
    # sort_line reads the line: without colour codes
    untagged = _untagged(joined)
    if untagged is None:
        pattern, text = _concern(_ahead(starts)), joined.plain
    else:  # no tag for the scan to read, line by line
        key = (_ahead(starts), True)
        pattern, text = _CONCERN.get(key) or _compile(*key), untagged
    if not wide:
        codes = pattern.findall(text)
    else:  # long lines: matched where each starts (`str.find` finds its newline in C),
        # where a search would step through every character of each one
        match, find = pattern.match, text.find
        codes = []
        at = find("\n")
        while at >= 0:
            m = match(text, at)  # (it always matches, maybe capturing nothing)
            codes.append(m[1] or "" if m is not None else "")
            at = find("\n", at + 1)
    if len(codes) != len(lines):  # a line holds a newline: no line start is where it was
        return range(len(lines)), None
    if text[-1:] == "\n":  # the last line is empty (or colour codes alone): nothing after
        codes[-1] = "\n"  # it to capture, and a candidate
    return compress(range(len(lines)), codes), filter(None, codes)


def _record_end(code: str) -> int:
    """Where the timestamp ends in a code the scan captured for a progress record (see
    `_SORT_ME`): after a process tag or the `\x01` in its place, its level, a space and 14
    characters; 0 for the scan's other codes (a runtime's prefix, a level alone)."""
    first = code[:1]
    at = 1 if first == "\x01" else 0
    if first == "(":  # the tag the scan read: no parenthesis inside, and a space or not
        at = code.index(")") + 1
        at += code.startswith(" ", at)
    level = 4 if code.startswith("INFO ", at) else 5 if code.startswith("DEBUG ", at) else 0
    end = at + level + 15
    return end if level and len(code) >= end else 0


class Tail:
    """The lines of a tail, sorted into progress and candidate-failure lines."""

    __slots__ = (
        "_found",
        "_joined",
        "_numbers",
        "_other_text",
        "_parsed",
        "_starts",
        "_versions",
        "lines",
        "markers",
        "other",
    )

    def __init__(
        self,
        lines: Sequence[str],
        progress: Callable[[str], str | None] | None = None,
        numbers: Sequence[int] | None = None,
        marker_starts: Sequence[str] | None = None,
        *,
        joined: Joined | None = None,
    ) -> None:
        """`marker_starts`: the literal starts of every message `progress` maps to a marker,
        or one pattern's source that matches where each such message starts
        (`timeline.MESSAGE_STARTS`); the other progress lines are not sorted. `joined`:
        `lines` joined (`Joined.of(lines)`), when the caller has it already."""
        self.lines = list(lines)
        self._numbers = numbers
        """Each line's number in the original input (`Line.first`); None: 1, 2, ..."""
        self.markers: list[tuple[int, str, str, str]] = []
        """(index, marker group name, message, timestamp) for progress lines it matched."""
        other: list[int] = []
        codes: Iterable[str] | None = None
        if marker_starts is None:
            concerned: Iterable[int] = range(len(self.lines))
        else:  # what a marker's message can start with: the other lines are not sorted
            joined = Joined.of(self.lines) if joined is None else joined
            concerned, codes = _concerned(self.lines, marker_starts, joined)
        self._joined = joined
        lines, markers = self.lines, self.markers
        pairs = zip(concerned, repeat("") if codes is None else codes, strict=False)
        for i, code in pairs:
            if len(code) == 1:  # the scan read it: a candidate
                other.append(i)
                continue
            end = _record_end(code)
            if end and progress is not None:
                # a progress record, whole: `sort_line`'s text (no colour codes, no CR, no
                # runtime prefix here), its tag taken off or not; message and timestamp
                start = code.index("]", end) + 1
                message = code[start + 1 :] if code.startswith(" ", start) else code[start:]
                key = progress(message)
                if key is not None:
                    markers.append((i, key, message, code[end - 14 : end]))
                continue
            kind, text, start, ts = sort_line(lines[i])
            if kind == CANDIDATE:
                other.append(i)
            elif kind == PROGRESS and progress is not None:
                key = progress(text[start:])
                if key is not None:
                    markers.append((i, key, text[start:], ts or ""))
        self.other = other
        self._other_text: str | None = None
        self._starts: list[int] | None = None
        self._parsed: dict[int, logline.LogLine] = {}
        self._found: dict[str, list[int]] = {}
        self._versions: dict[int, versions.Detected | None] = {}

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def other_text(self) -> str:
        """The candidate lines' heads (their first SEARCH_WIDTH characters), one a line:
        what `find` searches. Joined on first use."""
        text = self._other_text
        if text is None:
            lines = self.lines
            text = self._other_text = "\n".join([lines[i][:SEARCH_WIDTH] for i in self.other])
        return text

    @property
    def doc(self) -> str:
        """ "\\n" + the lines joined (`Joined.doc`): for a search of every line at once."""
        if self._joined is None:
            self._joined = Joined.of(self.lines)
        return self._joined.doc

    @property
    def usages(self) -> int | None:
        """How many `usage: ` the lines hold, where the clean-tail check counted them
        (`Joined.usages`); None otherwise."""
        return self._joined.usages if self._joined is not None else None

    @property
    def untagged(self) -> tuple[str, tuple[str, ...]] | None:
        """The text with the process tags that start its lines taken off, and those tags,
        where the clean-tail check made it (`Joined.untagged`); None otherwise."""
        return self._joined.untagged if self._joined is not None else None

    @property
    def plain_lines(self) -> list[str] | None:
        """Each line without colour codes, when the clean-tail check made them (a long
        tail's, see `Joined.plain_lines`); None otherwise."""
        return self._joined.plain_lines if self._joined is not None else None

    def _line_starts(self) -> list[int]:
        """Where each candidate line's head starts in `other_text`."""
        starts = self._starts
        if starts is None:
            # each head's length, min(len(line), SEARCH_WIDTH), and its newline: a plain
            # loop, where a chain of `map`s costs more to set up than the few lines take
            starts = self._starts = [0]
            lines, at = self.lines, 0
            for i in self.other[:-1]:
                n = len(lines[i])
                at += (n if n < SEARCH_WIDTH else SEARCH_WIDTH) + 1
                starts.append(at)
        return starts

    def find(self, literal: str) -> list[int]:
        """Indices of the candidate-failure lines that contain `literal`, in order."""
        cached = self._found.get(literal)
        if cached is not None:
            return cached
        found: list[int] = []
        self._found[literal] = found
        text = self.other_text
        pos = text.find(literal)
        if pos == -1:
            return found
        starts = self._line_starts()
        while pos != -1:
            k = bisect_right(starts, pos) - 1
            found.append(self.other[k])
            if k + 1 >= len(starts):
                break
            pos = text.find(literal, starts[k + 1])
        return found

    def stated_version(self, index: int, message: str) -> versions.Detected | None:
        """`versions.detect((message,))` for the version marker at line `index` (`message`
        is its message in `markers`), read once per tail: the boot walk and the diagnosis
        both ask it of the same lines."""
        memo = self._versions
        if index in memo:
            return memo[index]
        found = memo[index] = versions.detect((message,))
        return found

    def number(self, index: int) -> int:
        """The original line number of the line at a 0-based index: what evidence cites."""
        return self._numbers[index] if self._numbers is not None else index + 1

    def parsed(self, index: int) -> logline.LogLine:
        """The parsed line at a 0-based index (its `number` is the original one)."""
        line = self._parsed.get(index)
        if line is None:
            line = logline.parse(self.lines[index], self.number(index))
            self._parsed[index] = line
        return line
