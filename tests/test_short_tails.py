"""A worker that kept only the last lines of a failed boot still gets "failed".

Built by cutting real corpus logs: when the lines kept hold only vLLM's echo of the cause
(`Engine core initialization failed. See root cause above.`), the answer is a failed
`unknown` that says the cause is above the lines examined, never a boot that did not fail.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vllm_bootdiag import classify
from vllm_bootdiag.text.tail import read_tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
FAILED = [
    p.with_suffix(".log")
    for p in sorted(CORPUS.glob("*/*.json"))
    if json.loads(p.read_text())["expected"]["kind"] != "booted"
]


@pytest.mark.parametrize("keep", [20, 5])
def test_a_cut_failed_boot_still_failed(keep: int) -> None:
    assert len(FAILED) > 150
    not_failed = [p.name for p in FAILED if not classify(read_tail(p)[-keep:]).failed]
    # Five lines can be all help text (0.8.5 lists what a model path needs after its error);
    # twenty always reach an error line.
    allowed = 0 if keep == 20 else len(FAILED) // 50
    assert len(not_failed) <= allowed, not_failed


def test_only_the_echo_says_the_cause_is_above() -> None:
    log = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
    d = classify(read_tail(log)[-5:])
    assert d.failed and d.primary.kind == "unknown"
    assert "Engine core initialization failed" in (d.primary.last_error_line or "")
    assert "above the lines examined" in d.remediation
