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

from collections.abc import Sequence
from itertools import repeat
from typing import NamedTuple

from .collapsed import EXCEPTION as _EXC
from .collapsed import split_collapsed as _split_collapsed
from .damage_check import HEAD as _HEAD
from .damage_check import damaged as _damaged
from .joined import Joined
from .tail import DEFAULT_LINES
from .wrappers import (
    FENCE,
    PREFIX_NAMES,
    PREFIXES,
    Lazy,
    ansi_text,
    json_log,
    strip_prefixes,
)


class Line(NamedTuple):
    """One logical line after repair, with where it came from in the original input."""

    text: str
    """Repaired text of one logical line."""
    first: int
    """1-based line number in the original input (file line when known)."""
    last: int
    """Last original line it was built from (== first unless rejoined)."""
    repairs: tuple[str, ...] = ()
    """Names of the repair steps that changed it."""


class Repair(NamedTuple):
    """One named repair step, in the order `normalize` runs them."""

    name: str
    why: str
    lookahead: bool = False
    """Needs the lines after the one it repairs (off when streaming)."""


_STRONG_START = Lazy(
    r"[ \t]*$|[ \t]*(?:\x1b\[[0-9;]{0,32}m){0,8}\((?:[A-Za-z][\w =.-]*? )?pid=\d+\)"
    r"|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d"
    r"|Traceback \(most recent|[ \t]{2}|\{\"(?:log|MESSAGE)\": ?\""
)
"""A row that begins a line of its own even when the row above is full width (a docker
json-file record too: a terminal wraps the record, not its message)."""
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
multiprocessing's `Process EngineCore:` header over a child's traceback."""
_CONTINUES = Lazy(
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
_PYDANTIC_HEAD = Lazy(r"\d+ validation errors? for [\w.]+$")


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


_QUICK_STARTS = (
    "INFO ", "ERROR ", "WARNING ", "DEBUG ", "CRITICAL ", "Traceback (", "  ", "\x1b", '{"log"',
)  # fmt: skip
"""How a row that surely starts a line of its own begins (with a process tag within its
first 80 characters, or blank, it does too): told with string tests only."""


def _longest_worded(raw: Sequence[str]) -> int:
    """The length of the longest row with a space inside it (an editor's width): most
    often the longest row itself, so that one is tried before the others are. A quote's
    `> ` is not inside: a long word the editor could not break stays a row of its own,
    and a quote puts a space in front of it."""
    longest = max(raw, key=len, default="")
    if " " in longest.lstrip("> \t").rstrip():
        return len(longest)
    return max((len(t) for t in raw if " " in t.lstrip("> \t").rstrip()), default=0)


_ERROR_WORDS = ("Error", "Exception", "ERROR", "CRITICAL", "Exit", "Interrupt")


def _has_error_word(text: str) -> bool:
    """Whether `text` holds one of `_ERROR_WORDS`: their first letters are looked for
    first, at memchr speed (a 16 KB row without them costs no six searches)."""
    return ("E" in text or "C" in text or "I" in text) and any(w in text for w in _ERROR_WORDS)


Row = tuple[str, int, int, tuple[str, ...]]
"""A Line's fields as a plain tuple (text, first, last, repairs): what the steps pass
along, built at C speed; `normalize` makes Lines of them, the pipeline reads them as is."""


def _rejoin(lines: list[Row], raw: Sequence[str], base: int) -> tuple[list[Row], set[str]]:
    """Join rows a terminal or editor wrapped, and errors a paste reflowed.

    A terminal wraps at exactly its width W (the longest row): a row of W characters
    goes on in the next row unless that one starts a record. An editor wraps at word
    breaks, at the longest row that has one (a long word overflows): a row goes on
    when the next row's first word would not have fit. A reflowed error goes on in
    rows that start mid-sentence. Only a row that does not start quickly can go on
    its predecessor (one that does not start as `_QUICK_STARTS` says), so the others
    are passed over in one test.
    """
    quick, paren = _QUICK_STARTS, "("
    slow = [
        k
        for k in range(1, len(lines))
        if not (t := lines[k][0]).startswith(quick)
        and not (t[:1] == paren and " pid=" in t[:80])
        and t.strip()
    ]  # the tests written out: a call per row would cost more than they do
    if not slow:
        return lines, set()
    widths = list(map(len, raw))
    width = max(widths, default=0)
    editor = _longest_worded(raw)
    full = fits = 0
    if 40 <= editor <= 300:
        capped = width <= 300
        for k in range(len(lines) - 1):
            w = widths[lines[k][2] - base]
            row = lines[k + 1][0]
            if not (capped and w == width) and w + 1 + len(row) <= editor:
                continue  # neither test below can hold (a first word is at most the row)
            if w == width <= 300 and not _STRONG_START.match(row):
                full += 1
            elif w + 1 + _first_word(row) > editor and not _START.match(row):
                fits += 1
    # A terminal breaks rows at exactly W only; an editor's rows reach W by chance.
    hard = full >= 2 and full > fits and (width in _ROUND_WIDTHS or full >= 4)
    soft = not hard and editor <= 200 and fits + full >= 2
    if not hard and not soft and not 40 <= width <= 300:
        width = -1  # no row is full
    out: list[Row] = []
    ran: set[str] = set()
    done = 0
    for k in slow:  # the rows between slow ones start quickly: kept as they are
        out.extend(lines[done:k])
        done = k + 1
        line = lines[k]
        prev = out[-1]
        w = widths[prev[2] - base]
        name, sep = _join_kind(prev, line, w, editor if soft else width, hard, soft)
        if name:
            repairs = tuple(dict.fromkeys((*prev[3], *line[3], name)))
            text = prev[0] + ("" if sep == "" or prev[0].endswith(" ") else " ") + line[0]
            out[-1] = (text, prev[1], line[2], repairs)
            ran.add(name)
        else:
            out.append(line)
    out.extend(lines[done:])
    return out, ran


_LINE_PREFIXES = PREFIX_NAMES - {"markdown_quote"}
"""Prefixes that mark a line the program printed (a runtime's stamp, a CI gutter): a row
behind one starts a line. A quote marks every row of a paste, a terminal's wrapped rows too,
so a quoted row can still go on its predecessor."""


def _join_kind(
    prev: Row, line: Row, prev_width: int, width: int, hard: bool, soft: bool
) -> tuple[str, str]:
    """(repair name, separator) when `line` continues `prev`; ("", "") when it does not."""
    if line[1] != prev[2] + 1 or any(r in _LINE_PREFIXES for r in line[3]):
        return "", ""
    row, prev_text = line[0], prev[0]
    if prev_width == width and not soft and not _STRONG_START.match(row):
        if hard:
            return "rejoin_wrapped", ""
        # One full row alone is weak evidence: it must also stop mid-sentence (or
        # mid-token: `NCCLUtils.` then `cpp:77`).
        mid = prev_text[-1:] not in ".!?:)]}'\"" or row[:1].islower() or row[:1].isdigit()
        if mid and not _START.match(row):
            return "rejoin_wrapped", "" if width in _ROUND_WIDTHS else " "
    if soft and prev_width + 1 + _first_word(row) > width and not _START.match(row):
        return "rejoin_wrapped", " "
    if _has_error_word(prev_text) and _continues(prev_text, row):
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


def _per_line(text: str) -> tuple[list[str], list[str]]:
    """(rows, repair names) for one physical line: every step that needs no lookahead."""
    names: list[str] = []
    rows: list[str] = [text]
    decoded = json_log(text)
    if (
        decoded is None
        and text[:1] != "{"
        and '"' in text  # (memchr first: a 16 KB line costs each needle's search 7 us)
        and ('"log"' in text or '"MESSAGE"' in text)
    ):
        # a json-file record shown behind a CI gutter, a quote or a stamp
        outer, stripped = strip_prefixes(text)
        decoded = json_log(outer) if stripped else None
        if decoded is None and stripped and outer.startswith(_JSON_STARTS):
            return [outer], stripped  # a record's first row, wrapped: gathered later
        names = stripped if decoded is not None else []
    if decoded is not None:
        rows = decoded
        names.append("json_file")
    elif text.startswith(_JSON_STARTS):
        return rows, names  # a record's first row, wrapped: gathered later
    out: list[str] = []
    for row in rows:
        if ("`" in row or "~" in row or "<" in row) and FENCE.fullmatch(row):  # (memchr first)
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


def _repaired(raw: Sequence[str], first_line: int, keep: int, ran: set[str]) -> list[Row]:
    """The per-line steps over `raw`, from its last line back, until `keep` rows are
    made: the last `keep` rows (in order) of what every line would give.

    A paste that lost its newlines holds more logical lines than physical ones (400
    lines of 188 records each are 75,200): a worker keeps the last 400 lines, so of
    the same records given with their newlines only the last 400 would be read. The
    rows before those are not cut out at all (they cost 0.3 s here, and as much again
    in every stage after). A row keeps its physical line's number, so evidence still
    cites the line the record was pasted on; `ran` gets the steps the lines read took.
    """
    out: list[Row] = []  # last row first
    for i in range(len(raw) - 1, -1, -1):
        text, number = raw[i], first_line + i
        rows, names = _per_line(text)
        if not names:
            out.append((text, number, number, ()))
        else:
            ran.update(names)
            repairs = tuple(dict.fromkeys(names))
            out.extend([(row, number, number, repairs) for row in reversed(rows)])
            if len(out) >= keep:
                break
    del out[keep:]
    out.reverse()
    return out


_JSON_STARTS = ('{"log"', '{"MESSAGE"')
_JSON_ROWS, _JSON_CHARS = 64, 32 * 1024
"""The most rows and characters one json-file record is gathered from (a terminal wrapped
it, a paste reflowed the message inside it; docker splits a longer line into 16 KB records)."""


def _json_records(lines: list[Row], raw: Sequence[str], base: int, ran: set[str]) -> list[Row]:
    """json-file records that a terminal wrapped or a paste reflowed over several rows,
    gathered from the rows as read (rows after the first record row went through the
    per-line steps as text of their own) until the record decodes, then repaired as one
    line. A row ends a record only with `}`: the decoder runs only there."""
    out: list[Row] = []
    width = max(map(len, raw), default=0)
    k = 0
    while k < len(lines):
        row = lines[k]
        k += 1
        if not row[0].startswith(_JSON_STARTS):
            out.append(row)
            continue
        text, last = row[0], row[2]
        outer = [n for n in row[3] if n in PREFIX_NAMES]  # on every row: a quote, say
        texts, names = _per_line(text) if text.rstrip().endswith("}") else ([], [])
        while "json_file" not in names and last - row[2] < _JSON_ROWS and len(text) < _JSON_CHARS:
            nxt = last + 1 - base
            if nxt >= len(raw):
                break
            cont, stripped = strip_prefixes(raw[nxt]) if outer else (raw[nxt], outer)
            if cont.startswith('{"') or stripped != outer:
                break
            text += ("" if len(raw[nxt - 1]) == width else " ") + cont
            last += 1
            if text.rstrip().endswith("}"):
                texts, names = _per_line(text)
        if "json_file" not in names:
            out.append(row)
            continue
        while k < len(lines) and lines[k][1] <= last:
            k += 1  # the rows gathered into the record
        names = [*outer, *names, *(("rejoin_wrapped",) if last > row[1] else ())]
        ran.update(names)
        repairs = tuple(dict.fromkeys((*row[3], *names)))
        out.extend((t, row[1], last, repairs) for t in texts)
    return out


def normalize_rows(
    raw: Sequence[str],
    *,
    first_line: int = 1,
    lookahead: bool = True,
    joined: Joined | None = None,
) -> tuple[list[Row], tuple[str, ...]]:
    """`normalize`, with each line as a Row (what the pipeline reads). `joined` is `raw`
    joined, when the caller hands it on to triage (one colour-code strip for both)."""
    ran: set[str] = set()
    damaged = _damaged(joined if joined is not None else Joined.of(raw))
    if not damaged:
        numbers = range(first_line, first_line + len(raw))
        lines: list[Row] = list(zip(raw, numbers, numbers, repeat((), len(raw)), strict=True))
    else:
        lines = _repaired(raw, first_line, max(len(raw), DEFAULT_LINES), ran)
    if lookahead and len(lines) > 1:
        lines, rejoins = _rejoin(lines, raw, first_line)
        ran.update(rejoins)
        if damaged and any(row[0].startswith(_JSON_STARTS) for row in lines):
            lines = _json_records(lines, raw, first_line, ran)
    return lines, tuple(s.name for s in STEPS if s.name in ran)


def normalize(
    raw: Sequence[str], *, first_line: int = 1, lookahead: bool = True
) -> tuple[list[Line], tuple[str, ...]]:
    """(lines, names of repairs that ran). lookahead=False (streaming) disables steps that
    need following lines (rejoining wrapped lines). A clean vLLM log comes back unchanged."""
    rows, ran = normalize_rows(raw, first_line=first_line, lookahead=lookahead)
    return [Line(*row) for row in rows], ran
