"""BootWatcher on real logs: fed line by line, it reports what classify() finds, and early."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import BootWatcher, classify, corpus, logtail
from vllm_bootdiag.rules import BY_ID

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
ENTRIES = corpus.entries(CORPUS)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_watcher_reports_the_label_at_its_evidence(entry: corpus.Entry) -> None:
    lines = logtail.read_tail(entry.log_path)
    whole = classify(lines)
    watcher = BootWatcher()
    reported_at = None
    for n, line in enumerate(lines, start=1):
        if watcher.feed(line) is not None:
            reported_at = n
            break
    if entry.label.expected["kind"] == "unknown":
        # No rule knows the cause. An end-of-boot echo (`Engine core initialization failed`)
        # may still end the wait; otherwise the worker asks once the process has exited.
        assert (watcher.reported or watcher.diagnosis()).primary.kind == "unknown"
        return
    assert whole.primary.evidence
    last_evidence = max(e.line for e in whole.primary.evidence)
    settle = 0 if BY_ID[whole.primary.rule_id or ""].terminal else BootWatcher.SETTLE_LINES
    if watcher.reported is None:
        # A non-terminal answer near the end of the output (vLLM exited fewer than
        # SETTLE_LINES lines after it): the worker asks once the process has exited.
        assert settle and len(lines) < last_evidence + settle, "no terminal line seen"
        assert watcher.diagnosis().primary.kind == entry.label.expected["kind"]
        return
    assert watcher.reported.primary.kind == entry.label.expected["kind"]
    # It reports no later than the line the whole-log answer rests on (a non-terminal
    # line, whose details follow it, waits SETTLE_LINES more).
    assert reported_at is not None
    assert reported_at <= last_evidence + settle
