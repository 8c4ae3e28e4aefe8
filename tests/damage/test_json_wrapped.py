"""docker json-file records as users hand them over: behind a CI gutter or a markdown
quote, hard-wrapped by a terminal (`cat` of the container's `*-json.log`), or with the
error message inside a record reflowed at its sentences.

Built by damaging real corpus logs (tests/damage/damages.py), two damages in a row:
each record must be decoded (its message read, not the escaped JSON around it), so the
answer and its numbers equal the clean log's. Before the fix, the engine-kill log
(LC004, whose pattern ends the line) came out `unknown` under every pair below, and a
reflowed KV shortfall lost vLLM's estimate of the context that fits.
"""

from __future__ import annotations

from pathlib import Path

import damages
import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.text.normalize import normalize

ROOT = Path(__file__).resolve().parents[2]
_BY_NAME = {d.name: d for d in damages.DAMAGES}
_LOGS = (
    "0.22.0/engine_died__engine-sigkill__cpu.log",
    "0.17.0/engine_died__engine-sigkill__cpu.log",
    "0.32.0/kv_cache_shortfall__llama1b-kvspace1__cpu.log",
    "0.32.0/model_not_found__hub-repo-missing__cpu.log",
    "0.25.0/kv_cache_shortfall__llama1b-kvspace1__cpu.log",
    "0.27.1/weight_load_oom__llama1b-weights-v2__cuda.log",
)
_OUTER = ("ci_gutter", "markdown", "wrap80", "wrap120", "fold100", "reflow")


def _json_then(*outer: str) -> damages.Damage:
    steps = [_BY_NAME["json_file"], *(_BY_NAME[n] for n in outer)]

    def apply(lines: damages.Lines) -> damages.Lines:
        for step in steps:
            lines = step.apply(lines)
        return lines

    return damages.Damage("+".join(("json_file", *outer)), apply)


_CASES = [
    (log, outer)
    for log in _LOGS
    for outer in _OUTER
    # wrapped, this one's 400 rows no longer reach back to the phase that names the OOM
    if not ("weight_load_oom" in log and outer.startswith(("wrap", "fold")))
]


@pytest.mark.parametrize(
    "log",
    [
        "0.10.1.1/model_not_found__hub-repo-missing__cpu.log",
        "0.10.1.1/invalid_argument__dtype-float7__cpu.log",
        "0.13.0/booted__smollm135m-eager__cpu.log",
    ],
)
def test_wrapped_records_pasted_as_a_quote_read_as_the_clean_log(log: str) -> None:
    """A terminal wrapped the records, then the rows were quoted (`> ` on each): the
    record is gathered from rows that each lose their quote first."""
    lines = logtail.read_tail(ROOT / "corpus" / log)
    clean = classify(lines)
    r = damages.check(lines, _json_then("wrap120", "markdown"), clean)
    assert (r.kind, r.wrong_numbers) == (clean.primary.kind, ())


@pytest.mark.parametrize(("log", "outer"), _CASES)
def test_json_records_under_a_second_damage_read_as_the_clean_log(log: str, outer: str) -> None:
    lines = logtail.read_tail(ROOT / "corpus" / log)
    clean = classify(lines)
    r = damages.check(lines, _json_then(outer), clean)
    assert (r.kind, r.wrong_numbers) == (clean.primary.kind, ())


def test_a_wrapped_record_is_decoded_once_whole() -> None:
    """Each wrapped record comes back as its message, citing every row it was built from;
    its first row is not cut at the record inside its escaped text."""
    entry = next(e for e in corpus.entries(ROOT / "corpus") if e.id.endswith("sigkill__cpu"))
    lines = logtail.read_tail(entry.log_path)[:40]
    rows = _json_then("wrap80").apply(list(lines))
    out, ran = normalize(rows)
    assert "json_file" in ran and "rejoin_wrapped" in ran
    assert "split_collapsed" not in ran
    decoded = [ln for ln in out if "json_file" in ln.repairs]
    assert len(decoded) >= len(lines) - 3  # a record wrapped in a run of spaces may stay raw
    assert all(not ln.text.startswith('{"') for ln in decoded)
    assert any(ln.last > ln.first for ln in decoded)


def test_records_run_together_are_each_decoded() -> None:
    """A paste that lost the newlines between json-file records (the error block of a
    corpus log): every record's message is read; what follows the last whole one stays."""
    log = ROOT / "corpus" / "0.32.0" / "model_files_unreadable__safetensors-header-cut__cpu.log"
    lines = logtail.read_tail(log)
    clean = classify(lines)
    pasted = damages.collapse(damages.json_file(lines))
    assert classify(pasted).primary.kind == clean.primary.kind == "model_files_unreadable"
    out, ran = normalize([pasted[0] + ' {"log": "cut sh'])
    assert ran == ("json_file",)
    assert [ln.text for ln in out][-1] == '{"log": "cut sh'
    assert len(out) == 31
