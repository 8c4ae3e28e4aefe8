"""BootWatcher: classify a boot as its lines arrive, and say the moment it ended.

It reads each line with the same matcher and RuleSet as `classify` (a line at
a time), and its final Diagnosis comes from the same pipeline, streaming mode.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from packaging.version import Version

from .. import logtail, outcomes, timeline, versions
from ..diagnosis import Diagnosis
from ..rules.ruleset import RuleSet, resolve
from ..rules.schema import Rule
from ..text import logline, triage
from .diagnose import PROGRESS_RULES
from .match import line_rules

_VERSION_LITERALS = ("API server version", "LLM engine (v", "version ")
"""A line that names a version holds one of these (feed tests them inline, the engine's
first: its line runs 4 KB past it, and a generator per such line cost more than the test)."""
_MAX_LINE = logtail.MAX_LINE_CHARS
_sort_line, _PROGRESS, _CANDIDATE = triage.sort_line, triage.PROGRESS, triage.CANDIDATE
_FRAME_STARTS = triage.FRAME_STARTS
_SORT = re.compile(
    r"(?:\(([^()]{0,300})\)(?: |(?! ))|)"
    r"(?:(?:(INFO|DEBUG)|(WARNING|WARN)|(ERROR|CRITICAL)) "
    r"\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+|) \[[^\]]*\](?: |)"
    r"|(    |  File |(?:\[rank\d+\]:|)\[?W\d{4} \d\d:\d\d:\d\d))"
)
"""`triage.sort_line` in one match, for a line without CR, and without colour codes
once `strip_codes` took them off (as sort_line does), that has no runtime prefix (no
match, and a digit first: sort_line reads it): an optional tag (group 1, its space taken
when there is one, as `logline.tag_end` takes it), then `logline.RECORD`'s level in three
groups (2: progress, 3: a warning, 4: an error, a frame after it skipped), or else (5) a
raw line's traceback frame or torch warning, after a tag only if it is a process tag
(`_PROCESS_TAG`, which feed tests on the tag read: the pattern reads the tag once for both
kinds, where one branch each read it twice, a tagged frame's match 2.4x the time). No
match, a tag first: sort_line reads it (a process tag too long for the pattern's, or a
raw line after a tag). One match and a branch where `sort_line` costs a call and two or
three (tests/test_watcher_sort.py holds them equal)."""
_SORT_MATCH, _strip_codes, _strip_ansi = _SORT.match, logline.strip_codes, logline.ANSI.sub
_PROGRESS_GROUP, _ERROR_GROUP, _FRAME_GROUP = 2, 4, 5
_PROCESS_TAG = logline._TAG.fullmatch
"""A process tag, whole (what a raw line's frame may follow): `logline.tag_end`'s."""


def _up_rules(rules: RuleSet) -> tuple[Rule, ...]:
    """The rules that read a progress line and say the boot is up (the server start:
    `Starting vLLM server on http://...`), as classify reads them."""
    ids = dict.fromkeys(i for key in PROGRESS_RULES.values() for i in key)
    found = (rules.get(i) for i in ids)
    return tuple(
        r for r in found if r is not None and not outcomes.OUTCOME_TYPES[r.outcome].FAILURE
    )


_UP: dict[int, tuple[RuleSet, tuple[tuple[Rule, ...], tuple[str, ...]]]] = {}


def _up_of(rules: RuleSet) -> tuple[tuple[Rule, ...], tuple[str, ...]]:
    """The reporting server-start rules of a RuleSet and their literals, kept per RuleSet
    (as `match` keeps its word index): a watch starts, and changes version, per boot."""
    cached = _UP.get(id(rules))
    if cached is not None and cached[0] is rules:
        return cached[1]
    up = tuple(r for r in _up_rules(rules) if r.reports)
    if len(_UP) >= 256:
        _UP.clear()
    _UP[id(rules)] = (rules, (up, tuple(r.literal for r in up)))
    return _UP[id(rules)][1]


class BootWatcher:
    """Classify as lines arrive; report the moment a terminal line shows up.

    A worker's output pump calls `feed(line)` for every line; the first line
    that ends the boot (a root cause, or the server coming up) makes `feed`
    return the Diagnosis, so the worker can stop waiting for a health check
    that will never pass. Later lines are still kept for `diagnosis()`.

    A rule that is not `terminal` (a generic line whose specific cause follows,
    like pydantic's `1 validation error for ModelConfig`) is reported once
    SETTLE_LINES more lines have arrived without a terminal one.
    """

    SETTLE_LINES = 3

    def __init__(
        self,
        version: str | None = None,
        lines: int = logtail.DEFAULT_LINES,
        *,
        rules: RuleSet | None = None,
        extra_rules: Iterable[Rule] = (),
        first_line: int = 1,
    ) -> None:
        """`first_line`: the number of the first line fed in the whole log (a watch that
        starts at the last boot of a file), so evidence cites the file's lines."""
        self._rules = resolve(rules, extra_rules)
        self._hint = version
        self._lines: deque[str] = deque(maxlen=lines)
        self._version: Version | None = None
        self._active = self._rules
        """The rules for the version in force (the log's, else the hint)."""
        self._up: tuple[Rule, ...] = ()
        """Of those, the server-start rules (see `_up_rules`) a report may rest on."""
        self._up_literals: tuple[str, ...] = ()
        self._frame_heads: tuple[str, ...] = _FRAME_STARTS
        """How a frame starts (`_SORT`'s group 5 less torch's warnings): untagged, or after
        the process tag that the last tagged frame followed and its space. A line that
        starts so is one, known without the match (a traceback's lines come in a run)."""
        self._use_version(versions.parse_version(version) if version else None)
        self._reported: Diagnosis | None = None
        self._pending = -1
        """Lines still to wait after a non-terminal failure line (-1: none pending)."""
        self._fed = first_line - 1
        """Lines fed so far (and before `first_line`): evidence cites a line's number in
        the whole stream."""

    @property
    def reported(self) -> Diagnosis | None:
        """The Diagnosis `feed` returned, if it has."""
        return self._reported

    def feed(self, line: str) -> Diagnosis | None:
        """Add one line; return a Diagnosis the first time the boot has ended. A line read
        as bytes (a pipe opened without text=True) is decoded as a log file is."""
        try:
            plain = (
                "\n" not in line
                and "\r" not in line
                and "\x00" not in line
                and len(line) <= _MAX_LINE
            )
        except TypeError:  # bytes, or not text at all: no cost to a str line
            if not isinstance(line, (bytes, bytearray)):
                raise TypeError(f"feed() takes a line of text, not {type(line).__name__}") from None
            return self.feed(logtail.decode(bytes(line)))
        if not plain:  # NULs dropped, as classify drops them (the line is read without)
            text = line.replace("\x00", "") if "\x00" in line else line
            for part in logtail.split_lines(text, None) or [""]:
                result = self._feed_one(part)
                if result is not None:
                    return result
            return None
        # What _feed_one does for a line split_lines gives as it is, the sort in one match
        # (feed runs per line: a call or a scan less per line is what it costs).
        self._lines.append(line)
        self._fed += 1
        if ("version" in line or "LLM engine (v" in line) and (
            "LLM engine (v" in line or "version " in line or "API server version" in line
        ):  # `_VERSION_LITERALS`
            self._detect(line)
        if self._reported is not None:
            return None
        if "\x1b" in line:  # as strip_wrapping does: the pattern itself on a short line
            text = _strip_ansi("", line) if len(line) < 1024 else _strip_codes(line)
        else:
            text = line
        if text.startswith(self._frame_heads):  # a traceback's frame or source line
            return self._settle() if self._pending > 0 else None
        m = _SORT_MATCH(text)
        if m is None:
            if text[:1] == "(" or text[:1].isdigit():  # see _SORT; a runtime's prefix
                return self._sorted(line, *_sort_line(line)[:3])
            return self._sorted(line, _CANDIDATE, text, 0)
        k = m.lastindex
        if k == _PROGRESS_GROUP:
            for literal in self._up_literals:  # a loop: cheaper than any() on every line
                if literal in text:
                    if self._is_up(text[m.end() :]):
                        return self._report()
                    break
        elif k == _ERROR_GROUP:
            if not text.startswith(_FRAME_STARTS, m.end()):
                return self._sorted(line, _CANDIDATE, text, 0)
        elif k == _FRAME_GROUP and m.start(1) >= 0:  # a frame, or torch's warning, after a tag
            if _PROCESS_TAG(text, 0, m.end(1) + 1) is None:
                return self._sorted(line, _CANDIDATE, text, 0)
            tag = text[: m.end(1) + 1]  # a process tag: the next frames most often follow it
            self._frame_heads = (*_FRAME_STARTS, tag + "     ", tag + "   File ")
        return self._settle() if self._pending > 0 else None

    def _feed_one(self, line: str) -> Diagnosis | None:
        """One line of the parts `split_lines` cut a line into, sorted by sort_line."""
        self._lines.append(line)
        self._fed += 1
        # The log's own version wins over the caller's hint (and a later boot's over
        # an earlier one's): rules are chosen for what is running.
        if ("version" in line or "LLM engine (v" in line) and (
            "LLM engine (v" in line or "version " in line or "API server version" in line
        ):  # `_VERSION_LITERALS`
            self._detect(line)
        if self._reported is not None:
            return None
        # Warnings and traceback frames never end a boot; of the progress lines, only the
        # server start does (classify reads it too: the boot is up).
        if line[:1] == " " and line.startswith(_FRAME_STARTS) and "\x1b" not in line:
            # a traceback frame or its source line (what sort_line says)
            return self._settle() if self._pending > 0 else None
        return self._sorted(line, *_sort_line(line)[:3])

    def _detect(self, line: str) -> None:
        """The rules for the version a line names, if it names one not in force."""
        found = versions.stated(line)
        # (`parse_version` keeps each Version: the one in force is most often the same object)
        if found is not None and found is not self._version and found != self._version:
            self._use_version(found)

    def _sorted(self, line: str, kind: str, text: str, start: int) -> Diagnosis | None:
        """What a line sorted as `kind` (`text` from `start` its message) does to the watch."""
        if kind == _PROGRESS:
            for literal in self._up_literals:
                if literal in text:
                    if self._is_up(text[start:]):
                        return self._report()
                    break
        elif kind == _CANDIDATE:
            for rule in line_rules(line, self._active, reporting=True):
                if rule.terminal:
                    return self._report()
                if self._pending < 0:
                    self._pending = self.SETTLE_LINES + 1
        return self._settle() if self._pending > 0 else None

    def _settle(self) -> Diagnosis | None:
        """Count a line down after a non-terminal failure line; report when it settled."""
        if self._pending > 0:
            self._pending -= 1
            if self._pending == 0:
                return self._report()
        return None

    def _use_version(self, version: Version | None) -> None:
        self._version = version
        self._active = self._rules.for_version(version)
        self._up, self._up_literals = _up_of(self._active)

    def _is_up(self, message: str) -> bool:
        """A server-start rule reads this progress message, as classify reads it."""
        ids = PROGRESS_RULES.get(timeline.progress_key(message) or "", ())
        return any(r.id in ids and r.match(message) is not None for r in self._up)

    def _report(self) -> Diagnosis:
        self._reported = self.diagnosis()
        return self._reported

    def diagnosis(self) -> Diagnosis:
        """Classify everything fed so far."""
        from .. import pipeline

        hint = self._hint or (str(self._version) if self._version else None)
        first = self._fed - len(self._lines) + 1
        return pipeline.run(list(self._lines), hint, self._rules, first_line=first, lookahead=False)
