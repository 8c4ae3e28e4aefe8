"""A log shared with a viewer's line numbers (`cat -n`, `nl`, `less -N`, an editor's) reads
as the log: every corpus tail so numbered keeps its kind, numbers, version and phase, and
no tail vLLM printed (nor any damage of one) is taken for numbered."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.rules import RULES
from vllm_bootdiag.text.line_numbers import strip_line_numbers

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(CORPUS)}

Viewer = Callable[[list[str]], list[str]]


def _nl(lines: list[str]) -> list[str]:
    """`nl`: non-empty rows numbered `%6d<TAB>`, empty ones left as blanks, not counted."""
    out, n = [], 0
    for line in lines:
        if line:
            n += 1
            out.append(f"{n:6d}\t{line}")
        else:
            out.append(" " * 7)
    return out


def _less(width: int | None) -> Viewer:
    """`less -N`: `%7d ` before each row; with a screen `width`, a long row goes on over
    rows whose number column is blank (a copy of the screen), `width - 8` characters a row."""

    def view(lines: list[str]) -> list[str]:
        out = []
        for n, line in enumerate(lines, 1):
            if width is None:
                out.append(f"{n:7d} {line}")
                continue
            room = width - 8
            parts = [line[i : i + room] for i in range(0, max(len(line), 1), room)]
            out.append(f"{n:7d} {parts[0]}")
            out.extend(" " * 8 + part for part in parts[1:])
        return out

    return view


def _same(lines: list[str]) -> list[str]:
    return lines


VIEWERS: dict[str, tuple[Viewer, Viewer]] = {
    "cat_n": (damages.cat_n, _same),
    "cat_n_from_1201": (lambda lines: [f"{n:6d}\t{x}" for n, x in enumerate(lines, 1201)], _same),
    "nl": (_nl, _same),
    "less_n": (_less(None), _same),
    # (the screen's rows are the log hard-wrapped at 92 columns: more rows, so a worker's
    # 400 kept may lose the banner, as that wrap alone does)
    "less_n_screen_100": (_less(100), damages._hard_wrap(92)),
    "vim_number": (lambda lines: [f"{n:3d} {x}" for n, x in enumerate(lines, 1)], _same),
}
"""Each viewer, and the rows it shows without their numbers."""


@pytest.mark.parametrize("viewer", VIEWERS, ids=list(VIEWERS))
def test_a_numbered_corpus_tail_reads_as_the_tail(viewer: str) -> None:
    wrong = []
    view, plain = VIEWERS[viewer]
    for log_id, tail in TAILS.items():
        numbered = view(list(tail))
        d = classify(numbered)
        if damages.answer(numbered) != damages.answer(plain(list(tail))):
            wrong.append(f"{log_id}: {d.primary.kind}")
        assert "line_numbers" in d.repairs, log_id
    assert not wrong, "\n".join(wrong[:10])


def test_no_tail_vllm_printed_nor_a_damage_of_one_is_taken_for_numbered() -> None:
    for log_id, tail in TAILS.items():
        assert strip_line_numbers(tail) is None, log_id
        for d in damages.DAMAGES:
            if not d.name.startswith("cat_n"):
                assert strip_line_numbers(d.apply(list(tail))) is None, (log_id, d.name)
    for rule in RULES:
        for text in (*rule.examples, *rule.counter_examples):
            assert strip_line_numbers(text.splitlines()) is None, rule.id


def test_what_counts_as_numbered() -> None:
    # a tab after the number: one row will do; a frame's own indent stays after it
    assert strip_line_numbers(["    66\tValueError: x"]) == (["ValueError: x"], [True])
    assert strip_line_numbers(["     1\ta", "     2\t", "     3\t  File x"]) == (
        ["a", "", "  File x"],
        [True, True, True],
    )
    # spaces after it: the tail's fewest are the viewer's (two here)
    assert strip_line_numbers(["  1  a", "  2    File b", "  3  c"]) == (
        ["a", "  File b", "c"],
        [True, True, True],
    )
    # a tail that starts on a wrapped row's blank column
    got = strip_line_numbers(["        rest", "      2 b", "      3 c", "      4 d"])
    assert got == (["rest", "b", "c", "d"], [True, True, True, True])
    # not numbered: too few rows with spaces, a gap in the numbers, text at a row's start
    assert strip_line_numbers(["1 validation error for ModelConfig"]) is None
    assert strip_line_numbers(["  1 a", "  2 b"]) is None
    assert strip_line_numbers(["  1 a", "  3 b", "  4 c", "  5 d"]) is None
    assert strip_line_numbers(["  1 a", "  2 b", "x", "  3 c"]) is None
    assert strip_line_numbers([]) is None


def test_evidence_cites_the_row_the_user_handed_over() -> None:
    """The numbers go; each row keeps its place, so evidence cites the same lines."""
    for log_id, tail in list(TAILS.items())[::10]:
        clean, numbered = classify(tail), classify(damages.cat_n(list(tail)))
        assert [e.line for e in numbered.primary.evidence] == [
            e.line for e in clean.primary.evidence
        ], log_id


BEHIND = {
    "ci_gutter": 0,
    "actions_stamp": 0,
    "journald": 0,
    "compose": 0,
    "stern": 0,
    "markdown": 4,
}
"""`cat -n`'s rows behind a tool's prefix on every row (a CI job that printed the log numbered,
a quoted reply with its code fence): wrong answers over the 226 corpus tails, 133-137 each
before the numbers were looked for behind the prefix. The four quoted ones: CUDA OOM tails
whose damaged copy reads the more precise kind (the quote's fence rows change which lines the
phase attribution reads)."""


@pytest.mark.parametrize("wrapper", list(BEHIND))
def test_numbered_rows_behind_a_prefix_read_as_the_tail(wrapper: str) -> None:
    outer = damages.BY_NAME[wrapper].apply
    wrong = []
    for log_id, tail in TAILS.items():
        got = damages.answer(outer(damages.cat_n(list(tail))))
        if got[:2] != damages.answer(tail)[:2]:
            wrong.append(f"{log_id}: {got[0]}")
    assert len(wrong) <= BEHIND[wrapper], "\n".join(wrong)
    assert "line_numbers" in classify(outer(damages.cat_n(list(tail)))).repairs
