"""Rows a terminal wrapped before a tool stamped each of them: joined with the stamp off.

A CI page, journald, compose or a runtime puts its prefix in front of every line it gets.
Where the lines it got were a terminal's rows (a `vllm serve` run in a terminal at 80, 100
or 120 columns, its screen then logged or pasted through one of them), each row carries
the prefix, the rows a line was cut into too, and the rejoin's rule that a row behind a
printed line's prefix starts a line of its own keeps every line cut. Their widths are read
with the prefix on, too: a journald row of 80 columns is 119 long.

Such a tail is told by every row: each is behind the same prefixes, and no other per-line
step changed it (a stamp that came with the line, before a terminal cut it, is on the
line's first row only: the rows after it are bare, and the rejoin reads them as it does).
Its rows are then read as the tail they were before the prefix was put on, their widths
with the prefix off, each row keeping its prefix's names. A tail vLLM printed and a tool
stamped with no terminal between comes back as it went in: its bare rows are a clean
tail's, which the rejoin leaves as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .wrappers import PREFIX_NAMES, prefix_end, strip_prefixes

Row = tuple[str, int, int, tuple[str, ...]]
Normalize = Callable[[Sequence[str]], tuple[list[Row], tuple[str, ...]]]

_STAMPS = PREFIX_NAMES - {"markdown_quote"}
"""The prefixes a tool stamps on each line it logs (a quote is a paste's: the rejoin reads
quoted rows as it does bare ones)."""


def stamped_names(lines: Sequence[Row]) -> tuple[str, ...] | None:
    """The prefixes every row of `lines` is behind (one stamp at least, quotes aside), the
    rows read in order; None where a row is not behind them all. A blank row with no prefix
    is one a tool left bare (an empty line's trailing space lost). The other per-line steps
    may have changed a row (a record run on after a cut row split off, colour codes given
    back), as they change a terminal's rows with no stamp."""
    if len(lines) < 2:
        return None
    names = tuple(n for n in lines[0][3] if n in PREFIX_NAMES)
    if not _STAMPS.intersection(names) or "json_file" in lines[0][3]:
        return None
    at = lines[0][1]
    for text, first, last, repairs in lines:
        if first < at or last != first:
            return None
        at = first
        stamps = tuple(n for n in repairs if n in PREFIX_NAMES)
        if (stamps != names or "json_file" in repairs) and (repairs or text.strip()):
            return None
    return names


def rejoin_stamped(
    lines: Sequence[Row], raw: Sequence[str], base: int, normalize: Normalize
) -> tuple[list[Row], set[str]] | None:
    """`raw` read as the tail it was before each row was stamped: its rows with the stamp
    off, as `normalize` reads a tail (its widths those of the bare rows, an indent put on
    before the terminal's cut taken off as well), each row out behind the stamp; None where
    `lines` (the rows the per-line steps made of `raw`) are not stamped row by row, or no
    row of the bare tail goes on another (the rows as the per-line steps left them are
    the answer then)."""
    names = stamped_names(lines)
    if names is None:
        return None
    bare = _bare(raw, names, lines, base)
    top = next((row for row in bare if row.strip()), "")
    if strip_prefixes(top)[1]:
        return None  # (a wrapper again: 16 KB of `| ` are 8,000 gutters, not a stamp)
    rows, ran = normalize(bare)
    if not _REJOINS.intersection(ran):
        return None
    out: list[Row] = []
    for text, first, last, repairs in rows:
        out.append((text, base + first - 1, base + last - 1, (*names, *repairs)))
    return out, {*names, *ran}


_REJOINS = frozenset(("rejoin_wrapped", "rejoin_reflowed"))


def _bare(raw: Sequence[str], names: tuple[str, ...], lines: Sequence[Row], base: int) -> list[str]:
    """Each row of `raw` without its stamp (the wrappers `names`: what the per-line
    steps took off the rows in `lines` that no other step changed, found again elsewhere).
    A wrapper's pattern takes what may follow it too (a runtime's stamp every blank after
    it, compose the colour codes after its `|`), which a row the terminal cut began with:
    where the stamp's shortest length ends a row's stamp as well (a stamp of fixed length,
    the most often), the row keeps what comes after that length, as the terminal's row
    held it."""
    ends: list[int] = [-1] * len(raw)
    count = len(names)
    for text, first, _, repairs in lines:
        if repairs == names:
            ends[first - base] = len(raw[first - base]) - len(text)
    ends = [prefix_end(t, count) if e < 0 else e for t, e in zip(raw, ends, strict=True)]
    short = min((e for e in ends if e), default=0)
    out: list[str] = []
    for text, end in zip(raw, ends, strict=True):
        if end > short and prefix_end(text[:short], count) == short:
            end = short
        out.append(text[end:])
    return out
