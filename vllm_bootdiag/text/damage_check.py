"""Is a tail clean? One check over the joined text, before any per-line repair runs.

Most tails are what vLLM printed (coloured or not): for them normalize skips every
per-line step, and this check is all it costs. It must never call a damaged tail
clean: it looks for every sign a per-line step acts on (a wrapper at a line start,
caret or bare ANSI, a record, a traceback header or a frame anywhere but right after
a line's head).

What it costs is scans of the text. A pattern that starts with a literal is found at
C speed (CPython's `re` looks for the literal first); one that starts with an
alternation or a class is tried at every character, ten times slower. So each sign is
one pattern that starts with a literal and, with fixed-width lookbehinds, leaves out
the places where vLLM itself puts it (at a line's start); Python looks only at the
few places left, and the commonest of those (a record after the process tag that
0.10+ prints on every line) are counted, not looked at.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import cache
from itertools import chain, islice, repeat
from operator import itemgetter, methodcaller

import regex

from .joined import Joined
from .row_scan import (
    BARE_SGR_END,
    CARET,
    FRAME_INSIDE,
    LEVELS,
    NO_BREAK_SPACE,
    RECORD,
    RECORD_INSIDE,
    SGR_END,
    TAG,
    clean_rows,
)
from .wrappers import OTHER_PREFIX_AT_START, PIPE_PREFIX_AT_START, Lazy

HEAD = re.compile(
    r"[ \t]*(?:\x1b\[[0-9;]*m)*(?:" + TAG + r"(?:\x1b\[[0-9;]*m)* ?)?(?:" + RECORD + r")?[ \t]*"
)
"""Where a line's message starts: after indentation, a process tag and a record prefix.
The source is anything but `]` and what the `regex` module calls a space, as this pattern
first read it there (a tag's name is in `re`'s words); the standard engine matches it with
less overhead, and a 16 KB run of blanks costs it 9 us, not the `regex` module's 53."""
_HEAD_RE = HEAD

_LEVELS = LEVELS
_STAMP = r"\d\d-\d\d \d\d:\d\d:\d\d"
_RECORD_INSIDE = RECORD_INSIDE


@cache
def _record_inside_by_colon() -> re.Pattern[str]:
    """The same records, found by the first colon of their time (`INFO 01-02 03:04`): for
    a text whose dashes are too many to stop at (a 16 KB run of `INFO 01-`), one stop per
    colon, where the cheapest test comes first (a level's last letter 11 characters back:
    runs of `01:` or `01-01 01:01:01 ` cost 2-7x less than with the stamp's digits first).
    Compiled on first use (0.2 ms): only a long tail of such lines needs it."""
    return re.compile(
        r":(?<=[GORL] \d\d-\d\d \d\d:)(?=\d\d:\d\d)(?:"
        + "|".join(rf"(?<={level} \d\d-\d\d \d\d:)" for level in _LEVELS)
        + ")"
        + "".join(rf"(?<!\n{level} \d\d-\d\d \d\d:)" for level in _LEVELS)
    )


@cache
def _record_inside_by_second_colon() -> re.Pattern[str]:
    """The same records, found by the second colon of their time (`INFO 01-02 03:04:`):
    for a text dense in both dashes and colons, where most colons are not a record's
    second (16 KB runs of `INFO 01-02 03:`: 5 ms for 400 of them, 28 by the levels)."""
    return re.compile(
        r":(?<=[GORL] \d\d-\d\d \d\d:\d\d:)(?=\d\d)(?:"
        + "|".join(rf"(?<={level} \d\d-\d\d \d\d:\d\d:)" for level in _LEVELS)
        + ")"
        + "".join(rf"(?<!\n{level} \d\d-\d\d \d\d:\d\d:)" for level in _LEVELS)
    )


_TAGGED_RECORD = re.compile(
    r"\n(?=\([^()\n]{0,200}\) (?:" + "|".join(_LEVELS) + ") " + _STAMP + ")"
)
"""A line that starts with a process tag and a record right after it: where 0.10+ puts
every record. The tag's `)` is the line's first, so its `) ` is the line's first, and it
holds no `(` (`(a)x(b pid=1) ` is a line that ran on; a longer tag is not counted here:
the loop looks at it)."""
_OTHER_WRAPPER = OTHER_PREFIX_AT_START.pattern.removeprefix("\\n")
_WRAPPER_OR_TAGGED = re.compile(
    rf"\n(?:(?P<wrapper>{_OTHER_WRAPPER})|" + _TAGGED_RECORD.pattern.removeprefix("\\n") + ")"
)
"""`OTHER_PREFIX_AT_START` and `_TAGGED_RECORD` in one scan (both try each line's start):
a match with a `wrapper` is one, the others are tagged records. For a text without colour
codes, where both read the same text."""
_RECORDS_AT = tuple(re.compile(level + " " + _STAMP) for level in _LEVELS)
"""A record's level and timestamp, one level at a time (the slow path)."""
_FRAME_INSIDE = FRAME_INSIDE
_RAW_AT: tuple[re.Pattern[str] | Lazy, ...] = (
    Lazy(regex.escape("Traceback (most recent call last)")),
    re.compile(r"usage: "),
)
"""Raw lines (no record prefix) that begin a line: a traceback, argparse's, and uvicorn's
below (what `split_collapsed` cuts a line at, less a record), each found by a literal,
in linear time even in a 16 KB run of spaces (where CPython's `str.find` of a needle
with a space in it crawls). The traceback's by the `regex` module (Boyer-Moore: a third
of what `re` costs); argparse's and uvicorn's by `re`, whose search stays linear on runs
of spaces and colons, where Boyer-Moore on these short needles retries at every
character (15 ms on 400 lines of colons)."""
_RAW_LITERALS = ("Traceback (most recent call last)", "usage: ")
"""What each of `_RAW_AT` finds: none is searched for in a text that does not hold it."""
_UVICORN_AT = re.compile(r":     (?:(?<=INFO:     )|(?<=WARNING:     )|(?<=ERROR:     ))")
"""uvicorn's three levels, found by the `:     ` they share."""
_UVICORN_LEVEL = {"O": len("INFO"), "G": len("WARNING"), "R": len("ERROR")}
"""How far before its `:` uvicorn's line starts, by the level's last letter."""
_CARET, _BARE_SGR_END, _SGR_END = CARET, BARE_SGR_END, SGR_END
_LONG_SGR_ENDS = tuple(Lazy(regex.escape(e)) for e in ("[0m", "[0;0m"))
"""The same for a long text with no ESC byte, each reset alone: a pattern whose every
character is a literal is searched without a stop at each `[0` (a 400 x 16 KB tail of them
cost the patterns above 0.1 s, these 4 ms); in a short text one search costs less than
two. With ESC bytes, the resets are counted with and without one (C speed: a search with a
lookbehind stopped at each of 1.6M `\x1b[0m` in 400 x 16 KB of them, 19 ms)."""


def damaged(joined: str | Joined) -> bool:
    """Whether any line of `joined` ("\\n" + the lines joined) needs a per-line repair.

    Most tails are clean, and a few scans of the joined text in C cost less than a
    step per line: a wrapper at a line start, caret ANSI, a record, a traceback
    header or a frame anywhere but at the start of its line. Where a record or a frame
    starts is judged without colour codes, as `split_collapsed` judges it: vLLM's own
    coloured output is clean. That text is `Joined.plain`, which triage reads too.
    """
    return check(joined)[0]


def check(joined: str | Joined) -> tuple[bool, list[int] | None]:
    """`damaged`, and for a clean tail whose lines are known, the rows `normalize._rejoin`
    must look at (`row_scan.slow_rows` of them), found on the way; None where not."""
    if isinstance(joined, str):
        joined = Joined(joined)
    if joined.lines is not None and len(joined.doc) < 65536:
        slow = clean_rows(joined)
        if slow is not None:
            return False, slow
    return _damaged(joined), None


def _damaged(joined: Joined) -> bool:
    """The check by the scans of the joined text, for any text."""
    doc = joined.doc
    if NO_BREAK_SPACE in doc:
        return True
    tagged: int | None
    if joined.lines is not None and len(doc) >= _LONG_TEXT:
        wrapped, tagged = _at_line_starts(joined)
        if wrapped:
            return True
    else:
        if "|" in doc and PIPE_PREFIX_AT_START.search(doc):
            return True
        tagged = None
        if "\x1b" in doc:
            if OTHER_PREFIX_AT_START.search(doc):
                return True
        else:
            found = _WRAPPER_OR_TAGGED.findall(doc)
            if any(map(itemgetter(0), found)):
                return True
            tagged = len(found)
    if ("^" in doc and _CARET.search(doc)) or ("␛" in doc and "␛[" in doc):
        return True
    if len(doc) < 65536:
        reset = (_BARE_SGR_END if "\x1b" in doc else _SGR_END).search(doc) is not None
    elif "\x1b" in doc:  # each ESC reset holds one bare one, and neither overlaps itself
        # A bare reset outlives the codes' strip (its `[` follows no ESC, so no code holds
        # any of it): where the text without codes has none, neither has the doc, and the
        # counts (10 ms each over 400 x 16 KB of codes) are not made.
        plain = joined.plain
        # (an `m` first, at memchr speed: a search for `[0m` crawls where the text is dense
        # in characters that share its bloom bits, 35 ms over 6.5 MB of `\x1b[`; release's edit)
        reset = "m" in plain and (
            (_holds(plain, "[0m") and doc.count("[0m") > doc.count("\x1b[0m"))
            or (_holds(plain, "[0;0m") and doc.count("[0;0m") > doc.count("\x1b[0;0m"))
        )
    else:
        reset = _LONG_SGR_ENDS[0].search(doc) is not None or (
            ";" in doc and bool(_LONG_SGR_ENDS[1].search(doc))
        )
    if reset:
        return True
    doc = joined.plain
    heads: dict[str, bool] = {}
    if len(doc) < 65536 and _records_damaged(doc, heads, tagged):
        return True  # (a run-on line, the commonest damage, is settled by the records first)
    return (
        _frames_damaged(doc, heads)
        or _raw_damaged(doc, heads)
        or (len(doc) >= 65536 and _records_damaged(doc, heads, tagged))
    )


_LONG_TEXT = 2**20
"""A text this long is read at each line start by a match there, not by a scan for its
newlines (400 x 16 KB: 0.1 ms, not 1.8)."""


@cache
def _starts_at() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The line-start scans' patterns less their newline, compiled on first use (only a
    long text needs them)."""
    return (
        re.compile(PIPE_PREFIX_AT_START.pattern.removeprefix("\\n")),
        re.compile(OTHER_PREFIX_AT_START.pattern.removeprefix("\\n")),
        re.compile(_WRAPPER_OR_TAGGED.pattern.removeprefix("\\n")),
    )


def _at_line_starts(joined: Joined) -> tuple[bool, int | None]:
    """What the scans of each line start find, matched at each line start in `doc` (the
    same text, so a `$` or a lookbehind reads as it did): whether a wrapper is at one,
    and how many lines start with a tagged record (not counted in a coloured text)."""
    doc = joined.doc
    n = len(joined.lines or ())
    pipe, other, wrapper_or_tagged = _starts_at()
    if "|" in doc and any(map(pipe.match, repeat(doc, n), joined.line_starts())):
        return True, None
    if "\x1b" in doc:
        return any(map(other.match, repeat(doc, n), joined.line_starts())), None
    found = [m for m in map(wrapper_or_tagged.match, repeat(doc, n), joined.line_starts()) if m]
    return any(m["wrapper"] for m in found), len(found)


def _frames_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A frame's `File "` after anything but a line's head: the two-space indent at a
    line's start, or three spaces after a line's head that ends with a record (`]`) or
    a process tag (`)`)."""
    if '"' not in doc:  # (memchr: 16x faster than the scan, which needs one)
        return False
    for m in _FRAME_INSIDE.finditer(doc):
        p = m.start()
        if doc[p - 3 : p] != "   " or doc[p - 4] not in "])" or not _at_head(doc, p - 3, heads):
            return True
    return False


def _holds(doc: str, needle: str, cap: int = 64) -> bool:
    """`needle in doc`; in a long text tried at each of its first character (found at memchr
    speed) while they are few, then searched for (release's edit: a search costs a pass of
    ~1 ns a character, 2-5 ms over a reflowed 6.5 MB line that holds a `[`, a `T` or a `:` or
    two; a corpus tail's hundreds of `:` and `u` cost the tries more than the search)."""
    if len(doc) < _LONG_TEXT:
        return needle in doc
    c = needle[0]
    p = doc.find(c)
    for _ in range(cap):
        if p < 0:
            return False
        if doc.startswith(needle, p):
            return True
        p = doc.find(c, p + 1)
    # (each occurrence starts at one of `c`, none before p.) By `re`, whose literal search
    # reads each character once: `str.find` of a needle that holds a space crawls through a
    # run of characters its bloom mask takes for one (a 16 KB run of backticks a row, 400
    # rows: `usage: ` and `:     ` 17 -> 34 ms a tail)
    return _literal(needle).search(doc, p) is not None


@cache
def _literal(needle: str) -> re.Pattern[str]:
    """`needle` as a pattern (compiled on first use)."""
    return re.compile(re.escape(needle))


def _raw_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A traceback header, uvicorn's or argparse's line after anything but a line's head."""
    for raw, literal in zip(_RAW_AT, _RAW_LITERALS, strict=True):
        if not _holds(doc, literal):
            continue
        for m in raw.finditer(doc):
            p = m.start()
            if doc[p - 1] != "\n" and not _at_head(doc, p, heads):
                return True
    for m in _UVICORN_AT.finditer(doc) if _holds(doc, ":     ") else ():
        p = m.start() - _UVICORN_LEVEL[doc[m.start() - 1]]
        if doc[p - 1] != "\n" and not _at_head(doc, p, heads):
            return True
    return False


def _records_damaged(doc: str, heads: dict[str, bool], tagged: int | None = None) -> bool:
    """A record anywhere but at a line's start or after its head (one with no record in it).

    Counted first: when every record not at a line's start follows its line's process
    tag, the tail is clean (the one case of the loop below that 0.10+ logs hit on every
    line); only otherwise is each record looked at. A long text with dashes every few
    characters (16 KB runs of them) counts by the colons instead, as each dash costs its
    scan a stop; one with a colon every few characters too (runs of `01-01 01:01:01`)
    skips the count."""
    inside: re.Pattern[str] | None = _RECORD_INSIDE
    back = 3  # (where a match of `inside` is, after its level: the stamp's dash)
    if len(doc) >= 65536 and doc.count("-") * 16 >= len(doc):
        colons = doc.count(":")
        if colons * 16 < len(doc):
            inside, back = _record_inside_by_colon(), 9  # (its first colon)
        elif colons * 8 < len(doc):  # each stop a lookbehind that fails at its first test
            inside, back = _record_inside_by_second_colon(), 12  # (its second colon)
        else:  # a colon every few characters (runs of `-:`): the levels are fewer
            inside = None
    if inside is not None:
        # (how many lines `_TAGGED_RECORD` finds, when counted already; else where each
        # one's record is matched, which the loop reads where the counts differ)
        at_tags = None if tagged is not None else _tagged_at(doc, back)
        count = len(at_tags) if at_tags is not None else tagged or 0
        found = map(_START, inside.finditer(doc))
        first = list(islice(found, count + 1))  # (at most count+1)
        if len(first) == count:
            return False
        at_tags = _tagged_at(doc, back) if at_tags is None else at_tags
        records: Iterable[int] = _untagged_records(
            doc, back, at_tags, chain((first,), _chunks(found))
        )
    else:
        records = _records_inside(doc, inside, back)
    return _any_record_damaged(doc, heads, records)


def _any_record_damaged(doc: str, heads: dict[str, bool], records: Iterable[int]) -> bool:
    """Whether any of `records` (where each starts, in text order) is neither at its line's
    start, nor after its line's process tag, nor after its line's head."""
    for p in records:
        if doc[p - 1] == "\n":
            continue
        start = doc.rfind("\n", 0, p) + 1
        if (
            doc[p - 2 : p] == ") "
            and doc[start] == "("
            and doc.find(") ", start) == p - 2
            and "(" not in doc[start + 1 : p - 2]
        ):
            continue  # after the process tag (one group: `(a)x(b pid=1) ` ran on)
        if not _at_head(doc, p, heads) or "]" in doc[start:p]:
            return True  # (a record right after a record's head: a line of its own)
    return False


_LEVEL_BY_END = {level[-2:]: len(level) for level in _LEVELS}
"""How long a record's level is, by its last two letters."""
_TAGGED_AT = re.compile(
    r"\n\([^()\n]{0,200}\) (?:" + "|".join(_LEVELS) + r") \d\d(-)\d\d \d\d(:)\d\d(:)\d\d"
)
"""`_TAGGED_RECORD`'s lines, each record's dash and colons in a group: where a match of
`inside` is for it (`back` 3, 9, 12 after its level: groups 1, 2, 3)."""
_GROUP_AT = {3: 1, 9: 2, 12: 3}
_START = re.Match.start
_CHUNK = 512
"""How many records `_untagged_records` reads at a time."""


def _tagged_at(doc: str, back: int) -> list[int]:
    """Where `inside` (`back` after a record's level) matches each record right after the
    process tag that starts its line: one place per line `_TAGGED_RECORD` finds."""
    return list(map(methodcaller("start", _GROUP_AT[back]), _TAGGED_AT.finditer(doc)))


def _untagged_records(
    doc: str, back: int, at_tags: list[int], found: Iterable[list[int]]
) -> Iterator[int]:
    """`_records_inside(doc, inside, back)` less the records right after a process tag that
    starts their line, which `_any_record_damaged` passes over; `at_tags` is `_tagged_at`'s,
    `found` where `inside` matched, a list at a time. A tail whose count of them is off by
    one (a run-on line) has its 110 tagged records set aside in C, not looked at one by one
    in Python (ab_tails[194]: the loop's instructions 2.5 -> 1.4M). A record's match is at a
    fixed place after its level, so the sets of match places are compared."""
    tagged = set(at_tags)
    for chunk in found:
        for m in sorted(set(chunk).difference(tagged)) if tagged else chunk:
            at = m - back
            yield at - _LEVEL_BY_END[doc[at - 2 : at]]


def _chunks(found: Iterator[int]) -> Iterator[list[int]]:
    """`found`, `_CHUNK` at a time (the loop may stop at the first record it reads)."""
    while chunk := list(islice(found, _CHUNK)):
        yield chunk


def _records_inside(doc: str, inside: re.Pattern[str] | None, back: int) -> Iterator[int]:
    """Where each record not at a line's start begins, in text order: one scan of `inside`
    (a match `back` characters after its level; release's edit: the levels' five scans of
    the whole text cost 2 ms each on 6.5 MB, where the first record found may settle it).
    Without `inside`, each level's own scan (`_RECORDS_AT`), the line-start records too: the
    caller passes over those. The same records either way: one cannot overlap another (a
    level's letters never stand in a stamp), so five scans of one level each find them all."""
    if inside is None:
        for record in _RECORDS_AT:
            for m in record.finditer(doc):
                yield m.start()
        return
    for m in inside.finditer(doc):
        at = m.start() - back
        yield at - _LEVEL_BY_END[doc[at - 2 : at]]


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
