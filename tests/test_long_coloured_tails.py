"""A long coloured tail (over 1 MB) is read through its lines without colour codes, made once
by the clean-tail check: the unknown's last error line is looked for in them, and bare resets
(`[0m` that lost its ESC) are looked for in them first. Each shortcut gives the long way's
answer on tails built to hide error words and resets among codes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import classify
from vllm_bootdiag.text import damage_check
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.triage import Tail

_PIECES = st.sampled_from(
    ["\x1b[1m", "\x1b[0;36m", "\x1b[0m", "\x1b[0;0m", "[0m", "[0;0m", "\x1b[", "0m", "ER",
     "ROR", "ERROR 01-02 03:04:05 [a.py:1] ", "ValueError: bad", "Err", "or", " ", "x"]
)  # fmt: skip
_LINE = st.lists(_PIECES, min_size=1, max_size=12).map("".join)
_CLEAN_PIECES = st.sampled_from(
    ["\x1b[1m", "\x1b[0;36m", "\x1b[0m", "ER", "ROR", "ValueError: bad", "Err", "or", " ", "x"]
)
_CLEAN_LINE = st.lists(_CLEAN_PIECES, min_size=1, max_size=12).map("".join)
"""Lines of a tail the check calls clean (no bare reset, no record inside a line), where the
stripped lines are made and read."""


def _long(lines: list[str]) -> list[str]:
    """Each line padded with codes to 16 KB (the tail over 1 MB), its own text at the end."""
    return [("\x1b[32m" * 3300)[: 16_000 - len(line)] + line for line in lines]


@settings(max_examples=30, deadline=None)
@given(st.lists(_LINE, min_size=70, max_size=80) | st.lists(_CLEAN_LINE, min_size=70, max_size=80))
def test_the_unknown_reads_the_stripped_lines_as_the_raw_ones(lines: list[str]) -> None:
    tail = _long(lines)
    got = classify(tail)
    shortcut = Tail.plain_lines
    Tail.plain_lines = property(lambda self: None)  # type: ignore[assignment,method-assign]
    try:
        want = classify(tail)
    finally:
        Tail.plain_lines = shortcut  # type: ignore[method-assign]
    assert got.model_dump_json() == want.model_dump_json()


@settings(max_examples=60, deadline=None)
@given(st.lists(_LINE, min_size=70, max_size=80))
def test_a_bare_reset_outlives_the_strip(lines: list[str]) -> None:
    joined = Joined.of(_long(lines))
    doc, plain = joined.doc, joined.plain
    assert len(doc) >= 2**20
    for reset in ("[0m", "[0;0m"):
        if doc.count(reset) > doc.count("\x1b" + reset):  # a bare one in the doc
            assert reset in plain
            assert damage_check.damaged(Joined.of(_long(lines)))


def test_a_bare_reset_among_codes_is_still_damage() -> None:
    lines = _long(["INFO 01-02 03:04:05 [a.py:1] ok"] * 69 + ["x[0m y"])
    assert damage_check.damaged(Joined.of(lines))
    lines = _long(["INFO 01-02 03:04:05 [a.py:1] ok"] * 70)
    assert not damage_check.damaged(Joined.of(lines))
