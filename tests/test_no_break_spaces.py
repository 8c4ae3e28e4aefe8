"""A copy from a rendered page or chat client (every space a no-break space) combined with
every other damage, in either order: each corpus log keeps its kind. Before the no-break
spaces were made spaces again inside a json-file record and before the rejoin measured
the rows, a json-file record of such text and an editor's word wrap of it lost the answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_ENTRIES = corpus.entries(_CORPUS)[::9]
_NB = damages.BY_NAME["no_break_spaces"]
_OTHERS = [d for d in damages.DAMAGES if d is not _NB and not d.lossy and d.window is None]


@pytest.mark.parametrize("other", _OTHERS, ids=lambda d: d.name)
def test_no_break_spaces_with_another_damage_keep_the_kind(other: damages.Damage) -> None:
    wrong = []
    for entry in _ENTRIES:
        tail = logtail.read_tail(entry.log_path)
        want = classify(tail).primary.kind
        for first, then in ((_NB, other), (other, _NB)):
            got = classify(then.apply(first.apply(list(tail)))).primary.kind
            if got != want:
                wrong.append(f"{entry.id}: {first.name} then {then.name}: {got} (want {want})")
    assert not wrong, "\n".join(wrong)


def _own_no_break_spaces(lines: list[str]) -> list[str]:
    """A log whose text holds a few no-break spaces of its own: the first words of each
    line over 140 characters joined by them (an editor does not cut a row there, so its
    row runs past the width)."""
    return [
        line[:130].replace(" ", "\xa0") + line[130:] if len(line) > 140 else line for line in lines
    ]


def test_a_logs_own_no_break_spaces_leave_an_editors_width_as_it_is() -> None:
    """The rejoin reads no-break spaces as spaces only where a copy made every space one:
    a few of the text's own must not make their long row the editor's width (they did in
    30 of the 226 corpus logs, which lost their kind or numbers)."""
    wrong = []
    for entry in corpus.entries(_CORPUS):
        tail = logtail.read_tail(entry.log_path)
        want = classify(tail).primary
        got = classify(damages.BY_NAME["fold100"].apply(_own_no_break_spaces(tail))).primary
        if got.kind != want.kind or damages.numbers(got) != damages.numbers(want):
            wrong.append(f"{entry.id}: {got.kind} {damages.numbers(got)} (want {want.kind})")
    assert not wrong, "\n".join(wrong)
