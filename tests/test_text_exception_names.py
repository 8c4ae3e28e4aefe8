"""An exception's dotted name found by what the pattern must read (`exception_names`),
held to the patterns themselves (the `regex` module, the long way) on texts of name
parts, dots, colons, digits, white space and letters outside ASCII; and on 16 KB runs
that made the patterns backtrack, its answer without them."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.text import exception_names as names

EXCEPTION = regex.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt): ")
STARTS_LINE = regex.compile(
    r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)(?::|\s*$)"
)

_PIECES = (
    "A", "a", "Z", "_", "0", "9", ".", "..", ":", ": ", " ", "\t", "\n", "\x1c", "\xa0", "é",
    "\u0663", "\u00b2", "\u0301", "\u200d", "Error", "Exception", "Exit", "Interrupt", "Warning",
    "ValueError", "torch.", "Out", "OfMemory", "x.", "1.", "_.", "-", "(", "File \"", ", in ",
)  # fmt: skip
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


@settings(max_examples=1500, deadline=None)
@given(_TEXT, st.integers(0, 8))
def test_the_search_finds_what_the_pattern_finds(text: str, pos: int) -> None:
    m = EXCEPTION.search(text, pos)
    assert names.search(text, pos) == (m.span() if m is not None else None)


@settings(max_examples=1500, deadline=None)
@given(_TEXT)
def test_the_matches_say_what_the_patterns_say(text: str) -> None:
    assert names.match(text) == (EXCEPTION.match(text) is not None)
    assert names.starts_line(text) == (STARTS_LINE.match(text) is not None)


_RUNS = ("A.", "a.", "Aa.", "A1.", "_.", "0.", ".a", "A", "a.b.c", "Error.", "AError.", "é.")


def test_runs_that_made_the_patterns_backtrack() -> None:
    """Each 16 KB run, bare and with what the pattern needs after it: the answers the
    pattern gives on the same text a hundred times shorter, where it is quick."""
    for unit in _RUNS:
        for tail in ("", ": ", "Error: ", "Error", "ValueError: x", "Warning  "):
            for n in (16384 // len(unit), 160 // len(unit)):
                text = unit * n + tail
                short = unit * (160 // len(unit)) + tail
                got = (names.search(text), names.match(text), names.starts_line(text))
                want = EXCEPTION.search(short), EXCEPTION.match(short), STARTS_LINE.match(short)
                # the answers do not depend on how many copies of the unit come first:
                # where a match is, it starts at the same place in the unit's copies
                assert (got[0] is None) == (want[0] is None), (unit, tail)
                assert got[1:] == (want[1] is not None, want[2] is not None), (unit, tail)
                if got[0] is not None and want[0] is not None:
                    assert len(text) - got[0][0] == len(short) - want[0].start() or (
                        got[0][0] == want[0].start()
                    )
                    assert len(text) - got[0][1] == len(short) - want[0].end()
