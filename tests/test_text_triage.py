"""Triage's shortcut against the plain way: the scan that leaves out the lines no marker
or rule can concern must give what sorting every line gives, on the corpus, its damaged
copies and spliced lines."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail, timeline
from vllm_bootdiag.text import damage_check
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.triage import Tail

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _same_as_sorting_every_line(lines: list[str]) -> None:
    fast = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
    every = Tail(lines, timeline.progress_key)
    assert fast.other == every.other
    assert fast.markers == every.markers
    assert fast.other_text == every.other_text
    # as the pipeline runs it: the text without colour codes that the clean-tail check made
    joined = Joined.of(lines)
    damage_check.damaged(joined)
    shared = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS, joined=joined)
    assert (shared.other, shared.markers) == (every.other, every.markers)


def test_the_scan_finds_what_sorting_every_line_finds_on_the_corpus() -> None:
    for log in LOGS[::3]:
        tail = logtail.read_tail(log)
        for lines in [tail, *(d.apply(list(tail)) for d in damages.DAMAGES[::3])]:
            _same_as_sorting_every_line(lines)


_POOL = sorted({line for log in LOGS[::5] for line in logtail.read_tail(log)[-40:]})
_PIECES = ("(EngineCore_DP0 pid=12) ", "INFO 01-02 03:04:05 [x.py:1] ", "WARNING 01-02 03:04:05 ",
           "ERROR 01-02 03:04:05 [core.py:9]   File ", "    ", "  File ", "[W1129 16:00:21 ",
           "\x1b[0;36m", "\r", "2026-01-02T03:04:05Z ", "Ma", "█", "[tag] ", "ü", " ",
           "WARNING 01-02 ٠3:04:05 [a.py:1] ", "INFO ٠١-02 03:04:05 [x.py:1] Starting ", "٣")  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_POOL), st.sampled_from(("", *_PIECES)), st.integers(0, 40)),
        min_size=1,
        max_size=10,
    )
)
def test_the_scan_finds_what_sorting_every_line_finds_on_spliced_lines(
    parts: list[tuple[str, str, int]],
) -> None:
    _same_as_sorting_every_line([line[:at] + piece + line[at:] for line, piece, at in parts])
