"""The pipeline: cut to the tail first, normalize, and cite original line numbers."""

from __future__ import annotations

from pathlib import Path

from vllm_bootdiag import BootWatcher, classify, classify_file
from vllm_bootdiag.rules import BY_ID
from vllm_bootdiag.text import logline, triage

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
KV_LINE = BY_ID["KV004"].examples[0]
NOISE = "(APIServer pid=1) INFO 11-29 16:19:50 [loggers.py:123] Engine 000: Avg throughput"


def test_evidence_cites_the_line_number_in_the_whole_list() -> None:
    lines = [NOISE] * 5000 + [KV_LINE] + [NOISE] * 10
    d = classify(lines)
    assert d.primary.rule_id == "KV004"
    assert d.primary.evidence[0].line == 5001
    assert d.lines_examined == 400


def test_evidence_cites_the_line_number_in_the_whole_text() -> None:
    text = "\n".join([NOISE] * 5000 + [KV_LINE] + [NOISE] * 10) + "\n"
    d = classify(text)
    assert d.primary.evidence[0].line == 5001 and d.lines_examined == 400
    short = "\n".join([NOISE, KV_LINE])
    assert classify(short).primary.evidence[0].line == 2


def test_a_tail_with_a_known_offset_cites_file_lines() -> None:
    lines = KV_LOG.read_text().splitlines()
    whole = classify(lines)
    cut = classify(lines[20:], first_line=21)
    assert whole.primary.evidence == cut.primary.evidence
    assert whole.phase == cut.phase


def test_the_watcher_cites_stream_line_numbers() -> None:
    w = BootWatcher()
    for _ in range(1000):
        w.feed(NOISE)
    d = w.feed(KV_LINE)
    assert d is not None and d.primary.evidence[0].line == 1001


def test_repairs_that_ran_are_listed_and_clean_logs_have_none() -> None:
    assert classify_file(KV_LOG).repairs == ()
    pasted = ["> " + line for line in KV_LOG.read_text().splitlines()]
    d = classify(pasted)
    assert d.repairs, "a quoted paste needs a repair"
    assert d.primary.kind == classify_file(KV_LOG).primary.kind


def test_one_parser_for_ansi_and_records() -> None:
    raw = "\x1b[1;36m(EngineCore_DP0 pid=7)\x1b[0;0m ERROR 11-25 18:39:23 [core.py:1] " + "x"
    h = logline.head(raw)
    assert h.level == "ERROR" and h.text[h.start :] == "x" and h.source == "core.py:1"
    kind, text, start, ts = triage.sort_line(raw)
    assert (kind, text[start:], ts) == (triage.CANDIDATE, "x", "11-25 18:39:23")
    assert logline.parse(raw, 3).process == "EngineCore_DP0"
    import vllm_bootdiag.text.triage as t

    assert not hasattr(t, "_ANSI") and not hasattr(t, "_RECORD")
