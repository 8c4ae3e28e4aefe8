"""BootWatcher says `booted` on the server-start line, as classify reads it: a worker
watching a real boot stops waiting the moment vLLM starts serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import BootWatcher, classify, corpus, logtail
from vllm_bootdiag.rules.ruleset import default_rules

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
BOOTED = [e for e in corpus.entries(CORPUS) if e.label.expected["kind"] == "booted"]
_LC005 = default_rules().by_id("LC005")


def _serve_line(lines: list[str]) -> int | None:
    """1-based number of the first `Starting vLLM (API) server on ...` line."""
    for n, line in enumerate(lines, 1):
        if _LC005.match(line) is not None and "INFO" in line:
            return n
    return None


WITH_SERVE = [e for e in BOOTED if _serve_line(logtail.read_tail(e.log_path))]


def test_most_booted_corpus_logs_print_the_server_start() -> None:
    assert len(WITH_SERVE) >= 10
    assert len(WITH_SERVE) >= len(BOOTED) // 2


@pytest.mark.parametrize("entry", WITH_SERVE, ids=[e.id for e in WITH_SERVE])
def test_a_booted_log_is_reported_on_its_server_start_line(entry: corpus.Entry) -> None:
    lines = logtail.read_tail(entry.log_path)
    serve = _serve_line(lines)
    assert serve is not None
    watcher = BootWatcher()
    reported_at = None
    for n, line in enumerate(lines, 1):
        if watcher.feed(line) is not None:
            reported_at = n
            break
    assert reported_at == serve
    assert watcher.reported is not None
    up_to_serve = classify(lines[:serve])
    assert up_to_serve.primary.kind == "booted"  # what classify says of the same lines
    assert watcher.reported.primary == up_to_serve.primary
    assert watcher.reported.primary.evidence[0].line == serve


def test_a_failure_line_before_the_server_start_is_still_what_is_reported() -> None:
    entry = WITH_SERVE[0]
    lines = logtail.read_tail(entry.log_path)
    serve = _serve_line(lines)
    assert serve is not None
    # The OOM line of a corpus log lands before the server start.
    oom = next(ln for ln in logtail.read_tail(CORPUS.parent / "corpus/0.17.0/cuda_graph_capture_oom__llama1b-capture__cuda.log") if "CUDA out of mem" in ln)
    watcher = BootWatcher()
    results = [watcher.feed(line) for line in [*lines[: serve - 1], oom, lines[serve - 1]]]
    reported = next(r for r in results if r is not None)
    assert reported.primary.kind != "booted"
    assert results[-1] is None  # once reported, the server start changes nothing
