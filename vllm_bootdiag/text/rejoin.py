"""Rows a terminal or an editor hard-wrapped, and errors a paste reflowed: joined again.

The one repair step that reads the rows after the one it repairs (off when streaming).
A clean tail's rows mostly start a line of their own as their first characters show
(`row_scan.QUICK_STARTS`, or a process tag): only the others (`row_scan.slow_rows`, or
what the clean-tail check found) are looked at, in one forward pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import islice
from operator import itemgetter
from typing import NamedTuple, overload

from .cut_runs import blank_pieces, cuts_a_run
from .error_rows import _LEAD, _is_error, _may_be_error
from .row_scan import slow_rows as _slow_rows
from .row_starts import _STRONG_START, _starts
from .widths import ROUND_WIDTHS as _ROUND_WIDTHS
from .widths import editor_width as _editor_width
from .widths import first_word as _first_word
from .widths import longest_worded as _longest_worded
from .widths import terminal_row as _terminal_row
from .widths import terminal_width as _terminal_width
from .widths import worded as _worded  # noqa: F401  (the tests read it here)
from .widths import wrapped_again as _wrapped_again
from .wrappers import PREFIX_NAMES, Lazy

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
_LEADS = frozenset(" \t\x1b")
"""How a line that `_LEAD` reads anything of starts."""
_PART_CODE = re.compile(r"\x1b(?:\[[0-9;]*)?")
"""A colour code that a row's end may cut: what comes after it may finish it."""


def _continues(prev: str, row: str, lead: int = -1) -> bool:
    """`row` carries on the error message of `prev` (a reflowed paste); `lead`: see
    `_is_error`."""
    # (`_is_error` first: `_starts` on a 16 KB row costs 11 us or more, and 2 us a short row,
    # the `regex` module's alternation of 16 branches; it is asked only of a row that would
    # go on otherwise)
    if not _is_error(prev, lead) or " " not in row.strip():
        return False
    if not (row[:1].islower() or _CONTINUES.match(row)):
        # its last character but white space (looked for near the end: `prev` can be a line
        # joined of many rows)
        near = prev[-64:].rstrip()
        end = near[-1:] if near else prev.rstrip()[-1:]
        if not (end.isalnum() or end in ",;:(-"):
            return False
    return not _starts(row)


Row = tuple[str, int, int, tuple[str, ...]]
"""A Line's fields as a plain tuple (text, first, last, repairs): what the steps pass
along, built at C speed; `normalize` makes Lines of them, the pipeline reads them as is."""


def _width_matters(
    texts: Sequence[str], slow: list[int], before: list[int], width: int, editor: int
) -> bool:
    """Whether a terminal's or an editor's width can decide a join: some slow row's
    predecessor is full (`width` or `editor` long: `before` holds each one's last read
    row's length), or the row's first word would not fit after it. Where none can, how
    many rows look wrapped does not matter."""
    for k, w in zip(slow, before, strict=True):
        if w in (width, editor):
            return True
        row = texts[k]
        if w + 1 + len(row) > editor and w + 1 + _first_word(row) > editor:
            return True
    return False


class ReadRows(Sequence[Row]):
    """A clean tail's rows, each made when read (`raw[k]`, numbered from `base`): the rejoin
    reads a few of them, and copies them all only once a row goes on its predecessor."""

    __slots__ = ("base", "raw")

    def __init__(self, raw: Sequence[str], base: int) -> None:
        self.raw = raw
        self.base = base

    def __len__(self) -> int:
        return len(self.raw)

    @overload
    def __getitem__(self, k: int) -> Row: ...
    @overload
    def __getitem__(self, k: slice) -> list[Row]: ...
    def __getitem__(self, k: int | slice) -> Row | list[Row]:
        raw, base = self.raw, self.base
        if isinstance(k, slice):
            return [(raw[i], base + i, base + i, ()) for i in range(len(raw))[k]]
        i = range(len(raw))[k]
        return raw[i], base + i, base + i, ()


class Layout(NamedTuple):
    """How a tail's rows were wrapped, as `_rejoin` reads it before joining any."""

    clean: bool
    """The rows are a clean tail's as read (row k is `raw[k]`)."""
    texts: Sequence[str]
    slow: list[int]
    """The rows that may go on their predecessor."""
    before: list[int]
    """Each slow row's predecessor's last read row's length."""
    wide: int
    """The width a full row has (a terminal's, or an editor's when `soft`; -1: none)."""
    hard: bool
    soft: bool


def _layout(
    lines: Sequence[Row],
    raw: Sequence[str],
    base: int,
    slow: list[int] | None = None,
    runs: bool = False,
    full: int = -1,
    folds: int = -1,
) -> Layout | None:
    """The rows' layout, or None where no row goes on its predecessor (a terminal wraps at
    exactly its width W, the longest row; an editor at word breaks, at the longest row that
    has one: see `_rejoin`). `runs`: the rows that go on a run of blanks cut
    (`cut_runs`) are looked for whatever the layout (the second read of a log wrapped
    twice, where they may be the only rows that go on another); else only in a terminal's.
    `full`: a terminal's width the rows were read to have (-1: the longest row's)."""
    # a clean tail's rows as read: row k is raw[k], its text and its width
    clean = isinstance(lines, ReadRows) and lines.raw is raw and lines.base == base
    texts: Sequence[str] = raw if clean else list(map(itemgetter(0), lines))
    if slow is None:
        slow = _slow_rows(texts)
    longest = max(raw, key=len, default="")
    width = len(longest) if full < 0 else full
    if runs:
        read = raw if clean else [len(raw[row[2] - base]) for row in lines]
        slow = sorted({*slow, *blank_pieces(texts, read, width)})
    if not slow:
        return None
    editor = _longest_worded(raw, longest) if folds < 0 else folds
    # each row's last read row's length: what a row that goes on it is tested against
    # (a clean tail's row k is raw[k]; the others' are counted only where they are read)
    lengths: Sequence[int] = [] if clean else list(map(len, raw))
    before = (
        [len(raw[k - 1]) for k in slow]
        if clean
        else [lengths[lines[k - 1][2] - base] for k in slow]
    )
    full = fits = 0
    if 40 <= editor <= 300 and _width_matters(texts, slow, before, width, editor):
        widths = map(len, raw) if clean else [lengths[row[2] - base] for row in lines]
        capped = width <= 300
        for w, prev, row in zip(widths, texts, islice(texts, 1, None), strict=False):
            if not (capped and w == width) and w + 1 + len(row) <= editor:
                continue  # neither test below can hold (a first word is at most the row)
            if w == width <= 300 and (not _STRONG_START.match(row) or cuts_a_run(prev, row)):
                full += 1
            elif w + 1 + _first_word(row) > editor and not _starts(row):
                fits += 1
        if full and fits and width in _ROUND_WIDTHS:
            width_of = (lambda i: len(raw[i])) if clean else (lambda i: lengths[lines[i][2] - base])
            inner = _wrapped_again(texts, slow, before, width_of, width, editor)
            full, fits = full + inner, fits - inner
    # A terminal breaks rows at exactly W only; an editor's rows reach W by chance.
    hard = full >= 2 and full > fits and (width in _ROUND_WIDTHS or full >= 4)
    soft = not hard and editor <= 200 and fits + full >= 2
    if not hard and not soft and not 40 <= width <= 300:
        width = -1  # no row is full
    wide = editor if soft else width
    if hard and not runs:
        read = raw if clean else [lengths[row[2] - base] for row in lines]
        blanks = blank_pieces(texts, read, width)
        if blanks:
            slow = sorted({*slow, *blanks})
            before = (
                [len(raw[k - 1]) for k in slow]
                if clean
                else [lengths[lines[k - 1][2] - base] for k in slow]
            )
    # (until a row goes on its predecessor, each predecessor is a row read: a clean tail's
    # rows follow each other with no repair, so only their texts and widths are read)
    # Neither a terminal's nor an editor's rows: a row goes on only where its predecessor
    # is `wide` long or may be an error (`_join_text` answers no for the others, asked or not)
    either = hard or soft
    for k, w in zip(slow, before, strict=True):
        if not clean and not _follows(lines[k - 1], lines[k]):
            continue
        prev = texts[k - 1]
        if not either and w != wide and not _may_be_error(prev):
            continue
        if _join_text(prev, texts[k], w, wide, hard, soft)[0]:
            return Layout(clean, texts, slow, before, wide, hard, soft)
    return None


def _rejoin(
    lines: Sequence[Row],
    raw: Sequence[str],
    base: int,
    slow: list[int] | None = None,
    again: bool = True,
    full: int = -1,
    folded: bool = False,
    folds: int = -1,
) -> tuple[Sequence[Row], set[str]]:
    """Join rows a terminal or editor wrapped, and errors a paste reflowed.

    A terminal wraps at exactly its width W (the longest row): a row of W characters
    goes on in the next row unless that one starts a record. An editor wraps at word
    breaks, at the longest row that has one (a long word overflows): a row goes on
    when the next row's first word would not have fit. A reflowed error goes on in
    rows that start mid-sentence. Only a row that does not start quickly can go on
    its predecessor (one that does not start as `row_scan.QUICK_STARTS` says), so the others
    are passed over in one test (`row_scan.slow_rows`; `slow` when the clean-tail check
    found them already).
    """
    layout = _layout(lines, raw, base, slow, not again, full, folds)
    if layout is None:
        return lines, set()
    if again:
        out, ran = _join(lines, raw, base, layout, False)
        if ran:
            again_out, again_ran = _rejoin_rows(out, layout.wide, layout.soft)
            return again_out, ran | again_ran
    return _join(lines, raw, base, layout, True, folded)


def _join(
    lines: Sequence[Row],
    raw: Sequence[str],
    base: int,
    layout: Layout,
    reflow: bool,
    folded: bool = False,
) -> tuple[list[Row], set[str]]:
    """The rows of `layout` joined; `reflow`: errors a paste reflowed too; `folded`: the
    rows are an editor's rejoined (the second read of a terminal's rows an editor folded
    again): one a blank short of a terminal's row lost the blank that ended it."""
    wide, hard, soft = layout.wide, layout.hard, layout.soft
    short = wide - 1 if folded and hard else -2
    out: list[Row] = []
    ran: set[str] = set()
    done = 0
    # The row each slow row may go on is held apart from `out`, its text in a local alone:
    # `+=` then grows it in place (CPython's, where no tracer runs; a copy of the line so far
    # for each row joined on it cost 400 rows of 16 KB that go on one line 0.3 s).
    text, first, last = "", 0, 0
    repairs: tuple[str, ...] = ()
    held = False
    lead = -1  # (where the held line's indentation and colour codes end: -1, not read)
    worded = False  # (the held line was reflowed on: it holds an error word, as it grows)
    for k in layout.slow:  # the rows between slow ones start quickly: kept as they are
        if k > done:  # (else the row before is the one held: the last slow row, or its line)
            if held:
                out.append((text, first, last, repairs))
            out.extend(lines[done : k - 1])
            text, first, last, repairs = lines[k - 1]
            held, lead, worded = True, -1, False
        done = k + 1
        line = lines[k]
        if lead < 0 and reflow:  # (most lines start otherwise: no match to make)
            lead = _LEAD.match(text).end() if text[:1] in _LEADS else 0  # type: ignore[union-attr]
        width = len(raw[last - base])
        name, sep = (
            _join_text(text, line[0], width, wide, hard, soft, lead, worded, reflow)
            if _follows((text, first, last, repairs), line)
            else ("", "")
        )
        if not name and width == short and _lost_a_blank(text, line, repairs):
            name, sep = "rejoin_wrapped", " "
        if name:
            worded = worded or name == "rejoin_reflowed"
            repairs = tuple(dict.fromkeys((*repairs, *line[3], name)))
            grown = len(text)
            if sep != "" and not text.endswith(" "):
                text += " "
            text += line[0]
            last = line[2]
            ran.add(name)
            if lead >= 0 and (
                lead == grown
                or (text.startswith("\x1b", lead) and _PART_CODE.fullmatch(text, lead, grown))
            ):
                lead = -1  # (the line so far was its lead, or ended in a cut code: read again)
        else:
            out.append((text, first, last, repairs))
            text, first, last, repairs = line
            lead, worded = -1, False
    if held:
        out.append((text, first, last, repairs))
    out.extend(lines[done:])
    return out, ran


def _rejoin_rows(rows: list[Row], wide: int, folded: bool) -> tuple[list[Row], set[str]]:
    """The rows a first rejoin made (of rows `wide` wide), rejoined once more, each read as
    a row of its own: a paste wrapped twice (a terminal's rows, wrapped again by an e-mail or
    a ticket at another width) comes back from the first rejoin as the first wrap's rows."""
    numbers: list[int] = []
    n = -1
    prev = -2
    for row in rows:
        n += 1 if row[1] == prev + 1 else 2  # (a gap where the rows were not read in a run)
        numbers.append(n)
        prev = row[2]
    texts = [""] * (n + 1)
    for row, k in zip(rows, numbers, strict=True):
        texts[k] = row[0]
    renumbered = [(row[0], k, k, row[3]) for row, k in zip(rows, numbers, strict=True)]
    full = _terminal_width(texts, wide)
    folds = _editor_width(texts, wide) if full < 0 and not folded else -1
    joined, ran = _rejoin(renumbered, texts, 0, again=False, full=full, folded=folded, folds=folds)
    if not ran:
        return rows, ran
    at = dict(zip(numbers, rows, strict=True))
    return [(t, at[f][1], at[z][2], r) for t, f, z, r in joined], ran


def _lost_a_blank(text: str, line: Row, repairs: tuple[str, ...]) -> bool:
    """`line` goes on `text`, a terminal's row that an editor's rows made (the first read
    joined them) one character short of the terminal's width: the editor dropped the blank
    the terminal's row ended in. Not where `line` starts a line of its own."""
    return (
        "rejoin_wrapped" in repairs
        and _follows((text, 0, line[1] - 1, repairs), line)
        and not _STRONG_START.match(line[0])
        and not _starts(line[0])
    )


_LINE_PREFIXES = PREFIX_NAMES - {"markdown_quote"}
"""Prefixes that mark a line the program printed (a runtime's stamp, a CI gutter): a row
behind one starts a line. A quote marks every row of a paste, a terminal's wrapped rows too,
so a quoted row can still go on its predecessor."""


def _follows(prev: Row, line: Row) -> bool:
    """Whether `line` is read right after `prev` and behind no prefix of a printed line:
    only then may it go on `prev`."""
    return line[1] == prev[2] + 1 and (not line[3] or _LINE_PREFIXES.isdisjoint(line[3]))


def _join_text(
    prev_text: str,
    row: str,
    prev_width: int,
    width: int,
    hard: bool,
    soft: bool,
    lead: int = -1,
    worded: bool = False,
    reflow: bool = True,
) -> tuple[str, str]:
    """(repair name, separator) when row `row` continues `prev_text`, the rows read one after
    the other (`_follows`); ("", "") when it does not; `lead`: see
    `_is_error`; `worded`: `prev_text` is known to hold an error word (`_may_be_error`, a
    test only for speed, is not asked again: a line grown over 400 rows behind 12 KB of
    colour codes was searched for its words after each)."""
    if hard and prev_width == width and cuts_a_run(prev_text, row):
        return "rejoin_wrapped", ""  # (a run of blanks cut: see `cut_runs`)
    if prev_width == width and not soft and not _STRONG_START.match(row):
        if hard:
            return "rejoin_wrapped", ""
        # One full row alone is weak evidence: it must also stop mid-sentence (or
        # mid-token: `NCCLUtils.` then `cpp:77`).
        mid = prev_text[-1:] not in ".!?:)]}'\"" or row[:1].islower() or row[:1].isdigit()
        if mid and not _starts(row):
            return "rejoin_wrapped", "" if width in _ROUND_WIDTHS else " "
    if (
        soft
        and prev_width + 1 + _first_word(row) > width
        and (reflow or not _terminal_row(len(prev_text), width))
        and not _starts(row)
    ):
        return "rejoin_wrapped", " "
    if reflow and (worded or _may_be_error(prev_text)) and _continues(prev_text, row, lead):
        return "rejoin_reflowed", " "
    return "", ""
