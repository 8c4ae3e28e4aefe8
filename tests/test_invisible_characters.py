"""Invisible characters a paste put in (zero-width spaces, joiners, word joiners, byte-order
marks, soft hyphens) are taken off: every corpus tail with them inserted after spaces, inside
long words or at line starts keeps its kind, numbers, version and phase, and its evidence
cites the same lines; no corpus tail (nor any damage of one) is changed by the step."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.text.invisible import (
    INVISIBLE,
    holds_invisible,
    strip_invisible,
)
from vllm_bootdiag.text.normalize import STEPS, normalize

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(CORPUS)}


def _after_spaces(lines: list[str]) -> list[str]:
    """A zero-width character after the first three spaces of each line (a chat client's
    break opportunities), each line another of the six."""
    return [line.replace(" ", " " + INVISIBLE[k % 6], 3) for k, line in enumerate(lines)]


_LONG_WORD = re.compile(r"[A-Za-z_]{8,}")


def _inside_words(lines: list[str]) -> list[str]:
    """A soft hyphen or a zero-width space in the middle of every long word (a page's
    hyphenation): rule wordings, markers and record levels are cut."""

    def cut(m: re.Match[str]) -> str:
        word = m[0]
        return word[:4] + ("\xad" if len(word) % 2 else "\u200b") + word[4:]

    return [_LONG_WORD.sub(cut, line) for line in lines]


def _line_starts(lines: list[str]) -> list[str]:
    """A word joiner or byte-order mark at the start of every line (a record's stamp is
    no longer at its line's start)."""
    return [("\u2060" if k % 2 else "\ufeff") + line for k, line in enumerate(lines)]


INSERTS: dict[str, Callable[[list[str]], list[str]]] = {
    "after_spaces": _after_spaces,
    "inside_words": _inside_words,
    "line_starts": _line_starts,
}


@pytest.mark.parametrize("insert", INSERTS, ids=list(INSERTS))
def test_a_corpus_tail_with_invisible_characters_reads_as_the_tail(insert: str) -> None:
    wrong = []
    for log_id, tail in TAILS.items():
        pasted = INSERTS[insert](list(tail))
        assert pasted != tail, log_id
        d = classify(pasted)
        assert "invisible_characters" in d.repairs, log_id
        if damages.answer(pasted) != damages.answer(tail):
            wrong.append(f"{log_id}: {d.primary.kind} {d.vllm_version} {d.phase}")
    assert not wrong, "\n".join(wrong[:10])


def test_evidence_cites_the_same_lines() -> None:
    """Each row keeps its place: evidence cites the lines it cites without the characters."""
    for log_id, tail in list(TAILS.items())[::5]:
        clean, pasted = classify(tail), classify(_inside_words(_after_spaces(list(tail))))
        assert [(e.line, e.text) for e in pasted.primary.evidence] == [
            (e.line, e.text) for e in clean.primary.evidence
        ], log_id


def test_no_corpus_tail_nor_a_damage_of_one_is_changed() -> None:
    for log_id, tail in TAILS.items():
        assert not holds_invisible("\n".join(["", *tail])), log_id
        assert "invisible_characters" not in classify(tail).repairs, log_id
    for log_id, tail in list(TAILS.items())[::7]:
        for d in damages.DAMAGES:
            assert not holds_invisible("\n".join(d.apply(list(tail)))), (log_id, d.name)


def test_the_step_and_its_rows() -> None:
    assert STEPS[0].name == "invisible_characters"
    lines, ran = normalize(["a\u200bb", "plain", "\ufeffINFO x", "d\xade"], first_line=7)
    assert ran[0] == "invisible_characters"
    assert [(ln.text, ln.first, ln.last) for ln in lines] == [
        ("ab", 7, 7),
        ("plain", 8, 8),
        ("INFO x", 9, 9),
        ("de", 10, 10),
    ]
    assert [("invisible_characters" in ln.repairs) for ln in lines] == [True, False, True, True]
    assert strip_invisible(["█\u200b▀", "ok", "█"]) == (["█▀", "ok", "█"], [True, False, False])


_TEXT = st.text(st.sampled_from([*INVISIBLE, "a", " ", "\n", "█", "é", "`", "\x0b", "\u200a"]))


@given(_TEXT)
def test_the_test_and_the_strip_equal_the_long_way(text: str) -> None:
    assert holds_invisible(text) == any(c in text for c in INVISIBLE)
    rows = text.split("\n")
    out, changed = strip_invisible(rows)
    want = ["".join(c for c in row if c not in INVISIBLE) for row in rows]
    assert out == want
    assert changed == [a != b for a, b in zip(want, rows, strict=True)]
