"""`strip_prefixes` finds each wrapper by one named alternation, matched where the last
one ended: the same wrappers, in the same order, and the same text left, as trying each
wrapper's own pattern on what the last left."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vllm_bootdiag.text import wrappers


def _reference(text: str) -> tuple[str, list[str]]:
    """The loop as it was: each pattern in order on the text the last one left."""
    names: list[str] = []
    for _ in range(8):
        for name, pattern in wrappers.PREFIXES:
            m = pattern.match(text)
            if m is not None and m.end() > 0:
                text = text[m.end() :]
                names.append(name)
                break
        else:
            break
    return text, names


_PIECES = [
    "  | ", "12  | ", "|", "> ", ">", ">>", "2026-01-02T03:04:05Z ", "2026-01-02T03:04:05.1Z stderr F ",
    "[2026-01-02T03:04:05Z] ", "api-1  | ", "\x1b[36mapi-1  |\x1b[0m ", "Jan 02 03:04:05 host vllm[2]: ",
    "pod-abc12 main ", "[pod/pod-abc12/main] ", "2026-01-02 03:04:05.678 [Error] (P) ",
    "2026-01-02 03:04:05,678 - vllm - ERROR - ", "[Stage-1] ", "INFO 01-02 03:04:05 [a.py:1] x",
    " ", "\t", "x", "-", "1",
]  # fmt: skip


@given(st.lists(st.sampled_from(_PIECES), max_size=14).map("".join))
def test_wrappers_come_off_as_each_pattern_takes_them(text: str) -> None:
    assert wrappers.strip_prefixes(text) == _reference(text)


def test_quote_markers_and_gutters_at_length() -> None:
    for text in (("> " * 8192)[:16380], "  | " + ("> " * 8192)[:16380], "  | " * 20 + "x"):
        assert wrappers.strip_prefixes(text) == _reference(text)
