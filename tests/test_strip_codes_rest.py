"""`logline.strip_codes` on a text whose codes all come before a long rest (a reflowed line
that colour codes lead): the rest is copied, not searched, and the answer is the pattern's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.text.logline import ANSI, strip_codes

_PIECES = st.sampled_from(
    ["\x1b[0m", "\x1b[1;36m", "\x1b[", "\x1b", "\x1b[12", "\x1b[0;0m", "[0m", "m", "0", ";", "a ", "█"]
)
_REST = st.sampled_from(["and more words ", "[0m 1;2 ", "0123456789", "m;m;", "█ ", "x"])


@settings(max_examples=300)
@given(
    st.lists(_PIECES, max_size=40).map("".join),
    _REST,
    st.integers(min_value=1, max_value=3000),
    st.lists(_PIECES, max_size=3).map("".join),
)
def test_a_long_rest_after_the_last_code_is_copied_as_the_pattern_leaves_it(
    head: str, unit: str, copies: int, tail: str
) -> None:
    text = head + unit * copies + tail
    assert strip_codes(text) == ANSI.sub("", text)


def test_the_bench_shape_of_codes_then_a_reflowed_message() -> None:
    text = "\x1b[0m" * 3000 + "ERROR 01-02 03:04:05 [a.py:1] ValueError: x" + " and more" * 20_000
    assert strip_codes(text) == ANSI.sub("", text)
    # a code the last ESC opens, whose digits run on, ends where the pattern ends it
    text = "\x1b[0m x \x1b[" + "1;" * 2000 + "m" + "words " * 500
    assert strip_codes(text) == ANSI.sub("", text)
