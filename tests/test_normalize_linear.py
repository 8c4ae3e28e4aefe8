"""The repair steps and the clean-tail check are linear: adversarial 16 KB lines, bounded
time per line (as tests/test_rule_linear.py holds the rules). Runs of what the steps'
patterns key on: a pod name's characters and dashes (stern), a service name (compose),
a fence's indent, parentheses (a process tag), a timestamp's digits and dashes, a
record's level. bench/bench_text_stages.py gives what they cost; this only catches a
pattern that turns quadratic."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from vllm_bootdiag.text import damage_check, normalize

SIZE = 16_384
BOUND_S = 0.25
"""Per line. Quadratic at 16 KB is seconds; linear is ~1 ms."""

RUNS = {
    "spaces": " " * SIZE,
    "dashes": "-" * SIZE,
    "pod-like": "a-" * (SIZE // 2),
    "timestamp-like": "01-" * (SIZE // 3),
    "levels": "INFO 01-" * (SIZE // 8),
    "records": "INFO 01-02 03:04:05 " * (SIZE // 20),
    "open-parens": "(" * SIZE,
    "tag-like": "(x pid=1" * (SIZE // 8),
    "word": "x" * SIZE,
    "digits": "9" * SIZE,
    "quotes": 'File "' * (SIZE // 6),
    "colons": ":     " * (SIZE // 6),
    "resets-like": "[0" * (SIZE // 2),
    "stamps": "INFO 01-02 03:" * (SIZE // 14),
    "colour codes": "\x1b[0m" * (SIZE // 4),
    "caret codes": "^[[" * (SIZE // 3),
    "quote markers": "> " * (SIZE // 2),
    "exception words": "Error: " * (SIZE // 7),
}
PREFIXES = ("", "  | ", "vllm-1  | ", "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] ")


def _timed(fn: Callable[[], object]) -> float:
    fn()  # the first call compiles patterns lazily
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


@pytest.mark.parametrize("run", RUNS, ids=list(RUNS))
def test_each_step_is_linear_on_a_16_kb_line(run: str) -> None:
    for prefix in PREFIXES:
        line = (prefix + RUNS[run])[:SIZE]
        assert _timed(lambda line=line: normalize._per_line(line)) < BOUND_S
        assert _timed(lambda line=line: damage_check.damaged("\n" + line)) < BOUND_S
        rows = [(line, 1, 1, ()), (line, 2, 2, ())]
        raw = [line, line]
        assert _timed(lambda rows=rows, raw=raw: normalize._rejoin(rows, raw, 1)) < BOUND_S
