"""boots' test of the API server's tags before a line (`_one_pid_before`) answers, where the
clean-tail check took the tags off the lines' starts, from the tags it took and one search;
held to the long way (`_one_pid_before_long`: the tags in the text, counted) at every line
start of the corpus tails, their damaged copies, and tails of one or two API servers' tags
at a line's start, inside a line, unclosed, or with a pid that is not ASCII digits."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import boots, logtail
from vllm_bootdiag.text import row_scan
from vllm_bootdiag.text.joined import Joined

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _same(lines: list[str]) -> int:
    joined = Joined.of(lines)
    row_scan.clean_rows(joined)
    doc, shortcut = joined.doc, 0
    for end in (*joined.line_starts(), len(doc)):
        end -= end < len(doc)  # (the newline before each line, as boots passes it)
        want = boots._one_pid_before_long(doc, end)
        assert boots._one_pid_before(doc, end, joined.untagged) == want, (end, lines[:3])
        shortcut += joined.untagged is not None
    return shortcut


def test_corpus_tails_and_their_damaged_copies_answer_as_the_long_way() -> None:
    read = 0
    for log in LOGS[::2]:
        tail = logtail.read_tail(log)
        for lines in (tail, *(d.apply(list(tail)) for d in damages.DAMAGES[::3])):
            read += _same(lines)
    assert read > 10000


_ROWS = ("(APIServer pid=7) INFO 01-02 03:04:05 [a.py:1] up", "(APIServer pid=8) x",
         "(EngineCore_DP0 pid=9) ERROR 01-02 03:04:05 [core.py:1] boom", "x (APIServer pid=8) y",
         "(APIServer pid=7 y", "(APIServer pid=٧) z", "(APIServer pid=7)", "(APIServer pid=7)x",
         "plain", "\x1b[0;36m(APIServer pid=8)\x1b[0;0m up", "(APIServer pid=(APIServer pid=8) w")  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_ROWS), min_size=1, max_size=10))
def test_tails_of_api_server_tags_answer_as_the_long_way(lines: list[str]) -> None:
    _same(lines)
