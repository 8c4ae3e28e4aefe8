"""Boot-phase markers are data (rules/markers.py): each is seen in a real corpus log
or is a declared gap, and each reaches the timeline through `progress_key`."""

from __future__ import annotations

from pathlib import Path

from vllm_bootdiag import timeline
from vllm_bootdiag.rules import markers
from vllm_bootdiag.text.triage import Tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

NO_CORPUS_YET = {
    "capture_start": "CUDA-graph capture: no GPU capture in the corpus prints it",
    "graph_captured": "CUDA-graph capture: as above",
    "cpu_kv_default": "printed only when VLLM_CPU_KVCACHE_SPACE is unset",
    "v0_blocks": "V0 GPU block counts: the corpus's V0 releases ran on CPU",
}


def _seen() -> set[str]:
    seen: set[str] = set()
    for log in CORPUS.glob("*/*.log"):
        tail = Tail(log.read_text(errors="replace").splitlines(), timeline.progress_key)
        seen |= {key for _i, key, _m, _ts in tail.markers}
    return seen


def test_every_marker_is_seen_in_a_real_log_or_is_a_declared_gap() -> None:
    keys = {m.key for m in markers.MARKERS}
    seen = _seen()
    assert keys - seen == set(NO_CORPUS_YET), (keys - seen) ^ set(NO_CORPUS_YET)
    assert len(keys) == len(markers.MARKERS), "marker keys are unique"


def test_the_timeline_reads_the_markers_table() -> None:
    assert timeline.MARKERS is markers.MARKERS
    assert set(timeline.PHASE_OF) == {m.key for m in markers.MARKERS}
    for m in markers.MARKERS:
        assert m.phase is None or m.phase in markers.PHASES, m.key
