"""Colour codes are cut from a long line by `str.replace` of a reset where that is the
whole answer, and a caret-notation line with no letter holds no code: each shortcut must
give what the pattern gives, on any mix of codes, broken codes and text."""

from __future__ import annotations

import regex
from hypothesis import given
from hypothesis import strategies as st

from vllm_bootdiag.text import logline, wrappers

_ESC_PIECES = ["\x1b[0m", "\x1b[0;36m", "\x1b[", "\x1b", "[0m", "0m", "m", "x", " ", ";", "["]
_CARET_PIECES = ["^[[0m", "^[[", "^[", "^", "␛[0m", "␛[", "␛", "[0m", "[", "0", ";", "m", "x", "1m"]
_CARET_REFERENCE = regex.compile(r"(?:(?:\^\[|␛)\[[0-9;?]*[A-Za-z])+")
"""The caret pattern as it was, in the `regex` module: what `ansi_text` must still give."""


_RECORD = "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] "


def _long(pieces: list[str]) -> st.SearchStrategy[str]:
    """Texts of the pieces, past the length where the shortcuts start (1024)."""
    return st.lists(st.sampled_from(pieces), max_size=40).map(
        lambda parts: "".join(parts) * (1024 // max(len("".join(parts)), 1) + 1)
    )


@given(_long(_ESC_PIECES) | st.lists(st.sampled_from(_ESC_PIECES), max_size=30).map("".join))
def test_strip_codes_is_the_pattern(text: str) -> None:
    assert logline.strip_codes(text) == logline.ANSI.sub("", text)


@given(_long(_CARET_PIECES) | st.lists(st.sampled_from(_CARET_PIECES), max_size=30).map("".join))
def test_caret_codes_come_off_as_the_pattern_takes_them(text: str) -> None:
    if ("^" in text and "^[[" in text) or ("␛" in text and "␛[" in text):
        assert wrappers.ansi_text(text) == _CARET_REFERENCE.sub("", text)


def test_the_shortcuts_answer_runs_of_codes_and_of_broken_ones() -> None:
    for run in ("\x1b[0m", "\x1b[0m\x1b[1m", "\x1b[0mx", "\x1b[0;36m", "\x1b[1mx\x1b[", "\x1b["):
        text = (run * 8192)[:16380]
        assert logline.strip_codes(text) == logline.ANSI.sub("", text)
    for run in ("^[[", "^[[0m", "^[[0", "␛[0m", "␛[", "^[[0;36m", "x^[[1m", "^[[0m␛[0m", "^[[1m^["):
        for text in ((run * 8192)[:16380], (_RECORD + run * 8192)[:16384], run * 400 + "ab"):
            assert wrappers.ansi_text(text) == _CARET_REFERENCE.sub("", text)
    # the code cut out joins what is around it into a code: the pattern leaves that one
    for code in ("\x1b[0m", "\x1b[1;31m"):
        joined = code + "\x1b" + code + "[1m" + "x" * 1024
        assert logline.strip_codes(joined) == "\x1b[1m" + "x" * 1024
    for code in ("^[[0m", "␛[33m"):
        caret = code + "^[" + code + "[1m" + "x" * 1024
        assert wrappers.ansi_text(caret) == "^[[1m" + "x" * 1024


def test_a_record_source_is_read_without_its_brackets() -> None:
    assert logline.split("INFO 01-02 03:04:05 [api_server.py:12] up")[4] == "api_server.py:12"
    assert logline.split("ERROR 01-02 03:04:05 [" * 700)[2] is None
