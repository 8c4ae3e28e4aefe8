"""diagnose's fast paths give what the long way gives.

A tail with one outcome takes it as the primary without ranking and merging (the long
way returns that very outcome): checked on every outcome of every corpus log, damaged
copies too. A pydantic line's input value is read by string operations, held to its
pattern; the boot's eager flag is looked for before its pattern runs.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import classify
from vllm_bootdiag.engine import outcome_fields
from vllm_bootdiag.rules.ruleset import default_rules

diagnose_module = importlib.import_module("vllm_bootdiag.engine.diagnose")
ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted((ROOT / "corpus").glob("*/*.log"))
sys.path.insert(0, str(ROOT / "tests" / "damage"))
import damages  # noqa: E402

RULES = default_rules()


def _tails() -> list[list[str]]:
    out = []
    for log in LOGS:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-400:]
        out.append(lines)
        out.extend(d.apply(lines) for d in damages.DAMAGES[:6])
    return out


def test_one_outcome_is_the_primary_the_long_way_gives() -> None:
    seen = 0
    for lines in _tails():
        d = classify(lines)
        for o in d.matches:
            assert diagnose_module._merged(diagnose_module._primary([o], RULES), [o]) is o
            seen += 1
        if len(d.matches) == 1:
            assert d.primary == d.matches[0]
    assert seen > 1000


def test_was_eager_is_its_pattern_on_every_corpus_boot_and_near_misses() -> None:
    from vllm_bootdiag import remedy, timeline
    from vllm_bootdiag.text.triage import Tail

    args = [
        timeline.facts(Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS))
        for lines in _tails()[::3]
    ]
    texts = [f.non_default_args for f in args if f.non_default_args is not None]
    texts += [
        "{'enforce_eager': True}",
        "{'enforce_eager':True, 'x': 1}",
        "'enforce_eager' : Truex",
        "enforce_eager: True",
        '{"enforce_eager": True}',
        "{'enforce_eager': False}",
        "",
    ]
    eager = 0
    for text in texts:
        facts = timeline.BootFacts.model_construct(non_default_args=text)
        assert remedy.was_eager(facts) == bool(remedy._EAGER_ARG.search(text)), text
        eager += remedy.was_eager(facts)
    assert eager >= 3 and len(texts) > 50


def _input_value_long_way(text: str, start: int) -> str | None:
    m = outcome_fields._INPUT_VALUE.search(text, start)
    return m[1] if m else None


def test_input_value_is_its_pattern_on_every_corpus_line() -> None:
    seen = 0
    for log in LOGS:
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            cut = line.rfind(" [type=")
            if cut >= 0:
                got = outcome_fields.input_value(line, cut)
                assert got == _input_value_long_way(line, cut), line
                seen += got is not None
    assert seen > 20


_PIECES = st.sampled_from(
    [", input_value=", ", input_type=", " [type=", "]", "\n", "abc", "é", "x_1", ",", " ", "=",
     "input_type=", ", input", "\u0301", "[", "'a'"]
)  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(st.lists(_PIECES, max_size=10), st.integers(0, 30))
def test_input_value_is_its_pattern_on_generated_text(pieces: list[str], start: int) -> None:
    text = "".join(pieces)
    start = min(start, len(text))
    assert outcome_fields.input_value(text, start) == _input_value_long_way(text, start), text


_WORD = st.text(alphabet="ab_1é\u0301", min_size=0, max_size=3)


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES, max_size=5), st.lists(_PIECES, max_size=5), _WORD, _PIECES, st.booleans())
def test_input_value_is_its_pattern_on_pydantic_shaped_text(
    head: list[str], value: list[str], word: str, junk: str, newline: bool
) -> None:
    text = "".join(head) + " [type=x" + ", input_value=" + "".join(value)
    text += ", input_type=" + word + "]" + ("\n" if newline else "")
    for t in (text, text + junk, junk + text):
        cut = t.rfind(" [type=")
        assert outcome_fields.input_value(t, max(cut, 0)) == _input_value_long_way(t, max(cut, 0))
        assert outcome_fields.input_value(t, 0) == _input_value_long_way(t, 0), t


def test_input_value_is_linear_on_a_16_kb_line() -> None:
    import time

    for unit in (", input_value=", ", input_value=a", "a, input_type=x]", ", input_type="):
        text = "x [type=value_error" + unit * (16_000 // len(unit)) + ", input_type=str]"
        outcome_fields.input_value(text, 0)
        t0 = time.perf_counter()
        outcome_fields.input_value(text, 0)
        assert time.perf_counter() - t0 < 0.005, unit


def _oom_kind_long_way(
    tail: object, index: int, phases: list[tuple[int, str]], fallback: str
) -> tuple[str, str | None]:
    """`_oom_kind` over the traceback's every line, joined, as it read before."""
    from vllm_bootdiag.rules import attribution

    lines = tail.lines  # type: ignore[attr-defined]
    start = max(0, index - attribution.FRAME_WINDOW)
    frames = None
    for j in range(index, start - 1, -1):
        if "Traceback (most recent call last)" in lines[j]:
            frames = "\n".join(lines[j:index])
            break
    if frames is None:
        j = index
        while j > start and outcome_fields._frame_text(lines[j - 1]).startswith(
            attribution.FRAME_STARTS
        ):
            j -= 1
        frames = "\n".join(lines[j:index])
    if frames:
        for kind, names, hint in attribution.FRAME_GROUPS:
            if any(f in frames for f in names):
                return kind, hint
    before = [p for i, p in phases if i < index]
    if before:
        return attribution._PHASE_TO_OOM.get(before[-1], fallback), f"last phase: {before[-1]}"
    return fallback, None


def test_the_oom_kind_from_distinct_frame_lines_is_the_long_ways() -> None:
    from vllm_bootdiag import timeline
    from vllm_bootdiag.text.triage import Tail

    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    frame = '  File "/x/vllm/worker/gpu_model_runner.py", line 1, in capture_model'
    made = [
        ["Traceback (most recent call last):", '  File "a.py", line 1', "", "", oom],
        ["", "", "", oom],
        ["  File " + "a" * 2000] * 30 + [frame] + ["  File " + "a" * 2000] * 30 + [oom],
        ["Traceback (most recent call last):", frame, frame, "    x = y", oom, frame, oom],
        # the header on the OOM's own line, inside a long line, past the joined window
        ["Traceback (most recent call last):", frame, "Traceback (most recent call last): " + oom],
        [frame, "x" * 3000 + "Traceback (most recent call last)" + "x" * 3000, frame, oom],
        ["Traceback (most recent call last):", frame] + ["  File " + "b" * 900] * 40 + [oom],
        ["Traceback (most recent call last):", "Traceback (most recent call last)" * 40, oom],
        ["Traceback (most recent call last)" + "a" * 40_000, frame, oom, "  File " + "a" * 2000],
        ["Traceback (most recent call last):", frame, *[frame] * 130, oom],
        ["Traceback (most recent call last):", "", "", oom],
    ]
    seen = 0
    for lines in [*_tails(), *made]:
        tail = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        phases = timeline.phase_lines(tail)
        for index, line in enumerate(lines):
            if "out of memory" in line:
                got = outcome_fields._oom_kind(tail, index, phases, "device_oom")
                assert got == _oom_kind_long_way(tail, index, phases, "device_oom"), index
                seen += 1
    assert seen > 50


def _validation_details_long_way(tail: Any, index: int) -> dict[str, str]:
    """`_validation_details` as it read before: each line parsed whole first."""
    out: dict[str, str] = {}
    for j in range(index + 1, min(index + 6, len(tail))):
        text = outcome_fields.line_message(tail, j)
        parsed = outcome_fields._pydantic_line(text)
        if text.startswith(outcome_fields._VALUE_ERROR):
            body = parsed[0] if parsed else text
            if ", " in body:  # (where it is not, the long way raised IndexError)
                out["message"] = body.split(", ", 1)[1]
            return out
        if "argument" not in out and outcome_fields._FIELD.fullmatch(text):
            out["argument"] = text
            continue
        if parsed is not None:
            out["message"] = parsed[0] + (f" (got {parsed[1]})" if parsed[1] else "")
            return out
    return out


def test_the_validation_details_are_the_long_ways() -> None:
    """The lines under `N validation error for X` read without the input value a `Value
    error` line drops: what parsing each line whole gives, on every corpus tail, its damaged
    copies, and hostile lines (a `[type=` right after `Value error,`: once an IndexError)."""
    from vllm_bootdiag import timeline
    from vllm_bootdiag.text.triage import Tail

    header = "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig"
    made = [
        [header, "  Value error, [type=value_error]"],
        [header, "  Value error, a, b [type=value_error, input_value=1, input_type=int]"],
        [header, "  Assertion failed, x [type=assertion_error]", "y"],
        [header, "max_model_len", "  Input should be a valid integer [type=int_parsing, "
         "input_value='x', input_type=str]"],
        [header, "Value error," + " [type=" * 3000],
        [header, "Value error, " + "a, " * 5000 + " [type=value_error]"],
        [header, "a.b", "c.d", "  Input should be x [type=t]", "", ""],
    ]
    seen = 0
    for lines in [*_tails(), *made]:
        tail = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
        for index, line in enumerate(lines):
            if "validation error" in line:
                got = outcome_fields._validation_details(tail, index)
                assert got == _validation_details_long_way(tail, index), (lines[:3], index)
                seen += 1
    assert seen > 50
