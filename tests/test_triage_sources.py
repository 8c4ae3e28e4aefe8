"""Triage's scan reads a record's source up to `_SOURCE_MAX` characters and sorts a line
whose source runs longer (or never closes): on lines around that length, with and without
a process tag, a frame after the record or none, the scan finds what sorting every line
finds (bench/bench_classify.py shows what it saves on 16 KB lines with no `]`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import timeline
from vllm_bootdiag.text import damage_check
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.triage import _SOURCE_MAX, Tail

_LEVELS = ("INFO", "DEBUG", "WARNING", "WARN", "ERROR", "CRITICAL")
_MESSAGES = ("Starting to load model x", '  File "a.py", line 1', "    raise X", "boom", "")


def _line(tag: bool, level: str, source: int, close: bool, message: str) -> str:
    head = "(APIServer pid=1) " if tag else ""
    src = "[" + "a" * source + ("]" if close else "")
    return f"{head}{level} 01-02 03:04:05 {src} {message}"


def _same(lines: list[str]) -> None:
    every = Tail(lines, timeline.progress_key)
    for joined in (None, Joined.of(lines)):
        if joined is not None:
            damage_check.damaged(joined)  # as the pipeline runs it (tags taken off)
        some = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS, joined=joined)
        assert (some.other, some.markers, some.other_text) == (
            every.other,
            every.markers,
            every.other_text,
        )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.sampled_from(_LEVELS),
            st.integers(_SOURCE_MAX - 3, _SOURCE_MAX + 3) | st.integers(0, 20),
            st.booleans(),
            st.sampled_from(_MESSAGES),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_sources_around_the_longest_read_sort_as_every_line_sorts(
    parts: list[tuple[bool, str, int, bool, str]],
) -> None:
    _same([_line(*p) for p in parts])
