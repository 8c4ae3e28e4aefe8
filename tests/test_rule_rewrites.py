"""Patterns rewritten for speed read exactly what their plain originals read.

A rule's pattern is sometimes written in a less obvious way because the obvious one
is slow on long lines (a lazy group before an optional tail retries that tail at
every character). The obvious form stays here as the specification, and hypothesis
checks that both give the same groups on text built from the tokens that matter.
"""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.rules import BY_ID

SPEC = {
    "CF101": r"(?<![\w,] ?)Value error, (?P<message>\S.*?)(?: \[type=value_error[^\]]*\])?\s*$",
}
"""Rule id -> its pattern in the plain form (the table holds the fast one)."""

TOKENS = {
    "CF101": (
        "Value error, ", " ", "  ", "\t", "\n", "\u00a0", "a", "bc", ",", "x", "[", "]",
        "[type=value_error", "[type=value_error, input_value=1", " [type=value_error]",
    ),
}


def _groups(pattern: regex.Pattern[str], text: str) -> dict[str, str | None] | None:
    m = pattern.search(text)
    return m.groupdict() if m else None


@settings(max_examples=3000, deadline=None)
@given(st.data())
def test_fast_pattern_reads_what_the_plain_one_reads(data: st.DataObject) -> None:
    rule_id = data.draw(st.sampled_from(sorted(SPEC)))
    text = "".join(data.draw(st.lists(st.sampled_from(TOKENS[rule_id]), max_size=14)))
    plain = regex.compile(SPEC[rule_id])
    (fast,) = BY_ID[rule_id].compiled
    assert _groups(fast, text) == _groups(plain, text)


def test_the_fast_pattern_reads_a_long_architectures_line() -> None:
    """The line the rewrite is for (vLLM's 10 KB `Supported architectures: [...]` error,
    0.7 ms with the plain pattern, 30 us with the fast one: bench/bench_per_line.py)."""
    archs = ", ".join(f"'Arch{i}ForCausalLM'" for i in range(500))
    line = (
        f"  Value error, Model architectures ['X'] are not supported for now. Supported "
        f"architectures: dict_keys([{archs}]) [type=value_error, input_value=ArgsKwargs((), "
        "{'model': 'x'}), input_type=ArgsKwargs]"
    )
    plain = regex.compile(SPEC["CF101"])
    (fast,) = BY_ID["CF101"].compiled
    assert _groups(fast, line) == _groups(plain, line)

