"""The clean-tail check's search for a record not at its line's head (`row_scan._RECORD_INSIDE`)
tests a stop's lookbehinds in another order than its long way (`_RECORD_INSIDE_AT`: the
stamp's digits, then each level after a character that is neither a newline nor a `\\x01`):
held to it, place for place, on the corpus tails' texts with their tags taken off, their
damaged copies, and texts that splice levels, stamps, newlines and stand-ins for a tag."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import row_scan
from vllm_bootdiag.text.joined import Joined

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
_LONG = re.compile(row_scan._RECORD_INSIDE_AT)


def _same(text: str) -> None:
    fast = [m.start() for m in row_scan._RECORD_INSIDE.finditer(text)]
    assert fast == [m.start() for m in _LONG.finditer(text)], text[:200]


def _untagged(lines: list[str]) -> str:
    """The text the check searches: its tags taken off where the rows give them."""
    joined = Joined.of(lines)
    rows = row_scan._rows(lines, joined.doc)
    if rows is None:
        return joined.plain
    tags, _, starts = rows
    return row_scan._untagged(joined, tags, starts)


def test_corpus_texts_and_their_damaged_copies_find_the_records_of_the_long_way() -> None:
    found = 0
    for log in LOGS:
        tail = logtail.read_tail(log)
        for lines in (tail, *(d.apply(list(tail)) for d in damages.DAMAGES)):
            text = _untagged(lines)
            _same(text)
            found += row_scan._RECORD_INSIDE.search(text) is not None
    assert found > 500  # (the damaged copies hold records inside lines)


_PARTS = ("\n", "\x01", "x", " ", "-", "INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL", "G",
          "0", "01-", "01-02 03:04:05", " 01-02 03:04:05 ", "[a.py:1] ", "NFO 01-")  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=24))
def test_spliced_texts_find_the_records_of_the_long_way(parts: list[str]) -> None:
    _same("\n" + "".join(parts))
    _same("\n" + " ".join(parts))


def test_each_level_is_at_a_head_after_a_newline_or_a_stand_in_for_a_tag() -> None:
    for level in row_scan.LEVELS:
        record = f"{level} 01-02 03:04:05 [a.py:1] x"
        for lead in ("\n", "\n\x01", "\nx", "\n\x01x", "\n \x01", "\n\n"):
            text = lead + record
            _same(text)
            assert (row_scan._RECORD_INSIDE.search(text) is None) == (lead[-1] in "\n\x01")
