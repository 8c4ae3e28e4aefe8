"""Tolerant siblings of the free-memory (HM), max-model-len (CF001), device-OOM (CM) and
platform (PF) rules, on damaged copies of real lines.

The damage is what users hand over: a log viewer that cuts long lines at the terminal's
width and ends them with `…` (journalctl without --full, dashboards), and the damage
suite's pastes that stop after the core sentence. The lines are corpus lines (where a
corpus log shows the rule) or the exact rules' examples rendered from vLLM's and torch's
format strings; none is copied from a thread.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus
from vllm_bootdiag.rules import BY_ID, RULES, Rule
from vllm_bootdiag.text.tail import read_tail

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SIBLINGS = [
    r for r in RULES if r.tier == "tolerant" and (r.id[:2] in ("HM", "CM", "PF") or r.id == "CF102")
]
KEEP = 3
"""Characters past the tolerant rule's literal a cut must keep: `... for kv (` cut before
the request's sign tells no kind (HM104 / HM105), and the rule says nothing there."""


def viewer_cut(line: str, width: int) -> str:
    """A viewer that cuts a long line at `width` columns and marks it with `…`."""
    return line if len(line) <= width else line[: width - 1] + "…"


@cache
def _corpus_lines() -> dict[str, list[tuple[str, str]]]:
    """exact rule id -> (version, corpus line) for every corpus line it matches."""
    found: dict[str, list[tuple[str, str]]] = {}
    exact = [BY_ID[c] for r in SIBLINGS for c in r.covers]
    for entry in corpus.entries(CORPUS):
        for line in read_tail(entry.log_path):
            for rule in exact:
                if rule.literal in line and rule.match(line) is not None:
                    found.setdefault(rule.id, []).append((entry.label.vllm_version, line))
    return found


def _lines(sibling: Rule) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for rule_id in sibling.covers:
        real = _corpus_lines().get(rule_id)
        if real:
            out.extend(real[:3])
        else:  # no corpus log yet: the rule's examples, rendered from the format string
            low = next((p[2:] for p in BY_ID[rule_id].vllm.split(",") if p.startswith(">=")), None)
            out.extend((low, ex) for ex in BY_ID[rule_id].examples)
    return out


def test_the_siblings_cover_the_families() -> None:
    covered = {c for r in SIBLINGS for c in r.covers}
    assert {"HM001", "HM002", "HM003", "HM005", "HM006", "HM009", "CF001", "CM001"} <= covered
    assert {"PF011", "PF031", "PF034", "PF035", "PF040", "PF042"} <= covered
    assert {"HM005", "HM006", "HM009", "CF001"} <= set(_corpus_lines()), "real lines exist"


@pytest.mark.parametrize("sibling", SIBLINGS, ids=lambda r: r.id)
def test_a_line_cut_anywhere_past_the_core_keeps_its_kind(sibling: Rule) -> None:
    """From the first column where the sibling reads the cut line (no later than a few
    characters past its exact rules' literal) to the whole line, the kind stands."""
    lines = _lines(sibling)
    assert lines
    for version, line in lines:
        clean = classify([line], version=version).primary.kind
        assert clean == sibling.outcome or sibling.attribution != "none", (line, clean)
        exact_end = max(
            line.find(BY_ID[c].literal) + len(BY_ID[c].literal)
            for c in sibling.covers
            if BY_ID[c].literal in line
        )
        first = next(
            w for w in range(1, len(line) + 2) if sibling.match(viewer_cut(line, w)) is not None
        )
        assert first <= exact_end + KEEP + 1, (first, exact_end, line[:first])
        wrong = []
        for width in range(first, len(line) + 1, 5):
            cut = viewer_cut(line, width)
            d = classify([cut], version=version)
            if d.primary.kind != clean:
                wrong.append(f"{width}: {d.primary.kind}: {cut[-50:]}")
        assert not wrong, "\n".join(wrong[:5])


@pytest.mark.parametrize("sibling", SIBLINGS, ids=lambda r: r.id)
def test_a_paste_that_stops_after_the_core_keeps_its_kind(sibling: Rule) -> None:
    for version, line in _lines(sibling):
        clean = classify([line], version=version).primary.kind
        for damage in (damages.cut_tail_clause, damages.BY_NAME["reflow"].apply):
            pasted = damage([line])
            assert classify(pasted, version=version).primary.kind == clean, pasted


@pytest.mark.parametrize("width", [100, 120, 160])
def test_a_whole_log_cut_by_a_viewer_keeps_its_kind_where_the_core_survives(width: int) -> None:
    """Every corpus log of these families, each line cut at `width`: where the clean
    answer's line keeps its core sentence (the sibling reads the cut line), the kind
    stands, though the exact rule no longer reads it."""
    by_outcome = {r.outcome: r for r in SIBLINGS}
    checked = 0
    wrong = []
    for entry in corpus.entries(CORPUS):
        lines = read_tail(entry.log_path)
        clean = classify(lines)
        sibling = next((r for r in SIBLINGS if clean.primary.rule_id in r.covers), None)
        if sibling is None or not clean.primary.evidence:
            continue
        cut = [viewer_cut(line, width) for line in lines]
        core = cut[clean.primary.evidence[0].line - 1]
        if sibling.match(core) is None:
            continue  # the core sentence did not survive the cut
        checked += 1
        got = classify(cut).primary.kind
        if got != clean.primary.kind:
            wrong.append(f"{entry.id}: {got}")
    assert checked >= 10 and by_outcome
    assert not wrong, wrong
