"""Colour codes are cut from a long line by `str.replace` of a reset where that is the
whole answer, and a caret-notation line with no letter holds no code: each shortcut must
give what the pattern gives, on any mix of codes, broken codes and text."""

from __future__ import annotations

import random
from pathlib import Path

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


@given(
    st.text(alphabet="ab [m0;", max_size=40),
    st.lists(st.sampled_from(_ESC_PIECES), min_size=1, max_size=12).map("".join),
    st.integers(min_value=0, max_value=600),
    st.sampled_from(["", "\x1b", "\x1b[", "\x1b[0m", "x", "\x1b[1"]),
)
def test_a_repeated_unit_of_codes_comes_off_as_the_pattern_takes_it(
    before: str, unit: str, cut: int, after: str
) -> None:
    text = before + (unit * (2048 // len(unit) + 2))[: 2048 + cut] + after
    assert logline.strip_codes(text) == logline.ANSI.sub("", text)


def test_repeated_units_of_codes_are_cut_as_the_pattern_cuts_them() -> None:
    units = ["\x1b[1m\x1b[0;36m\x1b[32m\x1b[0m", "\x1b[0m", "\x1b[1", "x\x1b[", "\x1b[0;3", "\x1b"]
    units += ["\x1b[1mab", "\x1b[1m\x1b", "\x1b[0m[1m", "\x1b[0;36mINFO 01-02 03:04:05 [a.py:1] up "]
    for unit in units:
        for line in ((unit * 8192)[:16384], "(EngineCore pid=1) " + (unit * 800)[:16001] + "1m"):
            for text in (line, "\n".join(["", *[line] * 9]), "\n".join([line] * 9) + "\n" + line[:99]):
                assert logline.strip_codes(text) == logline.ANSI.sub("", text)


@given(
    st.lists(st.sampled_from(_ESC_PIECES), min_size=1, max_size=12).map("".join),
    st.integers(min_value=2, max_value=9),
    st.sampled_from(["", "\n"]),
    st.sampled_from(["", "\x1b", "\x1b[", "\x1b[0m", "x\n", "\x1b[1"]),
)
def test_a_line_over_and_over_loses_its_codes_as_the_pattern_takes_them(
    piece: str, lines: int, before: str, after: str
) -> None:
    line = (piece * (1100 // len(piece) + 1))[:1100]
    text = before + "\n".join([line] * lines) + after
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


def test_corpus_lines_and_runs_of_them_lose_their_codes_as_the_pattern_takes_them() -> None:
    corpus = Path(__file__).resolve().parent.parent / "corpus"
    coloured = [p for p in sorted(corpus.glob("*/*.log")) if "\x1b" in p.read_text("utf-8", "replace")]
    assert coloured
    for log in coloured:
        text = log.read_text("utf-8", "replace")
        assert logline.strip_codes(text) == logline.ANSI.sub("", text)
        for line in text.splitlines():
            if "\x1b" in line:
                for run in (line, line * (1024 // len(line) + 1), "x" + line * 64):
                    assert logline.strip_codes(run) == logline.ANSI.sub("", run)


def test_a_long_joined_tail_loses_its_codes_line_by_line_as_the_pattern_takes_them() -> None:
    from vllm_bootdiag.text.joined import Joined

    rng = random.Random(3)
    unit = "\x1b[1m\x1b[0;36m\x1b[32m\x1b[0m"
    pieces = [*_ESC_PIECES, "\x1b[1", "x\x1b[0;3"]
    shifted = [(unit * 820)[k % 17 : 16384 + k % 17] for k in range(70)]
    mixed = ["".join(rng.choices(pieces, k=9000))[:16384] for _ in range(70)]
    for lines in (shifted, mixed, [*shifted[:30], "", "\x1b[", "m", *mixed[:40]]):
        joined = Joined.of(lines)
        assert len(joined.doc) >= 2**20
        assert joined.plain == logline.ANSI.sub("", joined.doc)


def test_a_run_of_open_codes_is_answered_by_its_unit() -> None:
    """A unit that ends in a code left open (`\\x1b[`, `\\x1b[1`) is still cut by its unit,
    not by a step of the pattern per ESC: the next copy's ESC closes nothing."""
    for unit in ("\x1b[", "[\x1b", "\x1b[1", "x\x1b[0;3", "\x1b[0m\x1b", "\x1b\x1b["):
        for text in ((unit * 8192)[:16384], "ab" + (unit * 8192)[:16381]):
            got = logline._repeated(text)
            assert got is not None
            assert got == logline.ANSI.sub("", text)
            assert logline.strip_codes(text + "m") == logline.ANSI.sub("", text + "m")


def test_a_run_cut_anywhere_loses_its_codes_as_the_pattern_takes_them() -> None:
    """A run of one code that starts and ends mid-code, with text after it (bench_hostile's
    rows): where the 512-character window's end cuts a code, the replace is still tried."""
    for unit in ("\x1b[0m", "\x1b[0;36m", "\x1b[1m\x1b[0m"):
        for shift in range(len(unit)):
            for end in ("", " 12", "\x1b[", "x"):
                text = (unit * (16384 // len(unit) + 1))[shift:16370] + end
                assert logline.strip_codes(text) == logline.ANSI.sub("", text), (unit, shift)


@given(
    st.text(alphabet="ab [m0;\x1b", max_size=30),
    st.lists(st.sampled_from(_ESC_PIECES), min_size=1, max_size=12).map("".join),
    st.integers(min_value=0, max_value=3000),
    st.text(alphabet="ab [m0;\x1b12", max_size=40),
)
def test_a_run_of_a_unit_with_a_different_rest_loses_its_codes_as_the_pattern_takes_them(
    head: str, unit: str, length: int, rest: str
) -> None:
    """A stretch repeating a unit (cut anywhere) and then a rest of other text (an open
    code the rest may close, a line's number): `_cut` finds the stretch's end (speed's
    edit, the lead's 23:23 item)."""
    for text in (head + (unit * (length // len(unit) + 2))[:length] + rest,
                 head.replace("\x1b", "") + (unit * 3000)[: 1024 + length] + rest):  # fmt: skip
        assert logline.strip_codes(text) == logline.ANSI.sub("", text)


def test_bench_hostile_rows_with_codes_lose_them_as_the_pattern_takes_them() -> None:
    """bench_hostile's rows of units holding an ESC, shifted and numbered (a rest that breaks
    the repetition), alone and after each head, and joined: the pattern's answer, and a
    periodic stretch is found for each row."""
    units = ["\x1b[", "[\x1b", "\x1b", "\x1b[0m", "\x1b[1", "a\x1b[32mb\x1b[0m ", "\x1b[0;", ";\x1b["]
    for unit in units:
        rows = []
        for i in range(12):
            run = unit * (16384 // len(unit) + 1)
            rows.append(run[i % len(unit) :][: 16384 - 16] + f" {i}")
        for text in [*rows, "\n".join(["", *rows]), "ERROR 01-02 03:04:05 [a.py:1] " + rows[3]]:
            assert logline.strip_codes(text) == logline.ANSI.sub("", text), repr(unit)
        at = rows[1].find("\x1b")
        step = rows[1].find(rows[1][at : at + 32], at + 1) - at
        assert logline._copies(rows[1], at, rows[1][at : at + step]) * step > 16000
