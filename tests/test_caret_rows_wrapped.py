"""Colour codes in caret notation on rows a terminal or an editor cut: a tail wrapped at
80-120 columns (or folded at 100 by an editor) and then shown with its codes as `^[[0;36m`
text (a terminal that showed the colours cut its rows at their visible columns; `fold` cut a
file that held the ESC bytes, each a column), or a caret copy wrapped as text. The rejoin
reads each row as wide as what was cut (`widths.caret_widths`): before, it read the codes'
characters as columns, and 76 of the 226 corpus tails cut at 80 gave another kind or other
numbers (85 at 100, 43 at 120, 32 under the fold).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import corpus, logtail
from vllm_bootdiag.text.widths import caret_widths

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(_CORPUS)}

_CARET = damages.BY_NAME["caret_ansi"]
WRONG_AT_MOST: dict[tuple[str, str], tuple[int, int]] = {
    # (first damage, then): (wrong kind or numbers, another version or phase), measured on
    # the corpus. Left: a colour log's long KV-cache line cut where its rows end a sentence;
    # a caret copy cut as text inside vLLM's banner, its rest starting with the banner's
    # blanks (a row of its own, as the banner's rows start: the version it states is lost).
    ("wrap80", "caret_ansi"): (0, 1),
    ("wrap100", "caret_ansi"): (0, 0),
    ("wrap120", "caret_ansi"): (0, 0),
    ("fold100", "caret_ansi"): (0, 0),
    ("caret_ansi", "wrap80"): (1, 12),
    ("caret_ansi", "wrap100"): (0, 22),
    ("caret_ansi", "wrap120"): (0, 0),
}


def _damaged(case: tuple[str, str], lines: list[str]) -> list[str]:
    first, then = (damages.BY_NAME[name] for name in case)
    return then.apply(first.apply(list(lines)))


def _read(lines: list[str], case: tuple[str, str]) -> list[str]:
    """The lines whose rows are all among the last 400 (the clean answer to compare with)."""
    made = 0
    for k in range(len(lines) - 1, -1, -1):
        made += len(_damaged(case, [lines[k]]))
        if made > logtail.DEFAULT_LINES:
            return lines[k + 1 :]
    return lines


@pytest.mark.parametrize("case", list(WRONG_AT_MOST), ids=["-".join(c) for c in WRONG_AT_MOST])
def test_caret_codes_on_wrapped_rows_read_as_the_tail(case: tuple[str, str]) -> None:
    wrong, stated = [], []
    for log_id, tail in TAILS.items():
        want = damages.answer(_read(list(tail), case))
        got = damages.answer(_damaged(case, tail))
        if got[:2] != want[:2]:
            wrong.append(f"{log_id}: {got[0]} {got[1]} (want {want[0]} {want[1]})")
        if got[2:] != want[2:]:
            stated.append(f"{log_id}: version, phase {got[2:]} (want {want[2:]})")
    kinds, versions = WRONG_AT_MOST[case]
    assert len(wrong) <= kinds, "\n".join(wrong)
    assert len(stated) <= versions, "\n".join(stated)


def test_the_widths_rows_were_cut_at() -> None:
    """Each of a corpus tail's rows read as the width it was cut at: a terminal's visible
    columns, or the ESC bytes the cut counted (vLLM's codes) before codes put in after."""
    tail = TAILS["0.11.0/AC009/model_not_found__local-path-missing__cpu"]
    rows = _CARET.apply(damages.BY_NAME["wrap80"].apply(list(tail)))
    assert max(map(len, rows)) > 80  # (the codes' characters counted: no row looks cut)
    widths = list(map(len, caret_widths(rows)))
    full = [w for w, row in zip(widths, rows, strict=True) if len(row) >= 80]
    assert full and set(full) == {80}
    assert max(widths) == 80
    # a row with no code is as wide as it is; one with codes as the widest reading of them
    # no wider than the widest row shown (here 20: the codes' text, `^[` two characters)
    assert list(map(len, caret_widths(["plain", "^[[31mERROR^[[0m x", "a" * 20]))) == [5, 18, 20]
    assert list(map(len, caret_widths(["plain", "^[[31mERROR^[[0m x", "a" * 16]))) == [5, 16, 16]
    # a caret copy cut as text: the row with a code is as long as it is
    cut = ["^[[0;36m(APIServer pid=1)^[[0;0m " + "x" * 39, "y" * 72]
    assert list(map(len, caret_widths(cut))) == [72, 72]
