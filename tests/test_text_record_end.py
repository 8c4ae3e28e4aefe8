"""A line is searched for records only up to its last `]` after a digit (a record's source
ends `:N]`), and for a kind of start only where a character its match holds is left: the
cuts must be those of the searches without these shortcuts, on corpus lines, their
collapsed copies and long lines of stamps, brackets, records and starts spliced together."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import collapsed

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages
from test_normalize_collapsed import reference

LOGS = sorted((Path(__file__).resolve().parent.parent / "corpus").glob("*/*.log"))


def _cut_up_to_the_last_bracket(line: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as m:
        m.setattr(collapsed, "_record_end", lambda text: text.rfind("]") + 1)
        m.setattr(collapsed, "_HOLDS", ("",) * len(collapsed._KINDS))
        return collapsed.split_collapsed(line)


def test_corpus_lines_and_their_collapsed_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    cut = 0
    for log in LOGS[::2]:
        tail = logtail.read_tail(log)
        for line in [*tail, *damages.BY_NAME["collapse"].apply(list(tail))]:
            got = collapsed.split_collapsed(line)
            assert got == _cut_up_to_the_last_bracket(line, monkeypatch), line[:200]
            cut += got is not None
    assert cut > 50


_PIECES = (
    "ERROR 01-02 03:04:05 [", "INFO 01-02 03:04:05.5 [", "]", "[", "1]", ":1]", "a]", "x", " ",
    "[a.py:1]", "[a.py:12] ", "INFO 11-29 17:04:04 [core.py:12] m ", "(EngineCore pid=1) ",
    "Traceback (most recent call last): ", 'File "/x/y.py", line 3, in f ', "\u0663]", "\u00b2]",
    "usage: vllm serve ", "INFO:     ", '"', "(", "u", 'File "', "Traceback (most recent call last):",
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=30), st.integers(1, 60))
def test_lines_of_stamps_and_brackets(pieces: list[str], times: int) -> None:
    line = "".join(pieces) * times
    with pytest.MonkeyPatch.context() as m:
        got = collapsed.split_collapsed(line)
        assert got == _cut_up_to_the_last_bracket(line, m)


def test_long_runs_of_stamps() -> None:
    for line in ("ERROR 01-02 03:04:05 [" * 745 + "]", "]" + "ERROR 01-02 03:04:05 [" * 745):
        assert collapsed._record_end(line) == 0 or line[0] == "]"
    with pytest.MonkeyPatch.context() as m:
        for run in ("[a.py:1]", "a]" * 9 + "[a.py:1]", "]" * 20):
            line = "INFO 01-02 03:04:05 [" * 700 + run
            assert collapsed.split_collapsed(line) == _cut_up_to_the_last_bracket(line, m)


def test_a_short_stretch_is_searched_by_the_dash() -> None:
    """A `]` near the start of a 16 KB line dense in dashes leaves a short stretch to search
    for a record: the count of its dashes (which picks the colon-led search) is not made."""
    line = "]" + ("ERROR 01-02 03:04:05 [" * 745)[:16383]
    starts = collapsed._Starts(line)
    assert starts.next(0) is None
    assert "by_colon" not in vars(starts)  # (a cached_property: made only when read)
    long_stretch = collapsed._Starts(line + "[a.py:1]")
    long_stretch.next(0)
    assert "by_colon" in vars(long_stretch)


_NEAR_START = ("]", "1]", ":1]", "[a.py:1]", "INFO 11-29 17:04:04 [core.py:12] m ", "(x pid=1) ")


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(("ERROR 01-02 03:04:05 [", "INFO 01-02 03:", "01-", "-")),
    st.integers(60, 800),
    st.lists(st.tuples(st.sampled_from(_NEAR_START), st.integers(0, 1100)), max_size=4),
)
def test_dense_dashes_cut_alike_however_far_the_last_bracket(
    pad: str, times: int, splices: list[tuple[str, int]]
) -> None:
    """Whichever search a stretch gets (the dash's for a short one, the colon's for a long
    one in a line dense in dashes), the cuts are the one alternation's (the long way)."""
    line = pad * times
    for piece, at in splices:
        line = line[:at] + piece + line[at:]
    assert collapsed.split_collapsed(line) == reference(line)
