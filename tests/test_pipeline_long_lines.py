"""Overlong lines handed over as a list are cut one by one, and a long tail loses its colour
codes line by line: each shortcut gives what the long way (join, split; one strip of the
joined text) gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail, pipeline
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.logline import strip_codes

_MAX = logtail.MAX_LINE_CHARS
_PIECES = st.sampled_from(
    ["", "a", "x" * _MAX, "y" * (_MAX + 1), "█" * (_MAX + 40), "INFO 01-02 03:04:05 [a.py:1] hi"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=8), st.sampled_from([3, 400]))
def test_overlong_lines_cut_as_a_split_cuts_them(kept: list[str], lines: int) -> None:
    got = pipeline._lines(kept, lines)
    first = max(len(kept) - lines, 0) + 1
    if max(map(len, kept[first - 1 :]), default=0) <= _MAX:
        assert got == (kept[first - 1 :], first)  # nothing to cut: the lines as given
        return
    split = logtail.split_lines("\n".join(kept[first - 1 :]), None)
    assert got == (split[-lines:], first + max(len(split) - lines, 0))


_CODES = st.sampled_from(["\x1b[1m", "\x1b[0;36m", "\x1b[0m", "\x1b[2K", "\x1b[", "ab", " ", "\x1b"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_CODES, min_size=1, max_size=6).map("".join), min_size=1, max_size=4))
def test_a_long_tail_loses_its_codes_line_by_line_as_joined(units: list[str]) -> None:
    lines = [(u * (20_000 // len(u) + 1))[:20_000] for u in units] * 60  # over 2**20 chars
    joined = Joined.of(lines)
    assert len(joined.doc) >= 2**20
    assert joined.plain == strip_codes(joined.doc)
