"""The one parser for vLLM's line wrapping: ANSI, runtime prefixes, process tag, record.

vLLM wraps its messages in layers that changed across releases: a process tag
`(EngineCore_DP0 pid=12)` (ANSI-coloured in some releases), a level, an
`mm-dd HH:MM:SS` timestamp, a `[file.py:N]` source, and then the message. Raw
stderr (tracebacks, tqdm bars) has fewer layers or none. Container runtimes put
their own RFC 3339 timestamp (and a stream name) in front of it all. Rules match
the message only, so every wrapping reduces to the same text.

`head()` is the cheap part (where the message starts, the level, the timestamp)
that triage runs on every line; `parse()` adds the process tag and source for
the few lines a rule or the diagnosis reads. Both use the same expressions.
"""

from __future__ import annotations

import re
from typing import NamedTuple

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z](?:\x1b\[[0-9;?]*[A-Za-z])*")
"""ANSI SGR/CSI escapes (colour, cursor), a run of them at once: what is removed is the
same, and a 16 KB run of codes costs one replacement, not 4,000. It starts with the
literal (as a group's repeat it would not: tried at every character, 9% slower on the
corpus tails)."""

# Docker (`docker logs -t`) and Kubernetes/CRI (`<ts> stdout F <line>`) prefixes.
_RUNTIME = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]+"
    r"(?:(?:stdout|stderr)[ \t]+[FP][ \t]+)?"
)

_TAG = re.compile(r"\((?P<proc>[A-Za-z][^()]{0,80}?) pid=(?P<pid>\d+)[^()]{0,200}\) ?")
"""vLLM's process tag: `(EngineCore_DP0 pid=12)`, `(RayWorkerWrapper pid=3, ip=...)`.
Bounded repeats: a 16 KB run of `pid=1` without a closing parenthesis stays linear."""

RECORD = re.compile(
    r"(?:\([^()]{0,300}\) ?)?"
    r"(INFO|DEBUG|WARNING|ERROR|CRITICAL|WARN) "
    r"(\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+)? "
    r"(\[[^\]]*\]) ?"
)
"""A logging record's prefix: an optional process tag, the level (group 1), the
timestamp (2) and the `[file:line]` source, brackets included (3). Triage matches it on
every line. The group holds the `]`: one that ended before it would put a step between
the run of source characters and the `]`, and `re` would back off the run a character at
a time where now it looks for a `]` (a 16 KB line with none: 80 us, now 5)."""


def split(text: str) -> tuple[int, int, str | None, str | None, str | None]:
    """(tag end, message start, level, timestamp, source) of a line already stripped
    of its wrapping: one match for a record, a tag match only for a tagged raw line.
    (A record ends its source with `]`: a line with none is not matched, where a 16 KB
    one costs the match a scan.)"""
    rec = RECORD.match(text) if "]" in text else None
    if rec is not None:
        level = rec[1]
        src = rec[3][1:-1]
        return (
            rec.start(1),
            rec.end(),
            "WARNING" if level == "WARN" else level,
            rec[2],
            src if ":" in src and " " not in src else None,
        )
    end = tag_end(text)
    return end, end, None, None, None


def tag_end(text: str) -> int:
    """Where a raw line's process tag ends (0: none)."""
    if text[:1] != "(":
        return 0
    m = _TAG.match(text)
    return m.end() if m is not None else 0


class Head(NamedTuple):
    """Where a line's message starts, and the record's level and timestamp (None for
    raw stderr). `text` is the line less CR, ANSI codes and a runtime prefix."""

    text: str
    start: int
    level: str | None
    timestamp: str | None
    tag_end: int
    """Where the process tag ends (0: no tag)."""
    source: str | None


class LogLine(NamedTuple):
    """One line of output with vLLM's wrapping taken apart.

    `message` is what the rule patterns see. For a raw stderr line (a traceback,
    a progress bar) it is the line itself, less ANSI codes and prefixes.
    """

    number: int
    raw: str
    message: str
    process: str | None = None
    pid: int | None = None
    level: str | None = None
    timestamp: str | None = None
    source: str | None = None

    @property
    def is_error(self) -> bool:
        """ERROR or CRITICAL records."""
        return self.level in ("ERROR", "CRITICAL")


_CODE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
"""One code, as `ANSI` reads each of a run."""
_LONG = 1024


def strip_codes(text: str) -> str:
    """`ANSI.sub("", text)`: colour codes removed. A long text is first cut of the code
    it opens with (`str.replace`, C speed), which is the whole answer when what is left
    holds no code: that code holds no ESC but its first, so no other code overlaps one,
    and each other would be left whole; the pattern reads each alike. A 16 KB run of one
    code costs 4 us, where the pattern takes a step per code (65 us). Tried only where
    that code is dense and the only one (a run of it): a coloured tail joined, or a run
    of several codes, would be cut in vain (16 KB of random codes: 150 us, not 85). A text
    without an ESC holds no code (each starts with one): found at memchr speed, where the
    pattern's search took 18 us a 16 KB line (a long coloured tail's plain lines)."""
    last = text.rfind("\x1b")
    if last < 0:
        return text
    if len(text) - last > _LONG:
        # No code past the last ESC's (a code holds one ESC, its first, so every one before
        # it ends before it, and a run of codes would go on only at another ESC): the rest is
        # copied (a reflowed line that 12 KB of codes lead, then 6.5 MB of text: 5 ms a call).
        m = _CODE.match(text, last)
        end = m.end() if m is not None else last + 1
        if len(text) - end > _LONG:
            return strip_codes(text[:end]) + text[end:]
    if len(text) >= _LONG:
        repeated = _repeated(text)
        if repeated is not None:
            return repeated
        first = _CODE.search(text, 0, 256)
        # (each ESC of the first 512 characters opens that code, the last one's end past
        # them too: a code the window's end cuts sent 16 KB of them to the pattern, 70 us)
        if first is not None and 16 <= text.count(first[0], 0, 511 + len(first[0])) == text.count(
            "\x1b", 0, 512
        ):
            cut = text.replace(first[0], "")
            if "\x1b" not in cut or _CODE.search(cut) is None:
                return cut
    return ANSI.sub("", text)


_UNIT = 512


def _repeated(text: str) -> str | None:
    """`ANSI.sub("", text)` of a text that from its first ESC on repeats one unit of at
    most 512 characters (16 KB of `\x1b[1m\x1b[0;36m\x1b[32m\x1b[0m`: 100 us for the
    pattern, 2 here); None for any other text. What comes before the first ESC holds no
    code. A code holds no ESC but its first, so one that starts in a copy ends in it: each
    copy starts with an ESC, which closes no code the copy before left open (16 KB of
    `\x1b[`: 120 us for the pattern). The answer is the head, the unit's once per copy, and
    that of the copy cut short at the end (which ends the text, as it ends that copy)."""
    at = text.find("\x1b")
    if at < 0:
        return None
    return _cut(text, at, text.find(text[at : at + 32], at + 1, at + _UNIT + 32) - at)


def _cut(text: str, at: int, step: int) -> str | None:
    """`_repeated`'s answer when `text` repeats `text[at : at + step]` from `at` on: to its
    end, or over a stretch of 1024 characters or more that a different rest follows (a run
    of codes, or of ESCs that open none, ended by a line's own text: `\x1b[` * 8,000 + ` 12`
    cost the pattern 125 us a 16 KB row, a stop at each ESC)."""
    if step <= 0 or len(text) - at < 2 * step:
        return None
    if text[-64:] == text[-64 - step : -step] and text[at + step :] == text[at:-step]:
        unit = text[at : at + step]
        copies = (len(text) - at) // step
        return text[:at] + strip_codes(unit) * copies + strip_codes(text[at + copies * step :])
    unit = text[at : at + step]
    good = _copies(text, at, unit)
    if good * step < _LONG:
        return None
    # Each copy starts with an ESC, so each code lies inside one copy (as above); the rest is
    # taken from the last good copy on, so it starts with an ESC too: it closes no code the
    # copies before it left open.
    copies = good - 1
    return text[:at] + strip_codes(unit) * copies + ANSI.sub("", text[at + copies * step :])


def _copies(text: str, at: int, unit: str) -> int:
    """How many copies of `unit` follow each other from `at` on (1 at least: `unit` is
    `text`'s from `at`), told by counts of `unit` in C over stretches that double, then
    halve: a stretch of k copies' length is k copies where `unit` is counted k times in it
    (k occurrences that do not overlap fill it). Linear in the stretch, and no copy made."""
    step = len(unit)
    most = (len(text) - at) // step

    def all_copies(i: int, j: int) -> bool:
        return text.count(unit, at + i * step, at + j * step) == j - i

    good, size = 1, 1
    while good < most:
        end = min(good + size, most)
        if all_copies(good, end):
            good, size = end, 2 * size
            continue
        while end - good > 1:  # the first copy that differs is in [good, end)
            mid = (good + end) // 2
            if all_copies(good, mid):
                good = mid
            else:
                end = mid
        break
    return good


def strip_wrapping(raw: str) -> str:
    """Drop CR, ANSI codes and a container-runtime prefix; keep everything else."""
    text = raw.rstrip("\r\n")
    if "\x1b" in text:
        text = ANSI.sub("", text) if len(text) < _LONG else strip_codes(text)
    if text[:1].isdigit():
        m = _RUNTIME.match(text)
        if m is not None:
            text = text[m.end() :]
    return text


def head(raw: str) -> Head:
    """The cheap split of one line: message start, level, timestamp."""
    text = strip_wrapping(raw)
    tag_end, start, level, ts, src = split(text)
    return Head(text, start, level, ts, tag_end, src)


def parse(raw: str, number: int = 0) -> LogLine:
    """Parse one line; `number` is its 1-based line number."""
    h = head(raw)
    process: str | None = None
    pid: int | None = None
    if h.tag_end:
        m = _TAG.match(h.text)
        if m is not None:
            process, pid = m["proc"], int(m["pid"])
    return LogLine(
        number, raw, h.text[h.start :].strip(), process, pid, h.level, h.timestamp, h.source
    )
