"""A log handed over as one escaped string (a worker's JSON error field, a JSON string, the
repr of the list of lines a script kept) reads as the log it holds: every corpus tail so
escaped keeps its kind and numbers (and its version and phase where the document fits one
line as read), evidence cites the row the user handed over, and no tail vLLM printed is
taken for one."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.rules import RULES
from vllm_bootdiag.text.escaped import MAX_ROWS, unescaped_rows

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(CORPUS)}

Escape = Callable[[list[str]], list[str]]
ESCAPES: dict[str, Escape] = {
    "json_error_field": lambda ls: [json.dumps({"error": "\n".join(ls), "status": "FAILED"})],
    "json_string": lambda ls: [json.dumps("\n".join(ls) + "\n")],
    "escaped_text": lambda ls: [json.dumps("\n".join(ls))[1:-1]],  # a string's inside
    "readlines_repr": lambda ls: [repr([x + "\n" for x in ls])],
    "pretty_json": lambda ls: [
        "{",
        '  "status": "FAILED",',
        f'  "error": {json.dumps(chr(10).join(ls))}',
        "}",
    ],
}


def _key(lines: list[str], whole: bool) -> tuple[object, ...]:
    d = classify(lines)
    p = d.primary
    return (p.kind, damages.numbers(p), *((d.vllm_version, d.phase) if whole else ()))


@pytest.mark.parametrize("escape", ESCAPES, ids=list(ESCAPES))
def test_an_escaped_corpus_tail_reads_as_the_tail(escape: str) -> None:
    wrong = []
    for log_id, tail in TAILS.items():
        rows = ESCAPES[escape](list(tail))
        # a longer row is cut as read (its start and its end kept): vLLM's version and
        # the error survive, phases in the middle may not
        whole = max(map(len, rows)) <= logtail.MAX_LINE_CHARS
        d = classify(rows)
        if _key(rows, whole) != _key(tail, whole):
            wrong.append(f"{log_id}: {d.primary.kind} {d.vllm_version} {d.phase}")
        if d.primary.kind != "unknown" or classify(tail).primary.kind != "unknown":
            assert "escaped_log" in d.repairs, log_id
    assert not wrong, "\n".join(wrong[:10])


@pytest.mark.parametrize("width", [80, 120])
def test_an_escaped_tail_a_terminal_wrapped_reads_as_the_tail(width: int) -> None:
    """Shown in a terminal and copied from it: the long row comes back hard-wrapped."""
    wrong = []
    for log_id, tail in list(TAILS.items())[::3]:
        want = classify(tail).primary.kind
        for escape, view in ESCAPES.items():
            got = classify(damages._hard_wrap(width)(view(list(tail)))).primary.kind
            if got != want:
                wrong.append(f"{log_id} {escape}: {got} (want {want})")
    assert not wrong, "\n".join(wrong[:10])


def test_evidence_cites_the_row_the_user_handed_over() -> None:
    for log_id, tail in list(TAILS.items())[::7]:
        d = classify(ESCAPES["pretty_json"](list(tail)))
        assert {e.line for e in d.primary.evidence} <= {3}, log_id


def test_no_log_vllm_printed_is_taken_for_an_escaped_one() -> None:
    for log_id, tail in TAILS.items():
        for cut in (tail, tail[-MAX_ROWS:], tail[-3:]):
            assert unescaped_rows(cut) is None, log_id
        for d in damages.DAMAGES:
            assert unescaped_rows(d.apply(list(tail))) is None, (log_id, d.name)
    for rule in RULES:
        for text in (*rule.examples, *rule.counter_examples):
            assert unescaped_rows(text.splitlines()) is None, rule.id


@pytest.mark.parametrize(
    "row",
    [
        "[" * 16000,
        '{"a": ' * 3000 + "1" + "}" * 3000,
        "['" + "\\n" * 8000 + "']",
        '"' + "9" * 16000 + '\\n"',
        "{'x': " + "'\\n', " * 2500 + "}",
        "\\n" * 8000,
        "['a', 'b']",
    ],
    ids=["brackets", "nested", "list_of_escapes", "digits", "dict_repr", "escapes", "short"],
)
def test_a_hostile_row_gets_a_typed_answer_fast(row: str) -> None:
    for rows in ([row], [row * 16] * 8):  # (8 rows of 256 KB are kept whole: a document)
        t0 = time.perf_counter()
        d = classify(rows)
        assert d.primary.kind == "unknown"
        if sys.gettrace() is None:
            assert time.perf_counter() - t0 < 0.5
