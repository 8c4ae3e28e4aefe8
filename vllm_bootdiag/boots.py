"""Boots: where the last boot in a tail starts, so that boot is the one classified.

A worker's log can hold the end of an earlier boot (a restart, an upgrade, a
supervisor's relaunch appended to the same file). Classifying the whole tail
would read the old boot's version and its failure. A boot starts at the API
server's version line or the banner once the boot before it got anywhere (a
phase past the arguments and the engine config, or an error line; a warning or
a launcher's line before the version line is not a boot); at an engine's
`Initializing a V1 LLM engine (vX)` of another version; or where a new API
server pid appears.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from operator import itemgetter

from .outcomes.lifecycle import error_looking_at_start, may_look_like_error
from .rules.markers import _RAW_MARKERS
from .text.triage import SEARCH_WIDTH, Tail

_START_KEYS = frozenset({"api_version", "banner_version"})
_WEAK_KEYS = frozenset({"platform", "import"})
"""Lines a boot prints first (importing vLLM, parsing arguments) but that a spawned
process may print again: a boot start only after a failure line."""
_IMPORT_LINES = (
    "usage: vllm",
    "Triton is installed",
    "Triton not installed",
    "Triton is not installed",
    "Failed to import from vllm._C",
)
"""What importing vLLM prints (any level, or raw) and argparse's `usage:` line, which
opens the two lines of a boot that ended in argument parsing."""
_IMPORT_GATES = tuple(
    (gate, tuple(lit for lit in _IMPORT_LINES if lit.startswith(gate)))
    for gate in ("usage: vllm", "Triton", "Failed to import from vllm._C")
)
"""`_IMPORT_LINES` by a common start: one search of the text per start (the text is
often wide Unicode, the banner's block characters, where each search costs). argparse's
first: where the clean-tail check counted no `usage: `, its search is left out. (`Triton`
without its space: a search for a word that ends in a space crawls through a text dense in
spaces or in characters the needle holds, 2 ms for 40 rows of 16 KB of `.` behind a tag.)"""
_WIDE_TEXT = 2**20
"""Past this many characters in a tail (400 lines of 16 KB), import lines are looked for
in each line's first SEARCH_WIDTH characters, as rule literals are: where vLLM prints
them, they open the message."""
_VERSION_KEYS = _START_KEYS | {"engine_init"}
"""Markers whose message states a version."""
_OPENING_KEYS = _START_KEYS | _WEAK_KEYS
_QUIET_PHASES = frozenset({None, "arguments", "engine_init"})
"""Phases that do not mean a boot got anywhere: the argument dump, engine config."""
_RAW_BUSY = "raw progress"
"""The key of a raw progress line (tqdm, uvicorn's `Application startup complete`):
busy, so a boot that got that far keeps it, and the next boot's phase is its own."""
_API_TAG = "(APIServer pid="
_ARGPARSE_ERROR = re.compile(r"[\w .-]{1,80}: error: ")
"""argparse's `vllm serve: error: argument --dtype: ...`: a boot that ended at once."""


@dataclass(frozen=True, slots=True)
class Boots:
    """Where each boot in the tail starts (0-based indices, the first is 0)."""

    starts: tuple[int, ...]

    @property
    def last(self) -> int:
        return self.starts[-1]

    @property
    def count(self) -> int:
        return len(self.starts)


_ONE = Boots((0,))


_TAG_LEN = len(_API_TAG)
_KEY = itemgetter(1)
_API_REACH = 40 + len(_API_TAG)
"""The tag opens the line (after ANSI or a runtime prefix): it starts within 40 characters,
so no search goes further (a 16 KB line costs what a short one does)."""


def _api_pid(line: str) -> str | None:
    """The API server's pid its tag names (ASCII digits: a pid a paste garbled,
    `pid=2865··0`, names no other server)."""
    k = line.find(_API_TAG, 0, _API_REACH)
    if k < 0:
        return None
    end = line.find(")", k)
    pid = line[k + _TAG_LEN : end] if end > 0 else None
    return pid if pid is not None and pid.isdigit() and pid.isascii() else None


def _last_failure(tail: Tail, start: int, end: int) -> int | None:
    """The last error record or exception line among the candidate lines in [start, end)."""
    other, lines = tail.other, tail.lines
    k = bisect_right(other, end - 1) - 1
    while k >= 0 and other[k] >= start:
        i = other[k]
        k -= 1
        if not may_look_like_error(lines[i]):
            continue  # no error word: neither an error record nor an error's wording
        line = tail.parsed(i)
        msg = line.message
        if line.is_error or error_looking_at_start(msg) or _ARGPARSE_ERROR.match(msg):
            return i
    return None


def _first_maybe_failure(tail: Tail) -> int | None:
    """The first candidate line `_last_failure` may read as a failure (`may_look_like_error`:
    an error word, colour codes or a long line), None where there is none: no failure line
    lies before it, so no weak event before it can start a boot."""
    lines = tail.lines
    for i in tail.other:
        if may_look_like_error(lines[i]):
            return i
    return None


def _offset(tail: Tail, index: int) -> int:
    """Where the newline before `tail.lines[index]` is in `tail.doc` (its length past the
    last line), from the nearer end: the lines' lengths summed in C."""
    lines = tail.lines
    if 2 * index <= len(lines):
        return sum(map(len, lines[:index])) + index
    return len(tail.doc) - sum(map(len, lines[index:])) - (len(lines) - index)


def _one_pid_before(
    doc: str, end: int, untagged: tuple[str, tuple[str, ...]] | None = None
) -> bool | None:
    """Whether `doc[:end]` holds an API server's tag (False: none), where every such tag
    names one pid; None where two pids may differ, or a tag is not closed on its line.

    `untagged`: `Joined.untagged` of `doc` (the tags that start lines taken off). Where it
    holds one API server's tag at most and its text none before `end`, every such tag in
    `doc[:end]` is that one at a line's start (a tag holds no `(` but its first, no newline
    and no colour code), so one search for it answers, not the two counts below
    (`_one_pid_before_long`, held equal by tests/test_boots_one_pid.py). The text is `doc`
    less its tags and codes: what `doc[:end]` holds lies in its first `end` characters, and
    that much is searched, not the lines after (the failure and its traceback)."""
    if untagged is not None:
        text, tags = untagged
        api = [tag for tag in tags if tag.startswith(_API_TAG)]
        if len(api) <= 1 and text.find(_API_TAG, 0, end) < 0:
            return bool(api) and doc.find(api[0], 0, end) >= 0
    return _one_pid_before_long(doc, end)


def _one_pid_before_long(doc: str, end: int) -> bool | None:
    """`_one_pid_before` by the tags in `doc` alone: the first, and whether each names its pid."""
    at = doc.find(_API_TAG, 0, end)
    if at < 0:
        return False
    close = doc.find(")", at, end)
    if close < 0 or "\n" in doc[at:close]:
        return None
    if doc.count(_API_TAG, 0, end) != doc.count(doc[at : close + 1], 0, end):
        return None
    return True


def _import_lines(tail: Tail, first: int = 0, at: int = 0) -> list[int]:
    """Indices of the lines from `first` on (whose newline is at `at` in the joined text)
    that hold an import-time line (searched once, in the joined text: these lines can be
    records of any level or raw stderr)."""
    text = tail.doc
    if len(text) > _WIDE_TEXT:  # messages say what they are up front
        text = "\n".join(["", *(line[:SEARCH_WIDTH] for line in tail.lines)])
        first, at = 0, 0
    positions: list[int] = []
    # (argparse's line holds `usage: `, which the clean-tail check counted: none, no search)
    gates = _IMPORT_GATES[1:] if tail.usages == 0 else _IMPORT_GATES
    for gate, literals in gates:
        pos = text.find(gate, at)
        while pos >= 0:
            if text.startswith(literals, pos):
                positions.append(pos)
            pos = text.find(gate, pos + 1)
    if not positions:
        return positions
    positions.sort()
    found: list[int] = []
    line, start = first - 1, at  # the text holds the newline before line `first` at `at`
    for pos in positions:  # a handful: count the newlines between them in C
        line += text.count("\n", start, pos)
        start = pos
        if not found or found[-1] != line:
            found.append(line)
    return found


def find(tail: Tail, phase_of: dict[str, str | None]) -> Boots:
    """The boots of a tail, read from its progress markers (`phase_of`: marker -> phase).

    A new boot starts on the line after the previous boot's last busy line (a phase
    past the arguments, or an error), so the platform and argument lines printed
    before the version line stay with the boot they belong to.

    An import line is a weak event: it starts a boot only after a failure line, so the
    import lines before the first line that may be one are not searched for (a booted log's
    tail searches none). Such a line can still name an API server's pid, which is read
    where a server's pid changes; so that search is skipped only where every tag before
    that line names one pid, and the walk past it holds the pid one of them set.
    """
    first = _first_maybe_failure(tail)
    edge = len(tail.lines) if first is None else first
    # (an import line is no busy line where `phase_of` gives it no phase)
    if edge > 0 and len(tail.doc) <= _WIDE_TEXT and phase_of.get("import") in _QUIET_PHASES:
        at = _offset(tail, edge)
        tagged = _one_pid_before(tail.doc, at, tail.untagged)
        if tagged is not None:
            found = _walk(tail, phase_of, _import_lines(tail, edge, at), first, edge, tagged)
            if found is not None:
                return found
    found = _walk(tail, phase_of, _import_lines(tail), first, 0, False)
    assert found is not None  # (tagged=False: the walk never gives up)
    return found


def _walk(
    tail: Tail,
    phase_of: dict[str, str | None],
    imports: list[int],
    first: int | None,
    edge: int,
    tagged: bool,
) -> Boots | None:
    """`find`'s walk over the events, where `imports` are the import lines from `edge` on;
    None where a line before `edge` holds a server's tag and no event before it set the pid
    (an import line there may have: the caller searches them all)."""
    markers = tail.markers
    weak = [(i, "import", "", "") for i in imports]
    for literal, _phase, _device in _RAW_MARKERS:
        raw = tail.find(literal)
        if raw:
            weak += [(i, _RAW_BUSY, "", "") for i in raw]
    events = sorted(markers + weak) if weak else markers
    if not events:
        return _ONE
    # a version tells boots apart only where two lines state one: else none is read (the
    # weak events state none; counted in C)
    versioned = sum(map(_VERSION_KEYS.__contains__, map(_KEY, markers))) > 1
    lines = tail.lines
    starts = [0]
    last = 0
    """Where the current boot starts (`starts[-1]`)."""
    version = None
    pid: str | None = None
    busy: int | None = None
    """The last line of the current boot that shows it got somewhere."""
    # no failure line lies before `first` (none at all where it is None)
    after = -1 if first is None else first
    asked: tuple[int, int, int | None] = (-1, -1, None)
    """(since, up to, the last failure in between): `_last_failure`'s last answer."""
    for i, key, message, _ts in events:
        if tagged and i >= edge:  # the walk leaves the lines whose import lines it skipped
            if pid is None:
                return None
            tagged = False
        found = None
        if versioned and key in _VERSION_KEYS:
            d = tail.stated_version(i, message)
            found = d.version if d is not None else None
        line = lines[i]  # `_api_pid`, inline (a call per event costs more than its test)
        k = line.find(_API_TAG, 0, _API_REACH)
        this_pid = None
        if k >= 0:
            close = line.find(")", k)
            if close > 0:
                this_pid = line[k + _TAG_LEN : close]
                if not (this_pid.isdigit() and this_pid.isascii()):
                    this_pid = None
        new = False
        if key in _OPENING_KEYS:
            since = last if busy is None else busy
            failed = None
            if since < i and i > after >= 0:
                # the last failure since the same line as the last ask, up to a later one: the
                # lines it read are not read again (400 import lines and no failure among
                # them: each asked of every line before it, 0.2 s)
                if since == asked[0] and asked[1] <= i:
                    failed = _last_failure(tail, asked[1], i)
                    if failed is None:
                        failed = asked[2]
                else:
                    failed = _last_failure(tail, since, i)
                asked = (since, i, failed)
            busy = failed if failed is not None else busy
            new = busy is not None if key in _START_KEYS else failed is not None
        if not new:
            new = (found is not None and version is not None and found != version) or (
                this_pid is not None and pid is not None and this_pid != pid
            )
        if new and i > last:
            last = min(i, busy + 1) if busy is not None and busy >= last else i
            starts.append(last)
            busy = None
            version = None
            pid = None
        if found is not None:
            version = found
        if this_pid is not None:
            pid = this_pid
        if key == _RAW_BUSY or phase_of.get(key) not in _QUIET_PHASES:
            busy = i
    return Boots(tuple(starts))
