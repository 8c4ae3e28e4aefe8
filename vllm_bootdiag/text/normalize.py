"""Undo paste damage before any rule runs: an ordered list of named repair steps.

The logs users hand over are not what vLLM printed: a CI page put a gutter and a
timestamp in front of every line, a terminal hard-wrapped them at 80-120 columns
(even mid-word), a paste lost its newlines, compose, journald, docker's json-file
driver, stern or a launcher added their own prefixes, a markdown quote or fence
surrounds them. Each step undoes one such damage and is a no-op on what vLLM prints
itself, so a clean log comes back unchanged (the corpus test holds every log to it).

Every step is linear in its input: anchored prefix patterns, one search per line for
collapsed records, and one forward pass for rejoining. `lookahead=False` (a stream,
one line at a time) turns off the steps that need the following lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import regex

from .wrappers import (
    ESC_CSI,
    FENCE,
    OTHER_PREFIX_AT_START,
    PIPE_PREFIX_AT_START,
    PREFIX_NAMES,
    PREFIXES,
    ansi_text,
    json_log,
    strip_prefixes,
)


@dataclass(frozen=True, slots=True)
class Line:
    """One logical line after repair, with where it came from in the original input."""

    text: str
    """Repaired text of one logical line."""
    first: int
    """1-based line number in the original input (file line when known)."""
    last: int
    """Last original line it was built from (== first unless rejoined)."""
    repairs: tuple[str, ...] = ()
    """Names of the repair steps that changed it."""


@dataclass(frozen=True, slots=True)
class Repair:
    """One named repair step, in the order `normalize` runs them."""

    name: str
    why: str
    lookahead: bool = False
    """Needs the lines after the one it repairs (off when streaming)."""


_HEAD = regex.compile(
    r"[ \t]*(?:\x1b\[[0-9;]*m)*(?:\([A-Za-z][\w =.-]*? pid=\d+\)(?:\x1b\[[0-9;]*m)* ?)?"
    r"(?:(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[[^\]\s]+:\d+\])?[ \t]*"
)
"""Where a line's message starts: after indentation, a process tag and a record prefix."""
_SPLIT = regex.compile(
    r"(?:\([A-Za-z][\w =.-]{0,60}? pid=\d+\) ?)?"
    r"(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? "
    r"\[[^\]\s]+:\d+\]|(?:INFO|WARNING|ERROR):     |usage: )"
    r"|Traceback \(most recent call last\):"
    r"|File \"[^\"\n]{1,400}\", line \d+, in "
)
"""Starts of a new record inside a line whose newlines were lost."""
_EXC = regex.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt): ")

_STRONG_START = regex.compile(
    r"[ \t]*$|[ \t]*(?:\x1b\[[0-9;]*m)*\((?:[A-Za-z][\w =.-]*? )?pid=\d+\)"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"
    r"|Traceback \(most recent|[ \t]{2}"
)
"""A row that begins a line of its own even when the row above is full width."""
_START = regex.compile(
    _STRONG_START.pattern
    + r"|During handling of|The above exception|usage: |[\w .-]+: error: "
    + r"|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)(?::|\s*$)"
    + r"|\[rank\d|\[?[WEIF]\d{4} |(?:INFO|WARNING|ERROR|DEBUG|CRITICAL):"
    + r"|\S*\.py:\d+: |.*(?:%\||it/s\]|s/it\])"
    + r"|Process [\w.-]+:\s*$"
)
"""A row that begins a new line: a record, a frame, an exception, a warning, a bar,
multiprocessing's `Process EngineCore:` header over a child's traceback."""
_CONTINUES = regex.compile(
    r"Based on the available memory|Try |See (?:https?:|root cause|stack trace)|Failed core proc"
    r"|Tried to allocate|GPU \d|Including non-PyTorch|Of the allocated memory|If reserved but"
    r"|Process \d|Consider |Decrease |Increase |Reduce |Please (?:try|check|install|use)"
    r"|This (?:happens|may)|To (?:fix|allow|enable|resolve)|On the CPU backend|Got |Use "
    r"|Supported architectures|Initial free memory|You must|Required number|Total number"
    r"|Reason: |Allowed NUMA nodes|which |or |and "
)
"""How the later sentences of vLLM's and torch's multi-sentence errors begin (read from
the rule examples and the corpus): after an error line, such a row goes on with it."""
_ROUND_WIDTHS = frozenset((80, 100, 120, 132, 140, 150, 160, 180, 200, 240, 250))
"""Terminal widths: with one full row only, a row this long was cut by a terminal
(mid-word); any other length, by an editor at a word break."""
_PYDANTIC_HEAD = regex.compile(r"\d+ validation errors? for [\w.]+$")


def _split_collapsed(text: str) -> list[str] | None:
    """Cut a line at each record start after its own: the newlines a paste lost."""
    if "\x1b" in text:
        text = ESC_CSI.sub("", text)  # only a line that is cut comes back without them
    head = _HEAD.match(text)
    pos = head.end() if head is not None else 0
    m = _SPLIT.search(text, pos)
    if m is not None and m.start() == pos:
        m = _SPLIT.search(text, m.end())
    if m is None:
        return None
    parts: list[str] = []
    start = 0
    while m is not None:  # each search starts where the last match ended: one pass
        cut = m.start()
        part = text[start:cut].rstrip()
        if part.strip():
            parts.append(part)
        start = cut
        end = m.end()
        m = _SPLIT.search(text, end)
        if m is not None and not text[end : m.start()].strip() and text[cut] != "T":
            m = _SPLIT.search(text, m.end())  # a record's own message: `Traceback ...`
    parts.append(text[start:])
    out: list[str] = []
    for part in parts:
        if part.startswith('File "'):
            part = "  " + part
            exc = _EXC.search(part, part.find(", in ") + 5)
            if exc is not None:
                out.extend((part[: exc.start()].rstrip(), part[exc.start() :]))
                continue
        out.append(part)
    return out if len(out) > 1 else None


def _first_word(text: str) -> int:
    stripped = text.lstrip(" ")
    cut = stripped.find(" ")
    return len(text) - len(stripped) + (cut if cut >= 0 else len(stripped))


def _is_error(text: str) -> bool:
    """An exception line or an ERROR record: the lines whose message a reflow splits."""
    head = _HEAD.match(text)
    msg = text[head.end() :] if head is not None else text
    if _PYDANTIC_HEAD.search(msg):
        return False
    level = head["level"] if head is not None else None
    return bool(_EXC.match(msg)) or level in ("ERROR", "CRITICAL")


def _continues(prev: str, row: str) -> bool:
    """`row` carries on the error message of `prev` (a reflowed paste)."""
    if _START.match(row) or " " not in row.strip() or not _is_error(prev):
        return False
    if row[:1].islower() or _CONTINUES.match(row):
        return True
    end = prev.rstrip()[-1:]
    return end.isalnum() or end in ",;:(-"


def _starts_quickly(row: str) -> bool:
    """A row that surely starts a line of its own, told with string tests only."""
    return (
        row.startswith(_QUICK_STARTS) or (row[:1] == "(" and " pid=" in row[:80]) or not row.strip()
    )


_QUICK_STARTS = ("INFO ", "ERROR ", "WARNING ", "DEBUG ", "CRITICAL ", "Traceback (", "  ", "\x1b")
_ERROR_WORDS = ("Error", "Exception", "ERROR", "CRITICAL", "Exit", "Interrupt")


def _rejoin(lines: list[Line], raw: Sequence[str], base: int) -> tuple[list[Line], set[str]]:
    """Join rows a terminal or editor wrapped, and errors a paste reflowed.

    A terminal wraps at exactly its width W (the longest row): a row of W characters
    goes on in the next row unless that one starts a record. An editor wraps at word
    breaks, at the longest row that has one (a long word overflows): a row goes on
    when the next row's first word would not have fit. A reflowed error goes on in
    rows that start mid-sentence.
    """
    widths = [len(t) for t in raw]
    width = max(widths, default=0)
    editor = max((len(t) for t in raw if " " in t.strip()), default=0)
    full = fits = 0
    if 40 <= editor <= 300:
        for a, b in pairwise(lines):
            w = widths[a.last - base]
            if w == width <= 300 and not _STRONG_START.match(b.text):
                full += 1
            elif w + 1 + _first_word(b.text) > editor and not _START.match(b.text):
                fits += 1
    # A terminal breaks rows at exactly W only; an editor's rows reach W by chance.
    hard = full >= 2 and full > fits and (width in _ROUND_WIDTHS or full >= 4)
    soft = not hard and editor <= 200 and fits + full >= 2
    if not hard and not soft and not 40 <= width <= 300:
        width = -1  # no row is full
    out: list[Line] = []
    ran: set[str] = set()
    for line in lines:
        if out and not _starts_quickly(line.text):
            prev = out[-1]
            w = widths[prev.last - base]
            name, sep = _join_kind(prev, line, w, editor if soft else width, hard, soft)
            if name:
                repairs = tuple(dict.fromkeys((*prev.repairs, *line.repairs, name)))
                text = prev.text + ("" if sep == "" or prev.text.endswith(" ") else " ") + line.text
                out[-1] = Line(text, prev.first, line.last, repairs)
                ran.add(name)
                continue
        out.append(line)
    return out, ran


def _join_kind(
    prev: Line, line: Line, prev_width: int, width: int, hard: bool, soft: bool
) -> tuple[str, str]:
    """(repair name, separator) when `line` continues `prev`; ("", "") when it does not."""
    if line.first != prev.last + 1 or any(r in PREFIX_NAMES for r in line.repairs):
        return "", ""
    row = line.text
    if prev_width == width and not soft and not _STRONG_START.match(row):
        if hard:
            return "rejoin_wrapped", ""
        # One full row alone is weak evidence: it must also stop mid-sentence (or
        # mid-token: `NCCLUtils.` then `cpp:77`).
        mid = prev.text[-1:] not in ".!?:)]}'\"" or row[:1].islower() or row[:1].isdigit()
        if mid and not _START.match(row):
            return "rejoin_wrapped", "" if width in _ROUND_WIDTHS else " "
    if soft and prev_width + 1 + _first_word(row) > width and not _START.match(row):
        return "rejoin_wrapped", " "
    if any(w in prev.text for w in _ERROR_WORDS) and _continues(prev.text, row):
        return "rejoin_reflowed", " "
    return "", ""


STEPS: tuple[Repair, ...] = (
    Repair("json_file", "docker's json-file driver: the line is a JSON record around the text"),
    Repair("code_fence", "markdown code fences and <details> markup around a pasted log"),
    Repair("caret_ansi", "colour codes pasted as `^[[0;36m`, or with the ESC byte lost"),
    *(Repair(name, f"the {name.replace('_', ' ')} in front of every line") for name, _ in PREFIXES),
    Repair("split_collapsed", "records run together on one line: a paste lost its newlines"),
    Repair("rejoin_wrapped", "rows a terminal (W columns) or editor hard-wrapped", lookahead=True),
    Repair("rejoin_reflowed", "an error message a paste split over several rows", lookahead=True),
)
"""The repair steps, in the order they run; `Line.repairs` names them."""


_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_RECORD_AT = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d")
_RECORDS_AT = tuple(re.compile(level + r" \d\d-\d\d \d\d:\d\d:\d\d") for level in _LEVELS)
"""`_RECORD_AT` one level at a time: each starts with a literal, which the engine finds
as fast as `str.find`; records never overlap, so together they find the same ones."""
_FRAME_HEADS = ('\n  File "', ']   File "', ')   File "')
_RAW_STARTS = ("Traceback (most recent call last)", "INFO:     ", "ERROR:     ", "usage: ")
"""Raw lines (no record prefix) that begin a line: a traceback, uvicorn, argparse."""
_ESC_CSI_RE = re.compile(ESC_CSI.pattern)


def _damaged(doc: str) -> bool:
    """Whether any line of `doc` ("\\n" + the lines joined) needs a per-line repair.

    Most tails are clean, and a few scans of the joined text in C cost less than a
    step per line: a wrapper at a line start, caret ANSI, a record, a traceback
    header or a frame anywhere but at the start of its line. Where a record or a frame
    starts is judged without colour codes, as `split_collapsed` judges it: vLLM's own
    coloured output is clean.
    """
    if ("|" in doc and PIPE_PREFIX_AT_START.search(doc)) or OTHER_PREFIX_AT_START.search(doc):
        return True
    if ("^" in doc and "^[[" in doc) or ("␛" in doc and "␛[" in doc):
        return True
    if "[0m" in doc and regex.search(r"(?<!\x1b)\[0(?:;0)?m", doc):
        return True
    if "\x1b" in doc:
        doc = _ESC_CSI_RE.sub("", doc)
    heads: dict[str, bool] = {}
    return _frames_damaged(doc, heads) or _raw_damaged(doc, heads) or _records_damaged(doc, heads)


def _frames_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A frame's `File "` after anything but a line's head."""
    if doc.count('File "') != sum(doc.count(h) for h in _FRAME_HEADS):
        return True
    for head in _FRAME_HEADS[1:]:  # after a record or a process tag: at the line's head?
        pos = doc.find(head)
        while pos >= 0:
            if not _at_head(doc, pos + 1, heads):
                return True
            pos = doc.find(head, pos + 1)
    return False


def _raw_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A traceback header, uvicorn's or argparse's line after anything but a line's head."""
    for raw_start in _RAW_STARTS:
        pos = doc.find(raw_start)
        while pos >= 0:
            if not _at_head(doc, pos, heads):
                return True
            pos = doc.find(raw_start, pos + 1)
    return False


def _records_damaged(doc: str, heads: dict[str, bool]) -> bool:
    """A record anywhere but at a line's start or after its head."""
    for record in _RECORDS_AT:
        for m in record.finditer(doc):
            p = m.start()
            if doc[p - 1] == "\n":
                continue
            start = doc.rfind("\n", 0, p) + 1
            if doc[p - 2 : p] == ") " and doc[start] == "(" and doc.find(") ", start) == p - 2:
                continue  # after the process tag
            if not _at_head(doc, p, heads):
                return True
    return False


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


_HEAD_RE = re.compile(_HEAD.pattern)
"""`_HEAD` for the standard engine: the same expression, matched with less overhead."""


def _per_line(text: str) -> tuple[list[str], list[str]]:
    """(rows, repair names) for one physical line: every step that needs no lookahead."""
    names: list[str] = []
    rows: list[str] = [text]
    decoded = json_log(text)
    if decoded is not None:
        rows, names = decoded, ["json_file"]
    out: list[str] = []
    for row in rows:
        if FENCE.fullmatch(row):
            names.append("code_fence")
            continue
        fixed = ansi_text(row)
        if fixed is not None and fixed != row:
            row = fixed
            names.append("caret_ansi")
        row, stripped = strip_prefixes(row)
        names.extend(stripped)
        parts = _split_collapsed(row)
        if parts is not None:
            names.append("split_collapsed")
            out.extend(parts)
        else:
            out.append(row)
    return out, names


def normalize(
    raw: Sequence[str], *, first_line: int = 1, lookahead: bool = True
) -> tuple[list[Line], tuple[str, ...]]:
    """(lines, names of repairs that ran). lookahead=False (streaming) disables steps that
    need following lines (rejoining wrapped lines). A clean vLLM log comes back unchanged."""
    lines: list[Line] = []
    ran: set[str] = set()
    if not _damaged("\n" + "\n".join(raw)):
        lines = [Line(text, first_line + i, first_line + i) for i, text in enumerate(raw)]
    else:
        for i, text in enumerate(raw):
            number = first_line + i
            rows, names = _per_line(text)
            if not names:
                lines.append(Line(text, number, number))
                continue
            ran.update(names)
            repairs = tuple(dict.fromkeys(names))
            lines.extend(Line(row, number, number, repairs) for row in rows)
    if lookahead and len(lines) > 1:
        lines, joined = _rejoin(lines, raw, first_line)
        ran.update(joined)
    return lines, tuple(s.name for s in STEPS if s.name in ran)
