"""No vLLM output: empty, foreign and binary input is said to be so, as a typed answer;
every corpus log is vLLM output."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import classify, classify_file
from vllm_bootdiag.text.recognize import is_vllm_output
from vllm_bootdiag.text.tail import decode, read_tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


def test_every_corpus_log_is_vllm_output() -> None:
    assert LOGS
    not_vllm = [p.name for p in LOGS if not is_vllm_output(read_tail(p))]
    assert not_vllm == []


def test_a_cut_log_is_still_vllm_output() -> None:
    """Ten lines from the middle of a boot: a record with its `[file.py:N]`, or a frame."""
    lines = read_tail(KV_LOG)
    assert all(is_vllm_output(lines[i : i + 10]) for i in range(0, len(lines) - 10, 10))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n\n",
        '10.0.0.1 - - [01/Mar/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8.5.0"\n' * 50,
        "Traceback (most recent call last):\n  File \"app.py\", line 1\nKeyError: 'x'\n",
        decode(bytes(random.Random(3).randrange(256) for _ in range(20_000))),
    ],
    ids=["empty", "blank", "nginx", "other-python", "random-bytes"],
)
def test_foreign_input_is_a_typed_answer(text: str) -> None:
    d = classify(text)
    assert d.vllm_output_found is False
    assert d.primary.kind == "unknown"
    assert _round_trips(d)


def _round_trips(d: object) -> bool:
    from vllm_bootdiag import Diagnosis

    assert isinstance(d, Diagnosis)
    return Diagnosis.model_validate_json(d.model_dump_json()) == d


def test_vllm_log_is_vllm_output() -> None:
    assert classify(KV_LOG.read_text()).vllm_output_found is True


def test_classify_file_cites_file_line_numbers(tmp_path: Path) -> None:
    """A log whose boot follows 1000 lines of something else: evidence says the file's line."""
    p = tmp_path / "long.log"
    p.write_text("earlier output\n" * 1000 + KV_LOG.read_text())
    within_tail = classify_file(KV_LOG).primary.evidence[0].line
    assert classify_file(p).primary.evidence[0].line == 1000 + within_tail


def test_a_pasted_line_a_rule_reads_is_vllm_output() -> None:
    """A user pastes one error line (torch's, the hub's, vLLM's without its record prefix):
    when a rule reads it, the answer is that rule's outcome, never "no vLLM output found"."""
    from vllm_bootdiag.rules.ruleset import default_rules

    said_foreign = []
    for rule in default_rules().rules:
        if rule.status != "active" or rule.role != "cause":
            continue
        for example in rule.examples:
            d = classify(example)
            if d.matches and not d.vllm_output_found:
                said_foreign.append((rule.id, example[:60]))
    assert said_foreign == []


_PER_LINE_RECORD = regex.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? "
    r"\[[\w./-]{1,200}\.py:\d{1,6}\]"
)
_PIECES = ("INFO 11-29 16:19:50 [api_server.py:1] ", "ERROR 01-02 03:04:05.12 [a/b.py:9]", "vLLM",
           "\n", "-", "01-02 03:04:05", ".py:", "[x.py:1]", "WARNING 01-02 03:04:05 [x.pyc:1]")  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=30), st.sampled_from(("", *_PIECES)), st.text(max_size=10)),
        max_size=6,
    )
)
def test_the_one_search_says_what_a_search_per_line_says(
    parts: list[tuple[str, str, str]],
) -> None:
    lines = [a + piece + b for a, piece, b in parts]
    per_line = any(
        "vllm" in ln.lower().replace("vllm-bootdiag", "").replace("vllm_bootdiag", "")
        or _PER_LINE_RECORD.search(ln)
        for ln in lines
    )  # (our own name is not vLLM's: `_names_vllm`)
    assert is_vllm_output(lines) == per_line
