"""An OOM whose tail starts inside its traceback (a worker kept the last lines of a long
one) is still attributed by its frames.

Every corpus OOM log whose traceback has a header is cut to start on the line after it:
the phase lines before the header go, so only the frames above the OOM can name the
phase. The engine core logs its traceback as ERROR records (`... [core.py:1510]   File
...`): before the fix, those frames were not seen as frames without their header, and
the three such logs here (0.27.1, 0.32.0) came out `device_oom` (the phase unknown).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail

ROOT = Path(__file__).resolve().parent.parent
_PHASED = {"weight_load_oom", "cuda_graph_capture_oom", "profiling_oom"}


def _cut_after_header() -> list[tuple[str, list[str], str]]:
    cases = []
    for entry in corpus.entries(ROOT / "corpus"):
        if entry.label.expected.get("kind") not in _PHASED:
            continue
        lines = logtail.read_tail(entry.log_path)
        oom = classify(lines).primary.evidence[0].line - 1
        headers = [i for i in range(oom) if "Traceback (most recent call last)" in lines[i]]
        if headers:
            cases.append((entry.id, lines[headers[-1] + 1 :], str(entry.label.expected["kind"])))
    return cases


_CASES = _cut_after_header()


def test_the_corpus_has_such_tracebacks() -> None:
    assert len(_CASES) >= 6


@pytest.mark.parametrize(("log_id", "lines", "kind"), _CASES, ids=[c[0] for c in _CASES])
def test_frames_without_their_header_name_the_phase(
    log_id: str, lines: list[str], kind: str
) -> None:
    d = classify(lines)
    assert d.phase is None or d.phase == "arguments"  # no phase line is left to read
    assert d.primary.kind == kind
