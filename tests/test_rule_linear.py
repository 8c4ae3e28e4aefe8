"""Every pattern is linear in its input: adversarial 16 KB lines, bounded time per line.

Runs of the characters vLLM's own lines are made of (block characters of the
banner, spaces, digits, parentheses, backticks), and each rule's literal repeated,
are fed to every rule pattern, every timeline marker and fact, the version
detectors, the line parser and the whole pipeline. A quadratic pattern costs
seconds on such a line (the banner marker did: 1.1-1.9 s); a linear one, about a
millisecond. The bound is loose (a loaded CI machine) but two orders below that.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from vllm_bootdiag import classify, timeline, versions
from vllm_bootdiag.rules import RULES, Rule
from vllm_bootdiag.text import logline, triage

SIZE = 16_384
BOUND_S = 0.25
"""Per line. Quadratic at 16 KB is seconds; linear is ~1 ms."""

RUNS = {
    "blocks": "█" * SIZE,
    "blocks-spaces": "█ ▀▄" * (SIZE // 4),
    "spaces": " " * SIZE,
    "digits": "9" * SIZE,
    "dotted-digits": "1." * (SIZE // 2),
    "parens": "(" * (SIZE // 2) + ")" * (SIZE // 2),
    "open-parens": "(" * SIZE,
    "backticks": "`" * SIZE,
    "commas": "1," * (SIZE // 2),
    "braces": "{'" * (SIZE // 2),
}


def _timed(fn: Callable[[], object]) -> float:
    """Seconds of a second call: the first compiles patterns lazily, which is not matching."""
    fn()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _lines_for(rule: Rule) -> dict[str, str]:
    lit = rule.literal
    out = {}
    for name, run in RUNS.items():
        out[f"{name}-after"] = (lit + " " + run)[:SIZE]
        out[f"{name}-around"] = (run[: SIZE // 2] + lit + run[: SIZE // 2])[:SIZE]
        out[f"{name}-example"] = (rule.examples[0] + run)[:SIZE]
    out["literal-repeated"] = (lit + " ") * (SIZE // (len(lit) + 1))
    return out


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_patterns_are_linear(rule: Rule) -> None:
    slow = {}
    for name, line in _lines_for(rule).items():
        spent = _timed(lambda line=line: rule.match(line))  # type: ignore[misc]
        if spent > BOUND_S:
            slow[name] = round(spent, 3)
    assert not slow, slow


MESSAGE_STARTS = [
    alt for m in timeline.MARKERS for alt in timeline._alternatives(m.start) if alt[:2].isascii()
]


@pytest.mark.parametrize("run", list(RUNS), ids=str)
def test_markers_facts_versions_and_the_parser_are_linear(run: str) -> None:
    text = RUNS[run]
    lines = [
        text,
        "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] " + text,
        "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347]  █ ▄ version " + text,
        "INFO 11-29 16:19:50 [x.py:1] vLLM API server version " + text,
        "Uvicorn running on " * (SIZE // 19),
        "non-default args: {" + text,
        "2026-11-29T16:20:31.123Z " + text,
        "(" + "a pid=1 " * (SIZE // 8),
    ]
    slow = {}
    for k, line in enumerate(lines):
        for name, fn in (
            ("progress_key", lambda line=line: timeline.progress_key(line)),
            ("detect", lambda line=line: versions.detect([line])),
            ("parse", lambda line=line: logline.parse(line)),
            ("sort_line", lambda line=line: triage.sort_line(line)),
            ("timeline", lambda line=line: timeline.build([line])),
        ):
            spent = _timed(fn)  # type: ignore[arg-type]
            if spent > BOUND_S:
                slow[f"{name}[{k}]"] = round(spent, 3)
    assert not slow, slow


def test_every_marker_start_fed_a_run_is_linear() -> None:
    slow = {}
    for start in MESSAGE_STARTS:
        for name, run in RUNS.items():
            line = (start + " " + run)[:SIZE]
            spent = _timed(lambda line=line: timeline.build([line]))  # type: ignore[misc]
            if spent > BOUND_S:
                slow[(start[:20], name)] = round(spent, 3)
    assert not slow, slow


@pytest.mark.parametrize("run", list(RUNS), ids=str)
def test_the_pipeline_on_a_tail_of_adversarial_lines(run: str) -> None:
    """A tail of such lines (5 per run, tagged as vLLM records) through classify."""
    text = RUNS[run]
    lines = [
        text,
        "(EngineCore pid=2) ERROR 11-29 16:20:31 [core.py:1] " + text,
        "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] " + text,
        "ValueError: " + text,
        "  File " + text,
    ]
    spent = _timed(lambda: classify(lines))
    assert spent < 5 * BOUND_S, spent
