"""`damage_check._holds` is `needle in doc`: tried at each of the needle's first character
while they are few, then searched for. Held to `in` on texts of the needle's own characters
(where tries fail late), past the cap of tries, and on the hostile bench's long line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.text.damage_check import _LONG_TEXT as LONG
from vllm_bootdiag.text.damage_check import _holds

NEEDLES = ["[0m", "[0;0m", ":     ", "usage: ", "Traceback (most recent call last)"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(NEEDLES), st.data())
def test_holds_is_in(needle: str, data: st.DataObject) -> None:
    alphabet = st.sampled_from([*set(needle), needle, needle[:-1], "a", "\n"])
    doc = "".join(data.draw(st.lists(alphabet, max_size=60)))
    long = doc + "a" * LONG  # (a short text is searched at once)
    for cap in (0, 1, 3, 64):
        assert _holds(doc, needle, cap) == (needle in doc)
        assert _holds(long, needle, cap) == (needle in long)


@pytest.mark.parametrize("needle", NEEDLES)
def test_past_the_cap(needle: str) -> None:
    many = needle[0] * 300 + "x" + needle[:-1] + "a" * LONG
    assert not _holds(many, needle)
    assert _holds(many + needle, needle)
    assert _holds(needle[0] * 63 + needle + "a" * LONG, needle)
    assert _holds(needle + needle[0] * 300 + "a" * LONG, needle)
