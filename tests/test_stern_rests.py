"""A numbered tail wrapped where a rule's line is cut before words that read as a stern
prefix (`er-0 died unexpectedly`, the rest of `VllmWorker-0 died`): the rest keeps its
words, so the rule still reads the line whole; a stern log wrapped the same way still has
its prefixes taken off.

Built by damaging real corpus logs (`cat -n`, then a terminal's cut at the width that
leaves such a rest), as the damage suite does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.text import wrappers
from vllm_bootdiag.text.stern_rests import STERN, keep_rest_words

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_GUTTER = len(damages.cat_n(["x"])[0]) - 1  # `cat -n`'s number and tab


def _stern_cut(line: str) -> int | None:
    """The first cut of `line` (past its record's head) whose rest reads as a stern prefix."""
    for p in range(40, len(line) - 8):
        if line[p - 1] != " " and wrappers.strip_prefixes(line[p:])[1] == [STERN]:
            return p
    return None


def _cases() -> list[tuple[str, list[str], int]]:
    """(id, tail, width) for each corpus tail with a rule's evidence line that a terminal
    could cut so."""
    cases = []
    for entry in corpus.entries(CORPUS):
        lines = logtail.read_tail(entry.log_path)
        clean = classify(lines)
        for m in clean.matches:
            cut = next(filter(None, (_stern_cut(lines[e.line - 1]) for e in m.evidence)), None)
            if cut is not None:
                cases.append((entry.id, lines, _GUTTER + cut))
                break
    return cases


CASES = _cases()


def test_the_corpus_holds_such_lines() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize(("log_id", "lines", "width"), CASES, ids=[c[0] for c in CASES])
def test_a_cut_before_a_stern_looking_rest_keeps_the_rules_and_their_lines(
    log_id: str, lines: list[str], width: int
) -> None:
    clean = classify(lines)
    damaged = classify(damages._hard_wrap(width)(damages.cat_n(lines)))
    assert [(m.rule_id, [e.text for e in m.evidence]) for m in damaged.matches] == [
        (m.rule_id, [e.text for e in m.evidence]) for m in clean.matches
    ]
    assert STERN not in damaged.repairs


@pytest.mark.parametrize(("log_id", "lines", "width"), CASES[::4], ids=[c[0] for c in CASES[::4]])
def test_a_stern_log_cut_the_same_way_still_loses_its_prefixes(
    log_id: str, lines: list[str], width: int
) -> None:
    prefix = "vllm-7d9f8b6c5-x2x7q vllm "
    stern = [prefix + line for line in lines]
    damaged = classify(damages._hard_wrap(width + len(prefix))(damages.cat_n(stern)))
    assert damaged.primary.kind == classify(lines).primary.kind
    assert STERN in damaged.repairs


def test_a_prefix_that_other_lines_start_with_stays_off() -> None:
    """The row after a full row whose stern prefix other lines carry is stern's own line."""
    raw = ["vllm-0 server " + "x" * 66, "vllm-0 server INFO up", "vllm-0 server INFO done"]
    rows = [(r[len("vllm-0 server ") :], n, n, (STERN,)) for n, r in enumerate(raw, 1)]
    ran = {STERN}
    assert keep_rest_words(list(rows), raw, raw, 1, ran) == rows
    assert ran == {STERN}


def test_a_rest_after_a_full_row_gets_its_words_back() -> None:
    raw = ["INFO " + "x" * 75, "er-0 died unexpectedly", "INFO done"]
    rows = [(raw[0], 1, 1, ()), ("unexpectedly", 2, 2, (STERN,)), (raw[2], 3, 3, ())]
    ran = {STERN}
    assert keep_rest_words(rows, raw, raw, 1, ran)[1] == (raw[1], 2, 2, ())
    assert ran == set()
