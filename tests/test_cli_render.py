"""Human output in 80 columns: wrapped text keeps every word; a wrapped command still
pastes into a shell as the same command."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.cli import render

words = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30),
                 min_size=1, max_size=30)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(words)
def test_wrapped_command_is_the_same_command(argv: list[str]) -> None:
    text = render.shell("  argv: ", argv, wide=False)
    for line in text.splitlines():
        # a single word longer than the width stays whole: it cannot be broken in a shell
        assert len(line) <= render.WIDTH or " " not in line.strip().rstrip(" \\")
    assert shlex.split(text.removeprefix("  argv: ").replace("\\\n", "")) == argv
    assert render.shell("  argv: ", argv, wide=True) == "  argv: " + shlex.join(argv)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")),
                        min_size=1, max_size=20), max_size=40))  # fmt: skip
def test_wrapped_text_keeps_every_word(ws: list[str]) -> None:
    text = " ".join(ws)
    out = render.wrap(text, wide=False)
    assert all(len(line) <= render.WIDTH for line in out.splitlines())
    assert out.split() == text.split() or not text.strip()
