"""No 16 KB row of a short repeated unit makes classify backtrack: bounded time per row.

bench/bench_hostile.py sweeps every unit and pair of units and prints the figures; this
test runs its single characters, its pieces of vLLM's lines and the units that were
quadratic (a pattern backtracking through a run of `a.`, of capitals, of `Aa.` after an
error line: 0.2-11 s for 400 rows), in each place a message goes, and bounds the CPU time
of each 20-row tail. The bound is 20 times issue 10's 50 ms per 400 rows, so a loaded
machine passes and a quadratic pattern (seconds) does not.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from vllm_bootdiag import classify

CHARS = [*"Aa0.,:;-_()[]{}<>'\"`~^|/\\=+*?!@#%& \t", "█", "é", "\x1b"]
PIECES = [
    "A.b", "a. ", "Error: ", "INFO ", 'File "', "  File ", "pid=1) ", "(a pid=1) ", "01-02 ",
    "03:04:05 ", "[a.py:1] ", "\x1b[0m", "^[[", "> ", "| ", "    ", "usage: ", "ERROR:     ",
    "a.b.c", "a:", "Error", "Exception ", "%|", "it/s]", "(a)", "[rank0]:", "W1129 ", '{"log":"',
    "Ab ", "AbError ", "a.Error", "ValueError: ", ": error: ", "INFO 01-02 03:04:05 [",
    "ERROR 01-02 03:04:05 [", "] ", ".py:", "(APIServer pid=1) ", "\x1b[", "[\x1b",
]  # fmt: skip
WERE_QUADRATIC = [
    "a.", "0.", "._", ".é", "_.", "AB", "Ab", "A_", "aB", "v0.", "A1.", "Aa.", "A_.", "Ab.",
    "Err.", "Errorr.", "rError.", "aError.", "AError", "A.Errorx",
]  # fmt: skip
WIDTH = 16_384
ROWS = 20
BOUND_S = 20 * 0.050 * ROWS / 400
"""CPU seconds for a 20-row tail: 20x the 50 ms bound on 400 rows."""


def _row(unit: str, i: int) -> str:
    """The unit repeated to 16 KB, shifted and numbered: no two rows of a tail equal."""
    run = unit * (WIDTH // len(unit) + 1)
    return run[i % len(unit) :][: WIDTH - 16] + f" {i}"


HEADS: dict[str, Callable[[str], list[str]]] = {
    "alone": lambda u: [_row(u, i) for i in range(ROWS)],
    "after_error": lambda u: [
        x for i in range(ROWS // 2) for x in ("ERROR 01-02 03:04:05 [a.py:1] boom", _row(u, i))
    ],
    "after_exc": lambda u: [x for i in range(ROWS // 2) for x in ("ValueError: boom", _row(u, i))],
    "in_record": lambda u: ["ERROR 01-02 03:04:05 [a.py:1] " + _row(u, i) for i in range(ROWS)],
    "tagged": lambda u: [
        "(EngineCore_DP0 pid=1) ERROR 01-02 03:04:05 [a.py:1] " + _row(u, i) for i in range(ROWS)
    ],
}


@pytest.mark.parametrize("unit", CHARS + PIECES + WERE_QUADRATIC, ids=ascii)
def test_rows_of_a_repeated_unit_cost_linear_time(unit: str) -> None:
    slow = {}
    for head, make in HEADS.items():
        tail = make(unit)
        first = classify(tail)  # (warm: lazy patterns compile on first use)
        t0 = time.process_time()
        again = classify(tail)
        spent = time.process_time() - t0
        assert again == first
        if spent > BOUND_S:
            slow[head] = round(spent, 3)
    assert not slow, slow
