"""The clean-tail check's first reading, row by row (`text/row_scan.py`).

It answers "clean" (with the rows the rejoin must look at) or "not sure"; where it is not
sure, the scans of the joined text answer. So it must never call a tail clean that the
scans call damaged, and it should be the one that answers for vLLM's own tails (that is
what makes the check cheap).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vllm_bootdiag import logtail
from vllm_bootdiag.text import damage_check, row_scan
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.wrappers import PIPE_PREFIX_AT_START

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))

_TAG = "(APIServer pid=7)"
_CORE = "(EngineCore_DP0 pid=9)"
_RECORD = "INFO 11-29 16:19:50 [api_utils.py:347] started"
_FRAME = '  File "/x/vllm/engine.py", line 3, in run'


def _scans(lines: list[str]) -> bool:
    """The scans' answer alone (the text without its lines: no row reading)."""
    return damage_check.damaged(Joined.of(lines).doc)


def test_vllms_own_tails_are_answered_by_the_rows() -> None:
    clean = by_rows = 0
    for log in LOGS:
        tail = logtail.read_tail(log)
        if _scans(tail):
            continue
        clean += 1
        slow = row_scan.clean_rows(Joined.of(tail))
        by_rows += slow is not None
        if slow is not None:
            assert slow == row_scan.slow_rows(tail), log.name
    assert clean > 150
    assert by_rows >= 0.95 * clean


@pytest.mark.parametrize(
    "lines",
    [
        [f"{_TAG} {_RECORD}", f"{_TAG} {_CORE}   File \"/x/a.py\", line 1, in f"],
        [f"{_TAG} {_RECORD}", f"{_TAG} {_CORE} {_RECORD}"],
        [f"{_TAG} {_RECORD}", f"(Worker pid=3)x{_TAG} {_RECORD}"],
        [f"{_TAG} {_RECORD}", f"{_TAG} ok {_RECORD}"],
        [f"{_TAG} {_RECORD}", f"{_TAG} Traceback (most recent call last):", f"{_TAG} x{_FRAME}"],
        [f"{_TAG} {_RECORD}", f"{_TAG} boot usage: vllm serve"],
        [f"{_TAG} {_RECORD}", f"{_TAG} ok INFO:     Started server process [1]"],
        [f"\x1b[0;36m{_TAG}\x1b[0;0m {_RECORD}", f"\x1b[0;36m{_TAG}\x1b[0;0m x{_RECORD}"],
        [f"{_TAG} {_RECORD}", "    ~~~~^^^^"],
        [f"{_TAG} {_RECORD}", f"{_TAG}\x01 {_RECORD}"],
    ],
)
def test_a_sign_past_a_rows_tag_is_damage(lines: list[str]) -> None:
    """Signs after a tag that is not the row's only head (a second tag, text), a fence
    after an indent, and a text holding the row scan's own stand-in for a tag: the rows
    are not called clean, and the answer is the scans'."""
    assert row_scan.clean_rows(Joined.of(lines)) is None
    assert damage_check.damaged(Joined.of(lines)) == _scans(lines)


@pytest.mark.parametrize(
    "lines",
    [
        [f"{_TAG} {_RECORD}", f"{_CORE} Traceback (most recent call last):", f"{_CORE} {_FRAME}"],
        [f"{_CORE} ERROR 11-29 16:20:31 [core.py:1] Traceback (most recent call last):",
         f"{_CORE} ERROR 11-29 16:20:31 [core.py:1] {_FRAME}"],
        [f"\x1b[0;36m{_TAG}\x1b[0;0m {_RECORD}", f"\x1b[1;36m{_CORE}\x1b[0;0m {_FRAME}"],
        [_RECORD, "Traceback (most recent call last):", _FRAME, "    raise ValueError(x)"],
        [f"{_TAG} INFO:     Started server process [1]", "usage: vllm serve [model_tag]"],
    ],
)
def test_vllms_heads_are_clean_by_the_rows(lines: list[str]) -> None:
    assert not _scans(lines)
    assert row_scan.clean_rows(Joined.of(lines)) == row_scan.slow_rows(lines)


def test_past_the_most_tags_the_scans_answer() -> None:
    lines = [f"(Worker_{k} pid={k}) {_RECORD}" for k in range(row_scan.MAX_TAGS + 2)]
    assert row_scan.clean_rows(Joined.of(lines)) is None
    assert not damage_check.damaged(Joined.of(lines))


def test_a_coloured_tails_tags_come_off_as_off_its_plain_text() -> None:
    """Where only its tags are coloured, a tail's tags are taken off the coloured text: the
    text is the plain one's with its tags taken off, to the character."""
    cases = [logtail.read_tail(log) for log in LOGS]
    cases += [
        [f"\x1b[0;36m{_TAG}\x1b[0;0m {_RECORD}", f"{_CORE} {_FRAME}", f"\x1b[1;36m{_CORE}\x1b[0;0m x"],
        [f"\x1b[0;36m{_TAG}\x1b[0;0m {_RECORD}", f"{_TAG} x", f"\x1b[0;36m{_TAG}\x1b[0;0m {_TAG} y"],
        [f"\x1b[0;36m{_TAG}\x1b[0;0m \x1b[32mINFO\x1b[0m x", f"{_TAG}\x1b[0m y"],
    ]
    coloured = 0
    for lines in cases:
        joined = Joined.of(lines)
        rows = row_scan._rows(lines, joined.doc)
        if rows is None or rows[2] is None or "\x1b" not in joined.doc:
            continue
        coloured += 1
        tags = rows[0]
        plain = Joined.of(lines).plain
        for tag in tags:
            plain = plain.replace("\n" + tag + " ", "\n\x01")
        assert row_scan._untagged(joined, tags, rows[2]) == plain
    assert coloured > 20


_BAR = "Capturing CUDA graphs (decode, FULL):  57%|█████▋    | 20/35 [00:01<00:01, 14.21it/s]"


def _with_bar(lines: list[str]) -> list[str]:
    """`lines` with a progress bar (a `|` inside a row) after every tenth row."""
    out: list[str] = []
    for k, line in enumerate(lines):
        out.append(line)
        if k % 10 == 5:
            out.append(_BAR)
    return out


def test_the_rows_answer_as_the_scans_do() -> None:
    """On every fourth corpus tail, each damaged copy of it, and copies with progress bars
    (a `|` that is no gutter), the check answers what the scans alone answer; the tails
    with a bar and no gutter are answered by the rows, a gutter is left to the scans."""
    by_rows = piped = 0
    for log in LOGS[::4]:
        tail = logtail.read_tail(log)
        variants = [tail, _with_bar(tail), *(d.apply(list(tail)) for d in damages.DAMAGES)]
        variants += [damages.BY_NAME[n].apply(_with_bar(tail)) for n in ("ci_gutter", "compose")]
        for lines in variants:
            joined = Joined.of(lines)
            damaged, slow = damage_check.check(joined)
            assert damaged == damage_check._damaged(Joined.of(lines)), log.name
            rows = row_scan.clean_rows(Joined.of(lines))
            if rows is not None:
                assert not damaged and rows == slow == row_scan.slow_rows(lines)
                by_rows += "|" in joined.doc
            elif "|" in joined.doc and PIPE_PREFIX_AT_START.search(joined.doc):
                piped += 1
                assert damaged
    assert by_rows > 40 and piped > 80


def test_a_tail_coloured_all_through_has_its_codes_stripped() -> None:
    """Where a row a new tag starts holds colour codes past its tag, the tags are taken off
    the text without codes (no replace of the coloured tags that would leave codes): the
    same text, to the character."""
    records = [
        f"\x1b[0;36m{_TAG}\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m11-29 16:19:50\x1b[0m x",
        f"\x1b[1;36m{_CORE}\x1b[0;0m \x1b[33mWARNING\x1b[0m \x1b[90m11-29 16:19:51\x1b[0m y",
        f"\x1b[0;36m{_TAG}\x1b[0;0m plain",
    ]
    cases = [records, records[::-1], [f"{_TAG} \x1b[31mERROR\x1b[0m z", *records]]
    cases += [logtail.read_tail(log) for log in LOGS if "\x1b[0m" in log.read_text("utf-8")]
    for lines in cases:
        joined = Joined.of(lines)
        rows = row_scan._rows(lines, joined.doc)
        assert rows is not None
        tags, _, starts = rows
        if "\x1b[0m" in "".join(lines):
            assert starts is None, lines[:2]
        plain = Joined.of(lines).plain
        for tag in tags:
            plain = plain.replace("\n" + tag + " ", "\n\x01")
        assert row_scan._untagged(joined, tags, starts) == plain


_C = f"\x1b[0;36m{_TAG}\x1b[0;0m"


@pytest.mark.parametrize(
    ("lines", "damaged"),
    [
        ([f"{_C} {_RECORD}", f"{_C} x[0m y"], True),  # a bare reset
        ([f"{_C} {_RECORD}", f"{_C} x\x1b[1m[0m y"], True),  # one right after a code
        ([f"{_C} {_RECORD}", f"{_C} x[0;0m"], True),
        ([f"{_C} {_RECORD}", f"{_C} x[\x1b[1m0m y"], False),  # one the strip makes: not one
        ([f"{_C} {_RECORD}", f"{_C} x^[[0;36m y"], True),  # caret notation
        ([f"{_C} {_RECORD}", f"{_C} x^\x1b[1m[[ y"], False),
        ([f"{_TAG} {_RECORD}", f"{_TAG} x^[[0m y"], True),
        ([f"{_TAG} {_RECORD}", f"{_TAG} x[0m"], True),
        ([f"{_TAG} {_RECORD}", "[0m"], True),
        ([f"{_TAG} {_RECORD}", f"{_TAG} [1] x [0]m y"], False),
    ],
)
def test_caret_codes_and_bare_resets_are_found_without_codes(
    lines: list[str], damaged: bool
) -> None:
    """The caret and bare-reset search reads the text without codes and tags: what it finds
    in the coloured text it finds there; where the strip made one, the scans answer."""
    assert damage_check.check(Joined.of(lines))[0] is damaged
    assert damage_check._damaged(Joined.of(lines)) is damaged


def _fence_after_indent(t: str) -> bool:
    return ("`" in t or "~" in t or "<" in t) and t.lstrip(" \t").startswith(row_scan._FENCES)


def test_a_row_that_starts_blank_or_with_a_bracket_is_wrapped_only_by_a_fence() -> None:
    """`_OTHER_AT` on a row that starts with a blank or `<` finds only a fence after the
    indent: no tool's prefix starts so. Rows of the corpus and of its damaged copies, and
    every damage's prefix and every fence behind blanks."""
    rows = [row for lines in [logtail.read_tail(log) for log in LOGS[::3]] for row in lines]
    rows += [row for log in LOGS[::9] for d in damages.DAMAGES for row in d.apply(
        logtail.read_tail(log))]  # fmt: skip
    heads = [d.apply([_RECORD])[0] for d in damages.DAMAGES]
    heads += [*row_scan._FENCES, "```python", "~~~ ", "<details><summary>x</summary>", "> x"]
    rows += [lead + h for lead in ("", " ", "  ", "\t", " \t ", "<", " <") for h in heads]
    checked = 0
    for t in rows:
        if t[:1] in (" ", "\t", "<"):
            checked += 1
            assert (row_scan._OTHER_AT.match(t) is not None) == _fence_after_indent(t), t[:80]
    assert checked > 1000
