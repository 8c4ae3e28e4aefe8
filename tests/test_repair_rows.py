"""The damaged path's rows to repair against the long way: every row through the steps.

`normalize._repaired` runs the per-line steps only on the rows `repair_rows.rows_to_repair`
names, passing every other row as it is. The long way (`rows=None`) runs them on every row
and stays the reference: the two must give the same rows, numbers and repair names on every
corpus tail under every damage of tests/damage (alone and in pairs), on hostile rows, and on
rows hypothesis splices vLLM's pieces and the wrappers' into. And no row left out is one a
step changes (the statement each of its tests makes).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from itertools import permutations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import normalize as norm
from vllm_bootdiag.text import repair_rows
from vllm_bootdiag.text.damage_check import check
from vllm_bootdiag.text.joined import Joined

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
TAILS = [logtail.read_tail(log) for log in LOGS]


def _agree(raw: Sequence[str], checked: bool = False) -> bool:
    """Whether the rows to repair hold every row a step changes, and the repair over them
    is the long way's; whether they were worked out (not None). `checked`: with the
    clean-tail check run first on the same text, as the pipeline runs it (it leaves the
    text without tags behind, which the rows' search reads)."""
    joined = Joined.of(raw)
    if checked:
        check(joined)
    rows = repair_rows.rows_to_repair(raw, joined)
    keep = max(len(raw), 400)
    long_ran: set[str] = set()
    fast_ran: set[str] = set()
    long = norm._repaired(raw, 1, keep, long_ran)
    fast = norm._repaired(raw, 1, keep, fast_ran, rows)
    assert fast == long and fast_ran == long_ran
    if rows is not None:
        left = set(range(len(raw))).difference(rows)
        changed = [k for k in left if norm._per_line(raw[k])[1]]
        assert not changed, [raw[k][:120] for k in changed[:3]]
    return rows is not None


def test_every_corpus_tail_and_each_damage_of_it() -> None:
    worked = 0
    for tail in TAILS:
        worked += _agree(tail) + _agree(tail, checked=True)
        for damage in damages.DAMAGES:
            worked += _agree(damage.apply(tail))
    assert worked > len(TAILS) * len(damages.DAMAGES)  # (most are short enough to be read)


def test_damages_in_pairs() -> None:
    """Every ordered pair of damages, each on a few tails (a different few for each)."""
    pairs = list(permutations(damages.DAMAGES, 2))
    for i, (first, second) in enumerate(pairs):
        for tail in TAILS[i % 7 :: 97]:
            _agree(second.apply(first.apply(tail)), checked=bool(i % 2))


def test_one_damaged_row_among_clean_ones() -> None:
    """A run-on line, a quoted row, caret codes, a no-break space or a gutter on one row of
    a clean tail: the rows to repair are that row (and any the tail had)."""
    tail = next(
        t for t in TAILS if len(t) >= 100 and repair_rows.rows_to_repair(t, Joined.of(t)) == []
    )
    record = next(row for row in tail if " INFO " in row)
    for bad in (
        tail[50] + record,
        "> " + tail[50],
        "  | " + tail[50],
        "^[[0;36m" + tail[50],
        tail[50].replace(" ", "\xa0", 1),
        "vllm-1  | " + tail[50],
        '{"log":"' + tail[50].replace('"', "") + '\\n","stream":"stderr"}',
    ):
        raw = [*tail[:50], bad, *tail[51:]]
        assert _agree(raw, checked=True)
        assert repair_rows.rows_to_repair(raw, Joined.of(raw)) == [50]


UNITS = [*"Aa0.,:;-_()[]{}<>'\"`~^|/\\=+*?!@#%& \t", "█", "é", "\x1b", "\xa0", "\x01", "\n"]
PIECES = [
    "A.b", "Error: ", "INFO ", 'File "', "  File ", "pid=1) ", "(a pid=1) ", "01-02 ",
    "03:04:05 ", "[a.py:1] ", "\x1b[0m", "^[[", "^[[0;36m", "␛[1m", "[0m", "[0;0m", "> ", "| ",
    "    ", "usage: ", "INFO:     ", "ERROR:     ", "Traceback (most recent call last):",
    '  File "a.py", line 1, in f', "[rank0]:", "W1129 ", '{"log":"', '"MESSAGE"', "```", "~~~",
    "<details>", "</summary>", "INFO 01-02 03:04:05 [", "ERROR 01-02 03:04:05 [a.py:1] ",
    "] ", ".py:", "(APIServer pid=1) ", "\x1b[0;36m(APIServer pid=1)\x1b[0;0m ", "\x1b[32mINFO ",
    "  | ", "12  | ", "vllm-1  | ", "Jan 02 03:04:05 gpu-node-3 vllm[2811]: ", "[Stage-0] ",
    "vllm-7d9f8b6c5-x2x7q vllm ", "[vllm-7d9f8b6c5-x2x7q] ", "2026-01-02T03:04:05Z ",
    "[2026-01-02T03:04:05Z] ", "2026-01-02 03:04:05.678 [Error] (Process) ", "[Gloo] ",
    "2026-01-02 03:04:05,678 - a - ERROR - ", "(RayWorkerWrapper pid=3, ip=1.2.3.4) ", "٣",
]  # fmt: skip


@pytest.mark.parametrize("unit", UNITS + PIECES, ids=ascii)
def test_hostile_rows(unit: str) -> None:
    """Rows of one unit repeated (short enough that the rows are worked out), alone, after
    an error line, inside a record and after a tag: as test_hostile_rows builds them."""
    run = unit * (512 // len(unit) + 1)
    rows = [run[i % len(unit) :][:500] + f" {i}" for i in range(20)]
    for raw in (
        rows,
        [x for r in rows[:10] for x in ("ERROR 01-02 03:04:05 [a.py:1] boom", r)],
        ["ERROR 01-02 03:04:05 [a.py:1] " + r for r in rows],
        ["(EngineCore_DP0 pid=1) ERROR 01-02 03:04:05 [a.py:1] " + r for r in rows],
        [unit + r for r in rows],
    ):
        _agree(raw)
        _agree(raw, checked=True)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(PIECES + UNITS + ["a", "b c", " "]), max_size=6).map("".join),
        min_size=1,
        max_size=12,
    ),
    st.booleans(),
)
def test_rows_spliced_from_pieces(raw: list[str], checked: bool) -> None:
    _agree(raw, checked)
