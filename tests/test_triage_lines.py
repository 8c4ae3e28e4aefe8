"""Triage's scan on lines that are empty once their colour codes are taken off (last or
not), and on 400 lines of 16 KB (matched where each line starts, not searched through):
it finds what sorting every line finds."""

from __future__ import annotations

import pytest

from vllm_bootdiag import timeline
from vllm_bootdiag.text.triage import Tail

_RECORD = "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] "


def _same(lines: list[str]) -> None:
    some = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS)
    every = Tail(lines, timeline.progress_key)
    assert (some.other, some.markers, some.other_text) == (
        every.other,
        every.markers,
        every.other_text,
    )


@pytest.mark.parametrize(
    "lines",
    [
        ["ValueError: x", "\x1b[0m"],
        ["\x1b[0m"],
        ["\x1b[31m\x1b[0m", _RECORD + "Starting to load model x", "\x1b[0m\x1b[0m"],
        ["", "x", ""],
    ],
)
def test_lines_of_colour_codes_alone_are_candidates_as_sorted(lines: list[str]) -> None:
    _same(lines)


@pytest.mark.parametrize(
    "run", ["\x1b[0m", " ", "ERROR 01-02 03:04:05 [", "█", "Starting to load model "]
)
def test_400_lines_of_16_kb_sort_as_every_line_sorts(run: str) -> None:
    lines = [((_RECORD if k % 2 else "") + run * 8192)[:16384] for k in range(400)]
    _same(lines)
