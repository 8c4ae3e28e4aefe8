"""A terminal-wrapped log pasted as a markdown quote (`> ` before every row, the wrapped
rows too) reads as the log: the quote is stripped and the wrapped rows rejoined."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify
from vllm_bootdiag.text.tail import read_tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = [
    "0.32.0/kv_cache_shortfall__llama1b-kvspace1__cpu.log",
    "0.22.0/disk_full__compile-cache-full__cpu.log",
]


def _terminal(lines: list[str], width: int) -> list[str]:
    """Rows of exactly `width` characters, as a terminal wraps (mid-word)."""
    return [line[i : i + width] for line in lines for i in range(0, max(len(line), 1), width)]


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("width", [80, 120])
def test_a_quoted_terminal_paste_reads_as_the_log(name: str, width: int) -> None:
    lines = read_tail(CORPUS / name)
    clean = classify(lines)
    quoted = ["> " + row for row in _terminal(lines, width)]
    d = classify(quoted)
    assert d.primary == clean.primary.model_copy(update={"evidence": d.primary.evidence})
    if len(quoted) <= 400:  # past 400 rows the tail kept no longer holds the version line
        assert d.vllm_version == clean.vllm_version
    assert "markdown_quote" in d.repairs and "rejoin_wrapped" in d.repairs


def _editor(lines: list[str], width: int) -> list[str]:
    """Rows broken at word breaks at `width`, as an editor folds (a long word stays whole)."""
    import textwrap

    return [
        row
        for line in lines
        for row in textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)
        or [line]
    ]


@pytest.mark.parametrize(
    "name", ["0.32.0/booted__smollm135m-eager__cpu.log", "0.22.0/booted__qwen05b-compiled__cpu.log"]
)
def test_a_quoted_editor_fold_keeps_the_server_line(name: str) -> None:
    """Folded at 100 and quoted: a long path the editor left whole sits on a row of its own,
    and the quote's `> ` put a space in front of it, so it passed for the editor's width
    (the longest row with a space): the fold was not seen, and the version and the port
    were lost."""
    lines = read_tail(CORPUS / name)
    clean = classify(lines)
    quoted = ["> " + row for row in _editor(lines, 100)]
    d = classify(quoted[-400:])
    assert d.primary.kind == clean.primary.kind == "booted"
    assert (d.vllm_version, d.facts.port) == (clean.vllm_version, clean.facts.port)
    assert "rejoin_wrapped" in d.repairs
