"""`Tail.find` against the long way: the candidate lines whose first SEARCH_WIDTH
characters hold the literal, on lines shorter, as long as and longer than that width,
and a literal cut by the width or by a line's end."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import timeline
from vllm_bootdiag.text.triage import SEARCH_WIDTH, Tail

_LITERALS = ("boom", "CUDA out of memory", "x\ny", "oo", "ab" * 3)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ("", "ERROR 01-02 03:04:05 [a.py:1] ", "INFO 01-02 03:04:05 [a.py:1] ")
            ),
            st.integers(0, SEARCH_WIDTH + 8) | st.sampled_from((SEARCH_WIDTH - 4, SEARCH_WIDTH)),
            st.sampled_from((*_LITERALS, "")),
        ),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(_LITERALS),
)
def test_find_is_the_candidates_whose_head_holds_the_literal(
    parts: list[tuple[str, int, str]], literal: str
) -> None:
    lines = [head + "a" * pad + put for head, pad, put in parts]
    for tail in (Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS), Tail(lines)):
        want = [i for i in tail.other if literal in lines[i][:SEARCH_WIDTH]]
        assert tail.find(literal) == want
        assert tail.find(literal) == want  # (cached)
        assert tail.other_text == "\n".join(lines[i][:SEARCH_WIDTH] for i in tail.other)
