"""`Tail.stated_version` is `versions.detect` of a version marker's message, read once per
tail (boots' walk and the diagnosis both ask it): the same answer on every corpus tail's
version lines, and on lines that state none or a bad one."""

from __future__ import annotations

from pathlib import Path

from vllm_bootdiag import logtail, timeline, versions
from vllm_bootdiag.text.triage import Tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_KEYS = ("api_version", "banner_version", "engine_init")


def test_each_version_line_reads_as_detect_reads_it() -> None:
    seen = 0
    for log in sorted(CORPUS.glob("*/*.log"))[::2]:
        tail = Tail(logtail.read_tail(log), timeline.progress_key, None, timeline.MESSAGE_STARTS)
        for i, key, message, _ts in tail.markers:
            if key in _KEYS:
                first = tail.stated_version(i, message)
                assert first == versions.detect((message,))
                assert tail.stated_version(i, message) is first  # (read once)
                seen += 1
    assert seen > 100


def test_lines_that_state_no_version() -> None:
    lines = [
        "INFO 01-02 03:04:05 [a.py:1] vLLM API server version x.y",
        "INFO 01-02 03:04:05 [a.py:1] Initializing a V1 LLM engine with config: model='m'",
        "INFO 01-02 03:04:05 [a.py:1] vLLM API server version 0.11.0",
    ]
    tail = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
    got = [tail.stated_version(i, m) for i, _k, m, _t in tail.markers]
    assert got == [versions.detect((m,)) for _i, _k, m, _t in tail.markers]
    assert got[0] is None and got[-1] is not None and str(got[-1].version) == "0.11.0"
