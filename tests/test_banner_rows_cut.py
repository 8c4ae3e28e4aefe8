"""A terminal's cut at the start of one of the banner's gaps: the full row ends in a block
character, its rest starts with blanks and then one. Such a rest goes on its row (no line
of vLLM's starts so), whether the rows are numbered or not, so the banner's version and
model lines read whole again. Likewise a rest that a colour's reset starts.

Built from real corpus logs, cut at the width that leaves such a rest (as the damage suite
does); `cuts_a_run` itself on rows rendered from the banner's own lines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.text import normalize
from vllm_bootdiag.text.cut_runs import cuts_a_run

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages
from test_viewer_rows_wrapped import _by_columns

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_BLOCKS = "█▀▄"


def _gap_cut(line: str) -> int | None:
    """The first cut of a banner line right after a block character, at a gap's start."""
    for p in range(40, min(len(line), 300)):
        if line[p - 1] in _BLOCKS and line[p] == " " and line[p:].lstrip(" ")[:1] in _BLOCKS:
            return p
    return None


def _cases() -> list[tuple[str, list[str], int, str]]:
    """(id, tail, width, banner line) for each corpus tail whose banner a cut can so split,
    and whose rows so cut (and numbered) are all within the 400 a worker keeps."""
    out = []
    for entry in corpus.entries(CORPUS):
        lines = logtail.read_tail(entry.log_path)
        for line in lines:
            cut = _gap_cut(line) if "version" in line and "█" in line else None
            if cut is not None:
                if len(damages._hard_wrap(cut)(lines)) <= logtail.DEFAULT_LINES:
                    out.append((entry.id, lines, cut, line))
                break
    return out


CASES = _cases()


def test_the_corpus_holds_banners_a_cut_splits_so() -> None:
    assert len(CASES) >= 50


@pytest.mark.parametrize(
    ("log_id", "lines", "width", "banner"), CASES[::3], ids=[c[0] for c in CASES[::3]]
)
def test_a_banner_row_cut_at_a_gap_is_joined_again(
    log_id: str, lines: list[str], width: int, banner: str
) -> None:
    rows = damages._hard_wrap(width)(lines)
    assert banner not in rows  # (it was cut)
    assert banner in [line.text for line in normalize.normalize(rows)[0]]
    assert classify(rows).vllm_version == classify(lines).vllm_version


@pytest.mark.parametrize(
    ("log_id", "lines", "width", "banner"), CASES[1::3], ids=[c[0] for c in CASES[1::3]]
)
def test_numbered_and_cut_at_a_gap_the_banner_line_is_joined_again(
    log_id: str, lines: list[str], width: int, banner: str
) -> None:
    """`cat -n LOG` in a terminal: its number and tab take 8 columns (see `_by_columns`)."""
    rows = _by_columns(damages.cat_n(lines), width + 8)
    assert banner in [line.text for line in normalize.normalize(rows)[0]]
    assert classify(rows[-logtail.DEFAULT_LINES :]).vllm_version == classify(lines).vllm_version


_COLOURED = [e for e in corpus.entries(CORPUS) if e.id.endswith("qwen15-kvspace1-color__cpu")]


@pytest.mark.parametrize("entry", _COLOURED, ids=[e.id for e in _COLOURED])
def test_a_coloured_record_cut_at_its_reset_reads_its_phase(entry: corpus.Entry) -> None:
    """`cat -n` of a coloured log cut at 100 characters: a row that a colour's reset starts
    (the reset after a record's source) is the rest of the row above."""
    lines = logtail.read_tail(entry.log_path)
    rows = damages._hard_wrap(100)(damages.cat_n(lines))
    clean, damaged = classify(lines), classify(rows[-logtail.DEFAULT_LINES :])
    assert (damaged.phase, damaged.facts.available_kv_cache_gib) == (
        clean.phase,
        clean.facts.available_kv_cache_gib,
    )


def test_a_colour_reset_starts_no_line() -> None:
    assert cuts_a_run("\x1b[90m[core.py:1]", "\x1b[0m ValueError: x")
    assert cuts_a_run("x", "\x1b[0;0m INFO")
    assert not cuts_a_run("x", "\x1b[0;36m(APIServer pid=1)\x1b[0;0m INFO")
    assert not cuts_a_run("x", "\x1b[0mx")


def test_a_full_row_that_ends_in_a_block_and_a_row_of_blanks_and_blocks() -> None:
    assert cuts_a_run(
        "INFO 11-29 17:28:40 [utils.py:287]  ▄▄ ▄█ █     █", "     █ ▀▄▀ █  version 1"
    )
    assert cuts_a_run("x ▀", "\t▄")
    # a frame after a row that ends in a block character, and blanks with no block after
    assert not cuts_a_run("INFO x █", '  File "x.py", line 1, in f')
    assert not cuts_a_run("INFO x █", "     ")
    assert not cuts_a_run("INFO x", "     █ ▀▄▀ █  version 1")
