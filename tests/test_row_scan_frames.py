"""The clean-tail check's frame test (`row_scan._frames_at_heads`) judges each line's text
before a frame once; held to the long way, which judges every frame (its line's text
before the frame's three spaces a record's head, and those spaces), on lines whose heads
differ by a space, a bracket or a tag, on the corpus tails' texts and damaged copies."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import damage_check, row_scan
from vllm_bootdiag.text.joined import Joined

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _long(text: str) -> bool:
    heads: dict[str, bool] = {}
    for m in row_scan._FRAME_INSIDE.finditer(text):
        p = m.start() - 5
        if text[p - 4 : p] != "]   " or not row_scan._record_head(text, p - 3, heads):
            return False
    return True


_LEADS = ("", "\x01", "x")
_HEADS = ("INFO 01-02 03:04:05 [a.py:1]", "ERROR 01-02 03:04:05 [core.py:9]", "[a.py:1]", "]",
          "INFO 01-02 03:04:05 [a.py:1] x", "  ", "")  # fmt: skip
_GAPS = ("   ", "  ", "    ", "", " x ", "\t  ")
_RESTS = ('File "a.py", line 1, in f', "File x", 'x File "b"', "")


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_LEADS),
            st.sampled_from(_HEADS),
            st.sampled_from(_GAPS),
            st.sampled_from(_RESTS),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_frames_are_judged_as_each_one_alone(parts: list[tuple[str, str, str, str]]) -> None:
    text = "\n" + "\n".join(lead + head + gap + rest for lead, head, gap, rest in parts)
    # (one dict for both, as `clean_rows` passes it: the heads the raw test reads after)
    heads: dict[str, bool] = {}
    assert row_scan._frames_at_heads(text, heads) == _long(text), text
    assert row_scan._raw_at_heads(text, heads) == row_scan._raw_at_heads(text, {}), text


def test_a_head_judged_for_a_traceback_is_not_read_for_a_frame() -> None:
    """`heads` holds a record's head (no spaces after it) judged as one a traceback line may
    follow; the same text before a frame (no three spaces) is not one a frame may follow."""
    head = "INFO 01-02 03:04:05 [a.py:1]"
    heads: dict[str, bool] = {}
    assert row_scan._record_head("\n" + head, len(head) + 1, heads)
    text = f"\n{head}   File \"a.py\", line 1\n{head}File \"b.py\", line 2"
    assert not _long(text)
    assert not row_scan._frames_at_heads(text, heads)


def test_corpus_texts_and_their_damaged_copies_judge_frames_as_the_long_way() -> None:
    seen = 0
    for log in LOGS[::2]:
        tail = logtail.read_tail(log)
        for lines in (tail, *(d.apply(list(tail)) for d in damages.DAMAGES)):
            joined = Joined.of(lines)
            damage_check.check(joined)
            for text in (joined.plain, *(joined.untagged or ())[:1]):
                if '"' in text:
                    seen += 1
                    assert row_scan._frames_at_heads(text, {}) == _long(text), log.name
    assert seen > 500
