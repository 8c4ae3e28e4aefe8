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

from collections.abc import Callable, Sequence
from itertools import repeat
from operator import itemgetter
from typing import NamedTuple

from . import quotes
from .collapsed import split_collapsed as _split_collapsed
from .damage_check import check as _check
from .escaped import NAME as ESCAPED_LOG
from .escaped import unescaped_rows
from .indented import NAME as INDENTED
from .indented import strip_indent
from .invisible import NAME as INVISIBLE_CHARACTERS
from .invisible import holds_invisible, strip_invisible
from .joined import Joined
from .line_numbers import NAME as LINE_NUMBERS
from .line_numbers import as_shown, strip_line_numbers
from .rejoin import ReadRows, Row, _rejoin
from .repair_rows import rows_to_repair
from .row_scan import NO_BREAK_SPACE
from .stamped import rejoin_stamped
from .stern_rests import STERN, keep_rest_words
from .tail import DEFAULT_LINES
from .widths import caret_widths
from .wrappers import (
    FENCE,
    PREFIX_NAMES,
    PREFIXES,
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


STEPS: tuple[Repair, ...] = (
    Repair("invisible_characters", "zero-width spaces, joiners and soft hyphens a paste put in"),
    Repair("smart_quotes", "curly quotes a chat client or word processor made of straight ones"),
    Repair("html_escapes", "a page's HTML escapes of a scraped log: `&quot;` `&#39;` `&lt;`"),
    Repair("escaped_log", "a log handed over as one escaped string: a JSON field, a list's repr"),
    Repair("line_numbers", "line numbers `cat -n`, `nl` or `less -N` put in front of every row"),
    Repair("indented", "an indent in front of every row: a markdown code block, a quoted mail"),
    Repair("no_break_spaces", "no-break spaces a web page or chat client pasted for spaces"),
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
    if NO_BREAK_SPACE in text:  # (vLLM prints none: a paste from a rendered page made them)
        text = text.replace(NO_BREAK_SPACE, " ")
        names.append("no_break_spaces")
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
        if any(NO_BREAK_SPACE in row for row in rows):  # a paste's, inside the record
            rows = [row.replace(NO_BREAK_SPACE, " ") for row in rows]
            names.append("no_break_spaces")
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


def _repaired(
    raw: Sequence[str], first_line: int, keep: int, ran: set[str], rows: Sequence[int] | None = None
) -> list[Row]:
    """The per-line steps over `raw`, from its last line back, until `keep` rows are
    made: the last `keep` rows (in order) of what every line would give. `rows`: the
    only lines any step may change (`repair_rows.rows_to_repair`, ascending), the others
    passed as they are without a step run; None: every line through the steps.

    A paste that lost its newlines holds more logical lines than physical ones (400
    lines of 188 records each are 75,200): a worker keeps the last 400 lines, so of
    the same records given with their newlines only the last 400 would be read. The
    rows before those are not cut out at all (they cost 0.3 s here, and as much again
    in every stage after). A row keeps its physical line's number, so evidence still
    cites the line the record was pasted on; `ran` gets the steps the lines read took.
    """
    out: list[Row] = []  # last row first
    if rows is not None:
        hi = len(raw)  # (the lines from here on are in `out`)
        for i in reversed(rows):
            _passed(out, raw, first_line, i + 1, hi)
            hi = i
            if _repair_one(out, raw[i], first_line + i, ran) and len(out) >= keep:
                break
        else:
            _passed(out, raw, first_line, 0, hi)
    else:
        for i in range(len(raw) - 1, -1, -1):
            if _repair_one(out, raw[i], first_line + i, ran) and len(out) >= keep:
                break
    del out[keep:]
    out.reverse()
    return out


def _repair_one(out: list[Row], text: str, number: int, ran: set[str]) -> bool:
    """Line `number`'s rows through the per-line steps, added to `out` last first;
    whether a step changed it."""
    rows, names = _per_line(text)
    if not names:
        out.append((text, number, number, ()))
        return False
    ran.update(names)
    repairs = tuple(dict.fromkeys(names))
    out.extend([(row, number, number, repairs) for row in reversed(rows)])
    return True


def _passed(out: list[Row], raw: Sequence[str], first_line: int, lo: int, hi: int) -> None:
    """Lines lo..hi-1 as they are, added to `out` last first (no step changes them)."""
    if lo < hi:
        numbers = range(first_line + hi - 1, first_line + lo - 1, -1)
        out.extend(zip(reversed(raw[lo:hi]), numbers, numbers, repeat((), hi - lo), strict=True))


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


def _spaces_became_no_break(raw: Sequence[str]) -> bool:
    """Whether a copy turned the tail's spaces into no-break spaces (they outnumber the
    spaces left, a gutter's or a prefix's): then they were spaces where an editor cut the
    rows, and the rejoin reads them so. A few no-break spaces in a log of spaces are the
    text's own, where no editor cuts a row (a row may run past the width there)."""
    text = "".join(raw)
    return text.count(NO_BREAK_SPACE) > text.count(" ")


_QUOTES = (
    (quotes.smart_quoted, quotes.unquote_rows, quotes.SMART_QUOTES),  # (ASCII: a flag)
    (quotes.html_escaped, quotes.unescape_rows, quotes.HTML_ESCAPES),  # (`&`: one memchr)
)
"""The tail-wide steps that give a paste its quotes back, each a test of the joined text."""


def normalize_rows(
    raw: Sequence[str],
    *,
    first_line: int = 1,
    lookahead: bool = True,
    joined: Joined | None = None,
    rows_if_clean: bool = True,
    shown: Sequence[str] | None = None,
) -> tuple[list[Row], tuple[str, ...]]:
    """`normalize`, with each line as a Row (what the pipeline reads). `joined` is `raw`
    joined, when the caller hands it on to triage (one colour-code strip for both).
    `rows_if_clean=False`: where no repair ran, no rows are made (an empty list), for a
    caller that then reads `raw` itself. `shown`: the rows as a terminal or an editor
    showed them, one for each of `raw`'s, where a tail-wide step took a viewer's line
    numbers or an indent off them (None: `raw` itself): the rejoin reads their lengths, the
    widths the rows were wrapped at."""
    widths = raw if shown is None else shown
    if joined is None:
        joined = Joined.of(raw)
    if holds_invisible(joined.doc):  # (O(1) for an ASCII text: a flag)
        rows, changed = strip_invisible(raw)
        return _pre_repaired(
            rows, range(len(rows)), changed, INVISIBLE_CHARACTERS, first_line, lookahead
        )
    for pasted, repair, name in _QUOTES:
        if pasted(joined.doc):
            rows, changed = repair(raw)
            return _pre_repaired(rows, range(len(rows)), changed, name, first_line, lookahead)
    # (an escaped log holds a backslash: no corpus tail does, found at memchr speed)
    escaped = unescaped_rows(raw) if "\\" in joined.doc else None
    if escaped is not None:
        return _pre_repaired(*escaped, ESCAPED_LOG, first_line, lookahead)
    numbered = strip_line_numbers(raw)  # (two tests where no end row starts with a digit)
    if numbered is not None:
        rows, changed = numbered
        return _pre_repaired(
            rows, range(len(rows)), changed, LINE_NUMBERS, first_line, lookahead, as_shown(widths)
        )
    behind = _numbered_behind_prefixes(raw)  # (a memchr where the end rows hold no tab)
    if behind is not None:
        rows, changed, names = behind
        out, inner = _pre_repaired(
            rows, range(len(rows)), changed, LINE_NUMBERS, first_line, lookahead, as_shown(widths)
        )
        return [(t, f, z, (*names, *r)) for t, f, z, r in out], (*names, *inner)
    indented = strip_indent(raw)  # (two tests where an end row starts at its first column)
    if indented is not None:
        rows, changed = indented
        return _pre_repaired(
            rows, range(len(rows)), changed, INDENTED, first_line, lookahead, as_shown(widths)
        )
    ran: set[str] = set()
    damaged, slow = _check(joined)
    if not damaged:
        if lookahead and len(raw) > 1 and slow != []:  # (only a slow row can go on another)
            joins, rejoins = _rejoin(ReadRows(raw, first_line), widths, first_line, slow)
            if rejoins:
                return list(joins), tuple(s.name for s in STEPS if s.name in rejoins)
        if not rows_if_clean:
            return [], ()
        numbers = range(first_line, first_line + len(raw))
        return list(zip(raw, numbers, numbers, repeat((), len(raw)), strict=True)), ()
    keep = max(len(raw), DEFAULT_LINES)
    lines = _repaired(raw, first_line, keep, ran, rows_to_repair(raw, joined))
    if STERN in ran:  # (a wrapped row's rest may read as a stern prefix: see stern_rests)
        lines = keep_rest_words(lines, raw, widths, first_line, ran)
    if lookahead and len(lines) > 1:
        if "no_break_spaces" in ran and _spaces_became_no_break(raw):
            raw = [text.replace(NO_BREAK_SPACE, " ") for text in raw]  # (the same widths)
            widths = raw if shown is None else [t.replace(NO_BREAK_SPACE, " ") for t in shown]
        if "caret_ansi" in ran:  # (the widths the rows were cut at: see `caret_widths`)
            widths = caret_widths(widths)
        stamped = (
            rejoin_stamped(lines, raw, first_line, _bare_tail(lookahead))
            if ran & PREFIX_NAMES
            else None
        )
        if stamped is not None:  # (a terminal's rows, each stamped: joined with it off)
            lines, rejoins = stamped
        else:
            joins, rejoins = _rejoin(lines, widths, first_line)
            lines = list(joins) if rejoins else lines
        ran.update(rejoins)
        if any(map(str.startswith, map(itemgetter(0), lines), repeat(_JSON_STARTS))):
            lines = _json_records(lines, raw, first_line, ran)
    return lines, tuple(s.name for s in STEPS if s.name in ran) if ran else ()


def _numbered_behind_prefixes(
    raw: Sequence[str],
) -> tuple[list[str], list[bool], tuple[str, ...]] | None:
    """`cat -n`'s rows behind a tool's prefix on every row (a CI job that printed the log
    numbered, a quoted reply): the rows with the prefix and the numbers off, which rows
    changed, and the prefix's names; None where the end rows hold no tab after a prefix
    (`cat -n`'s, after its number) or the bare rows are not numbered."""
    if len(raw) < 2 or not ("\t" in raw[0] or "\t" in raw[1]):
        return None  # (the first row, or the one after a quoted fence's)
    if not ("\t" in raw[-1] or "\t" in raw[-2]):
        return None
    first, names = strip_prefixes(raw[0] if "\t" in raw[0] else raw[1])
    if not names or first[:1] not in " 0123456789":
        return None
    bare = [strip_prefixes(row)[0] for row in raw]
    numbered = strip_line_numbers(bare)
    if numbered is None:
        return None
    rows, _ = numbered
    return rows, [a != b for a, b in zip(raw, rows, strict=True)], tuple(dict.fromkeys(names))


def _pre_repaired(
    rows: list[str],
    origin: Sequence[int],
    changed: Sequence[bool],
    name: str,
    first_line: int,
    lookahead: bool,
    shown: Sequence[str] | None = None,
) -> tuple[list[Row], tuple[str, ...]]:
    """`normalize_rows` of the rows a tail-wide step (`name`) made of the input's: row `k`
    came from the input's row `origin[k]` (changed by the step where `changed[k]`), and
    each row out cites the input rows it was built from and names the step where one of
    its rows changed. `shown`: see `normalize_rows` (a step that kept the rows one for one
    and took what a viewer put in front of them)."""
    out, ran = normalize_rows(rows, lookahead=lookahead, shown=shown)
    named: list[Row] = []
    for text, first, last, repairs in out:
        if any(changed[first - 1 : last]):
            repairs = (name, *repairs)
        named.append((text, first_line + origin[first - 1], first_line + origin[last - 1], repairs))
    return named, (name, *ran)


def normalize(
    raw: Sequence[str], *, first_line: int = 1, lookahead: bool = True
) -> tuple[list[Line], tuple[str, ...]]:
    """(lines, names of repairs that ran). lookahead=False (streaming) disables steps that
    need following lines (rejoining wrapped lines). A clean vLLM log comes back unchanged."""
    rows, ran = normalize_rows(raw, first_line=first_line, lookahead=lookahead)
    return [Line(*row) for row in rows], ran


def _bare_tail(lookahead: bool) -> Callable[[Sequence[str]], tuple[list[Row], tuple[str, ...]]]:
    """How `stamped` reads a tail's rows with the stamp off: as a tail of their own."""
    return lambda rows: normalize_rows(rows, lookahead=lookahead)
