"""The rejoin's shortcuts held to the long way (`text/rejoin.py`).

A clean tail's rows are read by their texts and widths alone (no Row is made for a row
that is only tested), `_START`'s costly branch is tried only where a bar's rate is in
sight, and the reflow tests run cheapest first. Each must answer what the long way
answers, on vLLM's own tails and on every damaged copy of them (wrapped, folded and
reflowed copies are what the rejoin exists for).
"""

from __future__ import annotations

import sys
from itertools import pairwise
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import error_rows, rejoin, row_scan, row_starts
from vllm_bootdiag.text.rejoin import ReadRows, Row

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _cases() -> list[list[str]]:
    """Every fourth corpus tail, and each damaged copy of it."""
    out = []
    for log in LOGS[::4]:
        tail = logtail.read_tail(log)
        out.append(tail)
        out.extend(d.apply(list(tail)) for d in damages.DAMAGES)
    return out


CASES = _cases()


def _rows(lines: list[str], base: int) -> list[Row]:
    return [(t, base + i, base + i, ()) for i, t in enumerate(lines)]


def test_a_clean_tails_rows_read_by_their_texts_join_as_rows_do() -> None:
    """`_rejoin` of the rows as read (`ReadRows`, with the slow rows given) is `_rejoin`
    of the same rows made as Rows (which finds its slow rows itself)."""
    joined = 0
    for lines in CASES:
        slow = row_scan.slow_rows(lines)
        fast, fast_ran = rejoin._rejoin(ReadRows(lines, 7), lines, 7, slow)
        slow_way, ran = rejoin._rejoin(_rows(lines, 7), lines, 7)
        assert (list(fast), fast_ran) == (list(slow_way), ran)
        joined += bool(ran)
    assert joined > 50  # the wrapped and reflowed copies were joined


def test_rows_read_from_another_text_are_rows() -> None:
    """`ReadRows` of another text (or numbered otherwise) is read as Rows, not as `raw`."""
    lines = ["ValueError: the model is too", "large for the memory left"]
    other = ["x", "y"]
    out, ran = rejoin._rejoin(ReadRows(other, 1), lines, 1, [1])
    assert (list(out), ran) == (list(rejoin._rejoin(_rows(other, 1), lines, 1)[0]), set())
    assert rejoin._rejoin(ReadRows(lines, 2), lines, 1, [1]) == rejoin._rejoin(
        _rows(lines, 2), lines, 1
    )


_EXCEPTION = regex.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt): ")
"""An exception's line as `error_rows._is_error` first read it (the long way)."""


def _is_error_long(text: str) -> bool:
    head = error_rows._HEAD.match(text)
    msg = text[head.end() :] if head is not None else text
    if error_rows._PYDANTIC_HEAD.search(msg):
        return False
    level = head["level"] if head is not None else None
    return bool(_EXCEPTION.match(msg)) or level in ("ERROR", "CRITICAL")


def _continues_long(prev: str, row: str) -> bool:
    if row_starts._START.match(row) or " " not in row.strip() or not _is_error_long(prev):
        return False
    if row[:1].islower() or rejoin._CONTINUES.match(row):
        return True
    end = prev.rstrip()[-1:]
    return end.isalnum() or end in ",;:(-"


_BAR_ROWS = [
    " " * n + rate + tail
    for n in (0, 1, 290, 295, 296, 297, 298, 299, 300, 301, 302, 303, 305)
    for rate in ("%|", "it/s]", "s/it]", "%", "it/s", "/it]")
    for tail in ("", " 3/10 [00:01<00:02]")
] + [
    "Loading weights:  40%|" + "#" * 20,
    "x\n" + "%|",
    "ab" * 140 + "\n%|",
    "\r 12%|███",
    "Process EngineCore:",
    "Process EngineCore_DP0:  ",
    "x" * 298 + "s/it]",
    "x" * 299 + "s/it]",
    "x" * 301 + "%|",
]
_PREVS = [
    "(EngineCore pid=1) ERROR 11-29 16:00:40 [core.py:1510] ValueError: too large,",
    "ERROR 11-29 16:00:40 [core.py:1] 2 validation errors for ModelConfig",
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
    "RuntimeError: 1 validation error for x.y",
    "RuntimeError: 12 validation errors for VllmConfig ",
    "CRITICAL 11-29 16:00:40 [a.py:1] boom",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
    "INFO 11-29 16:00:40 [a.py:1] RuntimeError is not an error here",
    "KeyboardInterrupt: ",
]


def test_starts_is_the_whole_pattern() -> None:
    """`_starts` is `_START.match` on every row of the cases, and around the bar's limit
    of 300 characters (rates at 299-305, after a newline, cut short)."""
    rows = [row for lines in CASES for row in lines] + _BAR_ROWS
    for row in rows:
        assert row_starts._starts(row) == bool(row_starts._START.match(row)), row[:120]
    assert sum(map(row_starts._starts, _BAR_ROWS)) > 20


def test_the_reflow_tests_are_the_long_way() -> None:
    """`_is_error` and `_continues` on each pair of rows of the cases, and on pydantic's
    heads, which an error line holds but is not."""
    rows = {row for lines in CASES for row in lines} | set(_PREVS)
    for prev in rows:
        assert error_rows._is_error(prev) == _is_error_long(prev), prev[:120]
    # `_continues` where the rejoin asks it (after an error word), and a sample elsewhere
    pairs = [
        (a, b)
        for lines in CASES
        for k, (a, b) in enumerate(pairwise(lines))
        if error_rows._has_error_word(a) or k % 16 == 0
    ]
    pairs += [(p, r) for p in _PREVS for r in [*_BAR_ROWS, "the rest of it", "or decrease it"]]
    continued = 0
    for prev, row in pairs:
        assert rejoin._continues(prev, row) == _continues_long(prev, row), (prev[:80], row[:80])
        continued += _continues_long(prev, row)
    assert continued > 20


_PIECES = st.sampled_from(
    ["%|", "it/s]", "s/it]", " ", "\n", "x", "Error", "Process ", ": error: ", ".py:1: ",
     "[rank0]", "W1129 ", "INFO:", "\x1b[0m", "(a pid=1)", "During handling of", "█", "\t"]
)  # fmt: skip


@settings(max_examples=300)
@given(st.lists(_PIECES, max_size=12), st.integers(0, 310))
def test_starts_on_generated_rows(pieces: list[str], pad: int) -> None:
    row = "".join(pieces)
    for text in (row, "y" * pad + row, row + "z" * pad):
        assert row_starts._starts(text) == bool(row_starts._START.match(text))


@pytest.mark.parametrize("prev", _PREVS)
def test_is_error_on_pydantic_heads(prev: str) -> None:
    assert error_rows._is_error(prev) == _is_error_long(prev)
