"""Boot-phase markers are data (rules/markers.py): each has a range and examples, is
seen in a real corpus log of its range or is a declared gap, and each reaches the
timeline through `progress_key`."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from vllm_bootdiag import corpus, timeline, versions
from vllm_bootdiag.rules import markers
from vllm_bootdiag.text.triage import Tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

NO_CORPUS_YET = {
    "capture_start": "CUDA-graph capture: no GPU capture in the corpus prints it",
    "graph_captured": "CUDA-graph capture: as above",
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


@cache
def _corpus() -> tuple[tuple[str, tuple[str, ...], frozenset[str]], ...]:
    """(version, lines, marker keys seen) of every corpus log."""
    out = []
    for entry in corpus.entries(CORPUS):
        lines = tuple(entry.log_path.read_text(errors="replace").splitlines())
        tail = Tail(lines, timeline.progress_key)
        out.append(
            (entry.label.vllm_version, lines, frozenset(k for _i, k, _m, _t in tail.markers))
        )
    return tuple(out)


@pytest.mark.parametrize("marker", markers.MARKERS, ids=lambda m: m.key)
def test_each_example_is_read_as_its_marker(marker: markers.Marker) -> None:
    assert marker.examples, f"{marker.key}: no example"
    versions.specifier(marker.vllm)  # the range parses
    for ex in marker.examples:
        tail = Tail([ex], timeline.progress_key)
        assert [k for _i, k, _m, _t in tail.markers] == [marker.key], ex


@pytest.mark.parametrize("marker", markers.MARKERS, ids=lambda m: m.key)
def test_each_fact_is_read_from_an_example(marker: markers.Marker) -> None:
    for name, rx in marker.facts:
        assert any(re.search(rx, ex) for ex in marker.examples), (marker.key, name)


@pytest.mark.parametrize(
    "marker", [m for m in markers.MARKERS if m.key not in NO_CORPUS_YET], ids=lambda m: m.key
)
def test_examples_are_taken_from_corpus_logs_of_the_markers_range(marker: markers.Marker) -> None:
    """An example is a corpus line (or its first part: a config dump runs to 2 KB),
    from a log of a release inside the marker's range."""
    for ex in marker.examples:
        found = [v for v, lines, _keys in _corpus() if any(line.startswith(ex) for line in lines)]
        assert found, f"{marker.key}: example not in any corpus log: {ex[:60]}"
        assert any(versions.in_range(versions.normalize(v), marker.vllm) for v in found), (
            marker.key,
            found,
        )


@pytest.mark.parametrize("marker", markers.MARKERS, ids=lambda m: m.key)
def test_no_corpus_log_outside_a_markers_range_shows_it(marker: markers.Marker) -> None:
    outside = sorted(
        {
            v
            for v, _lines, keys in _corpus()
            if marker.key in keys and not versions.in_range(versions.normalize(v), marker.vllm)
        }
    )
    assert not outside, f"{marker.key} is seen in {outside}, outside {marker.vllm!r}"


def test_the_banner_gate_words_are_what_the_banner_markers_require() -> None:
    """progress_key tries the banner pattern only on a message holding one of
    BANNER_WORDS: each banner marker must require one, literally."""
    banners = [m for m in markers.MARKERS if m.key.startswith("banner_")]
    assert banners
    for m in banners:
        assert any(re.search(rf"\b{w}\\s", m.start) for w in timeline.BANNER_WORDS), m.key
        for ex in m.examples:
            assert timeline.progress_key(ex.split("] ", 1)[-1]) == m.key
