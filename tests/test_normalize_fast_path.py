"""The clean-tail check normalize runs first: it must never call a damaged tail clean,
and vLLM's own output (coloured or not) must take the fast path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import logtail
from vllm_bootdiag.text import damage_check
from vllm_bootdiag.text import normalize as norm
from vllm_bootdiag.text.wrappers import (
    OTHER_PREFIX_AT_START,
    PIPE_PREFIX_AT_START,
    PREFIX_AT_START,
)

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
COLOURED = [p for p in LOGS if "\x1b" in p.read_text(encoding="utf-8", errors="replace")]


def _doc(lines: list[str]) -> str:
    return "\n" + "\n".join(lines)


def _tail(log: Path) -> list[str]:
    return logtail.read_tail(log)


def test_the_split_prefix_search_finds_what_the_whole_one_finds() -> None:
    """PIPE_ and OTHER_PREFIX_AT_START together are PREFIX_AT_START, on every corpus log
    and every wrapped copy of it."""
    checked = 0
    for log in LOGS[::4]:
        tail = _tail(log)
        for lines in [tail, *(d.apply(list(tail)) for d in damages.DAMAGES)]:
            doc = _doc(lines)
            split = bool(("|" in doc and PIPE_PREFIX_AT_START.search(doc)) or (
                OTHER_PREFIX_AT_START.search(doc)))  # fmt: skip
            assert split == bool(PREFIX_AT_START.search(doc))
            checked += split
    assert checked > 100  # the wrapped copies were found


@pytest.mark.parametrize("log", COLOURED, ids=[f"{p.parent.name}/{p.stem}" for p in COLOURED])
def test_vllms_coloured_output_takes_the_fast_path(log: Path) -> None:
    assert not damage_check.damaged(_doc(_tail(log)))


def test_there_are_coloured_corpus_logs() -> None:
    assert len(COLOURED) >= 10


_PER_LINE = ("ci_gutter", "bracket_stamp", "actions_stamp", "caret_ansi", "markdown", "compose",
             "journald", "json_file", "stern", "launcher", "stage_tag", "collapse")  # fmt: skip
"""The damages a per-line step repairs (the rest are rejoined, or lose text)."""


@pytest.mark.parametrize("name", _PER_LINE)
def test_a_damaged_coloured_log_is_not_called_clean(name: str) -> None:
    for log in COLOURED[:8]:
        lines = damages.BY_NAME[name].apply(_tail(log))
        assert damage_check.damaged(_doc(lines))
        assert norm.normalize(lines)[1]  # and a repair ran
