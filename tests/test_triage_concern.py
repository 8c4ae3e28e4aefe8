"""Triage's scan pattern (`triage._compile`) groups its boring lines' branches by how a line
starts; held to the long way (`triage._concern_source`: each branch tried in turn), code for
code, in the plain text and in the text with its tags taken off, on the corpus tails, their
damaged copies, and lines spliced from tags, stand-ins for a tag, records, frames and torch
warnings (the codes decide which lines are sorted, so the same codes are the same triage)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail, timeline
from vllm_bootdiag.text import row_scan, triage
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.triage import Tail

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
_STARTS = triage._ahead(timeline.MESSAGE_STARTS)
_PAIRS = [
    (triage._compile(starts, untagged), re.compile(triage._concern_source(starts, untagged)))
    for starts in (_STARTS, ("Starting", "Loading", "ab"))
    for untagged in (False, True)
]


def _same(text: str) -> None:
    """The same code for each line, but for a line whose record's stamp holds a decimal digit
    that is not ASCII: there the scan may capture the level (`_SORT_ME_ASCII`) or the progress
    record whole, a code `Tail` sorts or reads (held to sorting every line below)."""
    lines = text.split("\n")[1:]
    for fast, long in _PAIRS:
        codes, want = fast.findall(text), long.findall(text)
        assert len(codes) == len(want) == len(lines)
        for line, code, was in zip(lines, codes, want, strict=True):
            if code != was:
                assert not line.isascii() and any(c.isdecimal() and not c.isascii() for c in line)
                assert len(code) > 1, (line, code, was)  # (sorted, or a progress record read)


def test_corpus_texts_and_their_damaged_copies_read_as_the_long_way() -> None:
    for log in LOGS[::2]:
        tail = logtail.read_tail(log)
        for lines in (tail, *(d.apply(list(tail)) for d in damages.DAMAGES)):
            joined = Joined.of(lines)
            _same(joined.plain)
            row_scan.clean_rows(joined)
            if joined.untagged is not None:
                _same(joined.untagged[0])


_PIECES = ("\n", "\x01", "(EngineCore_DP0 pid=12) ", "(a) ", "(x pid=1)", "(", ")", " ",
           "INFO 01-02 03:04:05 [x.py:1] ", "DEBUG 01-02 03:04:05.5 [x.py:1]", "WARN ",
           "WARNING 01-02 03:04:05 [a:1] ", "ERROR 01-02 03:04:05 [core.py:9]   File ",
           "CRITICAL 01-02 03:04:05 [c:2]     x", "    ", "  File ", "[rank0]:", "[W1129 16:00:21 ",
           "W1129 16:00:21.5 ", "2026-01-02T03:04:05Z ", "Starting to load model", "[tag] ",
           "█ version ", "x" * 260, "]", "\r", "ü", "٣", "INFO ٠١-٠٢ ٠٣:٠٤:٠٥ [x.py:1] ",
           "WARNING 01-02 03:0٤:05 [a:1] ", "ERROR ١1-29 16:19:50 [core.py:9]   File ")  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16))
def test_spliced_lines_read_as_the_long_way(parts: list[str]) -> None:
    _same("\n" + "".join(parts))


_ODD = ["INFO ٠١-٠٢ ٠٣:٠٤:٠٥ [x.py:1] Starting to load model x", "DEBUG 01-02 ٠3:04:05 [x.py:1] y",
        "WARNING 0١-02 03:04:05 [a.py:1] z", "ERROR 01-02 03:04:0٥ [core.py:9]   File \"a.py\"",
        "ERROR 01-02 03:04:0٥ [core.py:9] boom", "CRITICAL ١١-29 16:19:50 [c.py:2] x",
        "ERROR 01-02 03:04:0٥ [" + "s" * 300 + "] long"]  # fmt: skip


def test_stamps_in_other_digits_sort_as_every_line_sorts() -> None:
    for lead in ("", "(EngineCore_DP0 pid=12) ", "(a) "):
        lines = [lead + line for line in _ODD] + ["INFO 01-02 03:04:05 [x.py:1] plain"]
        every = Tail(lines, timeline.progress_key)
        for joined in (None, Joined.of(lines)):
            if joined is not None:
                row_scan.clean_rows(joined)  # (the tags taken off, as the pipeline runs it)
            some = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS, joined=joined)
            assert (some.other, some.markers) == (every.other, every.markers), lead
