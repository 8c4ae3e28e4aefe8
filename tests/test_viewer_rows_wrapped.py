"""A viewer's rows wrapped: `cat -n` (or `less -N`) output shown in a terminal that wrapped
it, a log pasted as a code block into a mail client or a terminal that wrapped it. The
number or the indent is on a line's first row only; its rest starts at the first column.
Every corpus tail so damaged reads as itself, but for the few counted here (each a reason
below), and the repairs leave every tail vLLM printed alone (tests/test_indented.py and
tests/test_line_numbers.py hold them to that).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.text.indented import strip_indent
from vllm_bootdiag.text.line_numbers import strip_line_numbers

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(_CORPUS)}

_VIEWERS = {"cat_n": damages.cat_n, "code_block": lambda lines: ["    " + s for s in lines]}
WRONG_AT_MOST: dict[tuple[str, int | str], int] = {
    # `columns`: a terminal's (or `fold`'s) cut at a column, `cat -n`'s tab reaching column 8.
    # A long OOM sentence cut where a row ends a sentence (one full row, weak evidence of a
    # wrap); a config dump's rows read as an indent's rests where the tail starts inside it;
    # an editor's fold that dropped a frame's indent at its break (textwrap drops it all),
    # so the row after reads as text of its own.
    ("cat_n", 80): 1,
    ("cat_n", 100): 0,
    ("cat_n", 120): 0,
    ("cat_n", "fold100"): 4,
    ("cat_n", "columns80"): 1,
    ("cat_n", "columns100"): 0,
    ("code_block", 80): 4,
    ("code_block", 100): 0,
    ("code_block", 120): 1,
    ("code_block", "fold100"): 1,
}
"""Measured on the corpus (226 tails): before the rests were read, 130-144 of them were
wrong numbered, 212-222 indented."""
VERSION_OR_PHASE_AT_MOST: dict[tuple[str, int | str], int] = {
    # Measured 2026-12-02 and not yet read case by case: a cut line that is not joined
    # again can hide the version line or a phase's marker while the kind and numbers stay
    # (an editor's fold of numbered rows loses the most). A bound, to lower, not a target.
    ("cat_n", 80): 2,
    ("cat_n", 100): 0,  # (5 before a row that a colour's reset starts was joined)
    ("cat_n", 120): 0,
    ("cat_n", "fold100"): 19,
    ("cat_n", "columns80"): 2,  # (9 before a cut at a banner gap's start was joined)
    ("cat_n", "columns100"): 1,
    ("code_block", 80): 4,  # (5 while a rest led by one blank cut every row's indent to it)
    ("code_block", 100): 0,
    ("code_block", 120): 1,
    ("code_block", "fold100"): 11,
}
"""Of the same tails, how many state another vLLM version or phase than the clean lines do."""


def _by_columns(rows: list[str], width: int) -> list[str]:
    """Rows cut where a terminal (or `fold`) cuts them: at a column, a tab reaching the next
    stop of 8, kept as a tab in the row (what `cat -n LOG | fold -w 100` gives)."""
    out: list[str] = []
    for row in rows:
        col = start = 0
        for i, ch in enumerate(row):
            w = 8 - col % 8 if ch == "\t" else 1
            if col + w > width:
                out.append(row[start:i])
                start, col = i, 0
                w = 8 if ch == "\t" else 1
            col += w
        out.append(row[start:])
    return out


def _wrapped(viewer: str, width: int | str, lines: list[str]) -> list[str]:
    rows = _VIEWERS[viewer](list(lines))
    if isinstance(width, str):
        if width.startswith("columns"):
            return _by_columns(rows, int(width.removeprefix("columns")))
        return damages.BY_NAME[width].apply(rows)  # an editor's fold (textwrap)
    return [row[i : i + width] for row in rows for i in range(0, max(len(row), 1), width)]


def _read(lines: list[str], viewer: str, width: int | str) -> list[str]:
    """The lines whose rows are all among the last 400: what a worker's tail of the damaged
    copy holds whole (the clean answer to compare with)."""
    made = 0
    for k in range(len(lines) - 1, -1, -1):
        made += len(_wrapped(viewer, width, [lines[k]]))
        if made > logtail.DEFAULT_LINES:
            return lines[k + 1 :]
    return lines


@pytest.mark.parametrize(
    "case", list(WRONG_AT_MOST), ids=[f"{v}-wrap{w}" for v, w in WRONG_AT_MOST]
)
def test_a_viewers_rows_wrapped_read_as_the_tail(case: tuple[str, int]) -> None:
    viewer, width = case
    wrong, stated = [], []
    for log_id, tail in TAILS.items():
        want = damages.answer(_read(list(tail), viewer, width))
        got = damages.answer(_wrapped(viewer, width, tail))
        if got[:2] != want[:2]:
            wrong.append(f"{log_id}: {got[0]} (want {want[0]})")
        if got[2:] != want[2:]:
            stated.append(f"{log_id}: version, phase {got[2:]} (want {want[2:]})")
    assert len(wrong) <= WRONG_AT_MOST[case], "\n".join(wrong)
    assert len(stated) <= VERSION_OR_PHASE_AT_MOST[case], "\n".join(stated)


def test_evidence_cites_the_row_its_line_starts_on() -> None:
    """A line rejoined of its rows is cited by its first row, as the user's paste has it:
    the row that carries the viewer's number of the line."""
    checked = 0
    for log_id, tail in list(TAILS.items())[::7]:
        rows = _wrapped("cat_n", 100, tail)
        for e in classify(rows).primary.evidence:
            row = rows[e.line - 1]
            number, tab, _ = row.partition("\t")
            if tab and number.strip().isdigit():  # the line's first row: its number
                assert e.text[:30] in tail[int(number) - 1], log_id
            else:  # a rest that a colour code starts: a row of its own, holding the text
                assert row.startswith("\x1b") and e.text[:20] in row, (log_id, row)
            checked += 1
    assert checked > 20


_REC = "INFO 01-02 03:04:05 [api_server.py:1] vLLM API server version 0.32.0"
_TAG = "(APIServer pid=1) "


def test_what_counts_as_a_rest() -> None:
    wide = _TAG + _REC + " and the rest of a long line that a terminal of 80 columns cut in two"
    rows = _wrapped("code_block", 80, [wide, _REC])
    assert rows[1][:1] != " "  # (the rest starts at the first column)
    out, changed = strip_indent(rows) or ([], [])
    assert len(rows) == 3 and out == [wide[:76], wide[76:], _REC]
    assert changed == [True, False, True]
    # a short row at the first column after a row far short of the longest: no rest, so
    # no indent to take off (after the longest row, a terminal's width, it is one)
    assert strip_indent(["    " + wide, "    " + _REC, "x", "    " + _REC]) is None
    assert strip_indent(["    " + _REC, "x", "    " + _REC]) == (
        [_REC, "x", _REC],
        [True, False, True],
    )
    # a rest cut right before a blank, after a full row, keeps it
    cut = ["    " + wide[:76], " " + wide[77:], "    " + _REC]
    assert (strip_indent(cut) or ([], []))[0] == [wide[:76], " " + wide[77:], _REC]
    # numbered, then wrapped: the rests keep their text, the numbered rows lose the number
    numbered = _wrapped("cat_n", 80, [wide, _REC, _REC])
    got = strip_line_numbers(numbered)
    assert got is not None and got[0][0] == wide[:73] and got[0][1] == wide[73:153]
    # rows too short to be a terminal's: a row between numbered ones is text, not a rest
    assert strip_line_numbers(["  1 a", "  2 b", "x", "  3 c"]) is None


def test_cat_n_wrapped_then_pasted_as_a_code_block() -> None:
    """The paste's indent is the blanks the rows after full ones share with the first row's,
    not the first row's own (the viewer's right-aligned number adds to them)."""
    tail = TAILS["0.32.0/KV004/kv_cache_shortfall__llama1b-kvspace1__cpu"]
    rows = ["    " + r for r in _wrapped("cat_n", 100, tail)]
    assert damages.answer(rows)[:2] == damages.answer(_read(list(tail), "cat_n", 100))[:2]
    assert {"indented", "line_numbers"} <= set(classify(rows).repairs)
