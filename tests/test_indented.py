"""A log pasted as a Markdown code block by indentation (four spaces, a tab, more in a list
item) or indented by a mail client: every corpus tail reads as itself, and the step leaves
alone every tail vLLM printed and every other damage of one (a tail that is all frames
keeps its indent: vLLM's own)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import BootWatcher, classify, corpus, logtail
from vllm_bootdiag.rules import RULES
from vllm_bootdiag.text.indented import strip_indent

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(_CORPUS)}

INDENTS = {"four spaces": "    ", "a tab": "\t", "a list item's code": "      ", "two": "  "}


@pytest.mark.parametrize("indent", INDENTS.values(), ids=list(INDENTS))
def test_an_indented_corpus_tail_reads_as_the_tail(indent: str) -> None:
    wrong = []
    for log_id, tail in TAILS.items():
        pasted = [indent + line if line else line for line in tail]
        d = classify(pasted)
        if damages.answer(pasted) != damages.answer(tail):
            wrong.append(f"{log_id}: {d.primary.kind}")
        assert "indented" in d.repairs, log_id
        clean = classify(tail)
        assert [e.line for e in d.primary.evidence] == [e.line for e in clean.primary.evidence]
    assert not wrong, "\n".join(wrong[:10])


def test_a_wrapped_tail_then_indented_reads_as_the_wrapped_tail() -> None:
    """A terminal's hard wrap, then pasted as a code block: the indent goes first, then the
    rejoin reads the rows at the terminal's width."""
    wrap = damages.BY_NAME["wrap100"].apply
    wrong = []
    for log_id, tail in list(TAILS.items())[::5]:
        rows = wrap(list(tail))
        if damages.answer(["    " + r for r in rows]) != damages.answer(rows):
            wrong.append(log_id)
    assert not wrong, wrong


_BEFORE = [
    d
    for d in damages.DAMAGES
    if not d.name.startswith("code_block") and not d.lossy and not d.window
]


@pytest.mark.parametrize("damage", _BEFORE, ids=[d.name for d in _BEFORE])
def test_a_damaged_tail_then_indented_reads_as_the_damaged_tail(damage: damages.Damage) -> None:
    """A CI page's, journald's or docker's log (a stamp or prefix on every line), a viewer's
    numbered rows, a terminal's wrap, pasted as a code block: the indent goes, and what is
    left is read as it would be without it."""
    indent = damages.BY_NAME["code_block"].apply
    wrong = []
    for log_id, tail in list(TAILS.items())[::9]:
        rows = damage.apply(list(tail))
        got, want = damages.answer(indent(rows)), damages.answer(rows)
        if got[:2] != want[:2]:
            wrong.append(f"{log_id}: {got[0]} (want {want[0]})")
    assert not wrong, "\n".join(wrong)


def test_no_tail_vllm_printed_nor_another_damage_of_one_is_taken_for_indented() -> None:
    for log_id, tail in TAILS.items():
        assert strip_indent(tail) is None, log_id
        for d in damages.DAMAGES:
            if not d.name.startswith("code_block"):
                assert strip_indent(d.apply(list(tail))) is None, (log_id, d.name)
    for rule in RULES:
        for text in (*rule.examples, *rule.counter_examples):
            assert strip_indent(text.splitlines()) is None, rule.id


def test_a_tail_of_frames_and_code_keeps_vllms_indent() -> None:
    """The last rows of a traceback are all indented by vLLM itself (a frame's two spaces,
    its code line's four): taken off, they would no longer read as a frame."""
    seen = 0
    for tail in TAILS.values():
        for k in range(len(tail)):
            if tail[k].startswith('  File "'):
                frames = tail[k : k + 2]
                if all(r.startswith("  ") for r in frames):
                    assert strip_indent(frames) is None, frames
                    seen += 1
                break
    assert seen > 20


def test_what_counts_as_indented() -> None:
    rec = "INFO 01-02 03:04:05 [core.py:1] x"
    assert strip_indent(["    " + rec, "", "      File y", "    z"]) == (
        [rec, "", "  File y", "z"],
        [True, False, True, True],
    )
    assert strip_indent(["\t" + rec, "\t\t  code"]) == ([rec, "\t  code"], [True, True])
    # blank rows with the indent or without it; the indent all rows share, not the first's
    assert strip_indent(['      File "y", line 1', "    ", "        z"]) is None  # (frames only)
    assert strip_indent(["    ValueError: v", "", "      " + rec, "    " + rec]) == (
        ["ValueError: v", "", "  " + rec, rec],
        [True, False, True, True],
    )
    # one row at its first column: not a paste's indent
    assert strip_indent(["    " + rec, "x", "    y"]) is None
    # tab and spaces share no indent
    assert strip_indent(["\t" + rec, "    y"]) is None
    # a process tag, colour codes and a traceback's header start a line of their own
    tagged = "(EngineCore_DP0 pid=7) \x1b[0;36mERROR 01-02 03:04:05 [core.py:1] x"
    assert strip_indent(["  " + tagged, "  y"]) == ([tagged, "y"], [True, True])
    assert strip_indent(["  Traceback (most recent call last):", '    File "a", line 1'])[0] == [
        "Traceback (most recent call last):",
        '  File "a", line 1',
    ]
    assert strip_indent([]) is None and strip_indent(["", "  "]) is None


def _watched(lines: list[str]) -> str:
    w = BootWatcher()
    for line in lines:
        if (d := w.feed(line)) is not None:
            return d.primary.kind
    return w.diagnosis().primary.kind


def test_a_stream_of_indented_lines_is_watched_as_the_log() -> None:
    """BootWatcher, fed the indented lines one by one, reports what it reports of the log."""
    wrong = []
    for log_id, tail in list(TAILS.items())[::4]:
        want, got = _watched(tail), _watched(["    " + line for line in tail])
        if got != want:
            wrong.append(f"{log_id}: {got} (want {want})")
    assert not wrong, "\n".join(wrong)


def test_a_rest_cut_before_a_blank_does_not_shorten_the_indent() -> None:
    """A code block's rows wrapped at 80: a row's rest that a cut left at a blank (` word`)
    leads with less than the indent; the indent less all but that blank left every record
    behind three blanks, read as frames (the version line lost)."""
    tail = TAILS["0.14.0/LC001/booted__smollm135m-eager__cpu"]
    rows = damages._hard_wrap(80)(["    " + line for line in tail])
    assert any(row.startswith(" ") and not row.startswith("    ") for row in rows)
    assert classify(rows).vllm_version == classify(tail).vllm_version == "0.14.0"
