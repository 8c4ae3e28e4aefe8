"""The clean-tail check takes each process tag off its row by a replacement as long as the
tag (`row_scan._untagged`): the row keeps one `\\x01` where its tag was, and the row before
it ends with `row_scan.PAD`. The triage scan reads that text; these hold it to the long way
(every line sorted, `progress_key` on every message) where a line's end matters: a banner's
word, an empty message or an empty row, a `[tag` or a source left open, right before a
tagged row; and on corpus tails and each damaged copy of them."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail, timeline
from vllm_bootdiag.text import damage_check, row_scan
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.triage import Tail

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))

_TAGS = ("", "(APIServer pid=1) ", "(EngineCore_DP0 pid=12) ", "(Worker pid=3) ",
         "\x1b[0;36m(APIServer pid=1)\x1b[0;0m ", "(APIServer pid=1)")  # fmt: skip
_HEADS = ("INFO 01-02 03:04:05 [a.py:1] ", "INFO 01-02 03:04:05 [a.py:1]", "DEBUG 01-02 03:04:05 [",
          "WARNING 01-02 03:04:05 [a.py:1] ", "ERROR 01-02 03:04:05 [a.py:1] ", "")  # fmt: skip
_BODIES = ("", " █ version", "▄█ model", " █ version 0.1", "[tag", "[tag] ", "[tag] █ version",
           "Model loading took", "Starting vLLM ", "x", "  File \"a.py\", line 1", "    ")  # fmt: skip


def _same(lines: list[str]) -> None:
    """The triage scan after the check (which takes the tags off) sorts as every line sorts."""
    every = Tail(lines, timeline.progress_key)
    joined = Joined.of(lines)
    damage_check.check(joined)
    some = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS, joined=joined)
    assert (some.other, some.markers, some.other_text) == (
        every.other,
        every.markers,
        every.other_text,
    ), lines


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_TAGS), st.sampled_from(_HEADS), st.sampled_from(_BODIES)),
        min_size=1,
        max_size=8,
    )
)
def test_a_line_before_a_tagged_one_sorts_as_every_line_sorts(
    parts: list[tuple[str, str, str]],
) -> None:
    _same([tag + head + body for tag, head, body in parts])


def test_the_text_is_the_lines_with_their_tags_taken_off_one_by_one() -> None:
    """The replacements give the text built line by line: a tagged line (plain) as `\\x01`
    and its rest, and `PAD` as long as its tag at the end of the line before; as long as
    the plain text, coloured or not."""
    cases = [logtail.read_tail(log) for log in LOGS[::3]]
    cases.append(["(APIServer pid=1) INFO 01-02 03:04:05 [a.py:1] █ version", "", "(APIServer pid=1) "])
    seen = 0
    for lines in cases:
        joined = Joined.of(lines)
        rows = row_scan._rows(lines, joined.doc)
        if rows is None or not rows[0]:
            continue
        tags, _, starts = rows
        out = [""]
        for plain in Joined.of(lines).plain.split("\n")[1:]:
            tag = next((t for t in tags if plain.startswith(t + " ")), None)
            if tag is None:
                out.append(plain)
            else:
                out[-1] += row_scan.PAD * len(tag)
                out.append("\x01" + plain[len(tag) + 1 :])
        text = row_scan._untagged(joined, tags, starts)
        assert text == "\n".join(out)
        assert len(text) == len(Joined.of(lines).plain)
        seen += 1
    assert seen > 20


def test_corpus_tails_and_their_damaged_copies_sort_as_every_line_sorts() -> None:
    for log in LOGS[::8]:
        tail = logtail.read_tail(log)
        for lines in (tail, *(d.apply(list(tail)) for d in damages.DAMAGES)):
            if lines:
                _same(lines)
