"""A reflowed error the rejoin grows row by row is asked after each row whether it is an
error line (`error_rows._is_error`), and what its last character is (`_continues`): both read
only the head, the message to its first colon and the run of name characters that ends it,
and the line grows in place. Held to the plain statements (the message copied and searched,
the line copied for each row), on corpus rows, their damaged copies, built heads and
endings; and 400 rows of 16 KB that go on one error stay linear (they took 1.1 s)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import classify, logtail
from vllm_bootdiag.text import error_rows, rejoin, row_starts
from vllm_bootdiag.text.exception_names import match as exception_at_start

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _is_error_plain(text: str) -> bool:
    head = error_rows._HEAD.match(text)
    msg = text[head.end() :] if head is not None else text
    level = head["level"] if head is not None else None
    if level not in ("ERROR", "CRITICAL") and not (
        msg[:1] in error_rows._NAME_STARTS and exception_at_start(msg)
    ):
        return False
    return not (" validation error" in msg and error_rows._PYDANTIC_HEAD.search(msg))


def _last_plain(prev: str) -> str:
    return prev.rstrip()[-1:]


_HEADS = ("", "  ", "\x1b[31m", "(APIServer pid=1) ", "ERROR 01-02 03:04:05 [a.py:1] ",
          "(EngineCore pid=2) CRITICAL 01-02 03:04:05 [core.py:9] ", "INFO 01-02 03:04:05 [a.py:1] ",
          "ERROR 01-02 03:04:05 [a.py", "(x ")  # fmt: skip
_NAMES = ("ValueError", "torch.OutOfMemoryError", "a.b.KeyError", "1Error", "Error", "ValueErr",
          "pydantic_core._pydantic_core.ValidationError", "ÄError", "", "x y Error")  # fmt: skip
_GLUE = (": ", ":", " : ", "", ": x: ")
_ENDS = ("boom", "1 validation error for ModelConfig", "2 validation errors for A.B",
         "1 validation error for", "1 validation error for \n", "3 validation error for X\n",
         "x validation error for X", "1  validation error for X", "١ validation error for X",
         "1 validation errors for X y", "1 validation error for X.", "validation error for X",
         "1 validation error forX", "")  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from(_HEADS),
    st.sampled_from(_NAMES),
    st.sampled_from(_GLUE),
    st.sampled_from(_ENDS),
    st.integers(0, 3),
)
def test_an_error_line_is_judged_as_the_plain_statement(
    head: str, name: str, glue: str, end: str, rows: int
) -> None:
    text = head + name + glue + " ".join(["more words"] * rows + [end])
    assert error_rows._is_error(text) == _is_error_plain(text), text
    lead = rejoin._LEAD.match(text).end()  # type: ignore[union-attr]
    assert error_rows._is_error(text, lead) == _is_error_plain(text), text


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.sampled_from([" ", "\t", "\x1b[0m", "\x1b[1;31m", "\x1b[", "\x1b", "x"]), max_size=6),
    st.sampled_from(_HEADS),
    st.sampled_from(_NAMES),
    st.sampled_from(_ENDS),
)
def test_a_head_read_from_where_its_lead_ends_is_the_head(
    lead_parts: list[str], head: str, name: str, end: str
) -> None:
    """`_HEAD` read as `_LEAD` and then `_HEAD_REST` where it ends: the same error line."""
    text = "".join(lead_parts) + head + name + ": " + end
    lead = rejoin._LEAD.match(text).end()  # type: ignore[union-attr]
    assert error_rows._is_error(text, lead) == _is_error_plain(text), text


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="a: .\t\n\u3000x1", max_size=200), st.integers(0, 200))
def test_the_last_character_is_read_as_rstrip_reads_it(text: str, blanks: int) -> None:
    for prev in (text, text + " " * blanks, text + "\u3000\t" * blanks):
        near = prev[-64:].rstrip()
        assert (near[-1:] if near else prev.rstrip()[-1:]) == _last_plain(prev)
        assert rejoin._continues(prev, "and more of it") == _continues_plain(
            prev, "and more of it"
        )


def _continues_plain(prev: str, row: str) -> bool:
    if not _is_error_plain(prev) or " " not in row.strip():
        return False
    if not (row[:1].islower() or rejoin._CONTINUES.match(row)):
        end = _last_plain(prev)
        if not (end.isalnum() or end in ",;:(-"):
            return False
    return not row_starts._starts(row)


def test_corpus_rows_and_their_damaged_copies_are_judged_as_the_plain_statement() -> None:
    seen = 0
    for log in LOGS[::3]:
        tail = logtail.read_tail(log)
        for lines in (tail, *(d.apply(list(tail)) for d in damages.DAMAGES)):
            for line in lines:
                seen += 1
                assert error_rows._is_error(line) == _is_error_plain(line), line
    assert seen > 10_000


def _join_plain(
    lines: Sequence[rejoin.Row],
    raw: Sequence[str],
    base: int,
    layout: rejoin.Layout,
    reflow: bool,
) -> tuple[Sequence[rejoin.Row], set[str]]:
    """`rejoin._join` as it was written: each joined line copied for each row it takes (the
    join loop is what changed)."""
    out: list[rejoin.Row] = []
    ran: set[str] = set()
    done = 0
    for k in layout.slow:  # the rows between slow ones start quickly: kept as they are
        out.extend(lines[done:k])
        done = k + 1
        line = lines[k]
        prev = out[-1]
        name, sep = ("", "")
        if rejoin._follows(prev, line):
            width = len(raw[prev[2] - base])
            name, sep = rejoin._join_text(
                prev[0], line[0], width, layout.wide, layout.hard, layout.soft, reflow=reflow
            )
        if name:
            repairs = tuple(dict.fromkeys((*prev[3], *line[3], name)))
            text = prev[0] + ("" if sep == "" or prev[0].endswith(" ") else " ") + line[0]
            out[-1] = (text, prev[1], line[2], repairs)
            ran.add(name)
        else:
            out.append(line)
    out.extend(lines[done:])
    return out, ran


def _cases() -> list[list[str]]:
    cases = []
    for log in LOGS[::4]:
        tail = logtail.read_tail(log)
        cases += [tail, *(d.apply(list(tail)) for d in damages.DAMAGES)]
    width = 300
    cases.append(["ValueError: " + "a " * 100] + [("b " * 150)[:width] + str(i) for i in range(40)])
    cases.append(["(APIServer pid=1) ERROR 01-02 03:04:05 [a.py:1] boom"] + ["and more"] * 30)
    cases.append(["x" * 120] * 30)
    cases.append(["\x1b[0m" * 30 + "ValueError: x"] + [("b " * 60)[:118] + str(i) for i in range(30)])
    cases.append(["\x1b[0m" * 20 + "\x1b[3"] + ["1mValueError: x and"] + ["more of it"] * 10)
    cases.append(["  \x1b[0m", "ValueError: boom", "and more", "\x1b[0", "m and then"])
    cases.append([("\x1b[0m" * 40)[:120]] * 12 + ["ValueError: x", "and more"])
    # a terminal cut a colour code at a full row: the record after it is read once it is whole
    cut = "\x1b[0m" * 17 + "\x1b[0;0000m" + "\x1b[3"
    full = ["x" * 80, "y" * 79 + "q", "z" * 80, "w" * 40]
    cases.append([*full, cut, "1mERROR 01-02 03:04:05 [a.py:1] boom", "and more of it"])
    cases.append([*full, " " * 80, "\t\x1b[31mERROR 01-02 03:04:05 [a.py:1] boom", "and more of it"])
    cases.append([("ab " * 60)[:150] for _ in range(30)])
    return cases


def test_the_rejoin_joins_as_it_did() -> None:
    """The rows as read and as the per-line steps left them: the same lines, the same
    steps named, each joined line the same text (both ways the rejoin joins them: wrapped
    rows only, the first of its two reads, and reflowed errors too)."""
    joined = 0
    for lines in _cases():
        if len(lines) < 2:
            continue
        for rows in (rejoin.ReadRows(lines, 1), list(rejoin.ReadRows(lines, 1))):
            layout = rejoin._layout(rows, lines, 1)
            if layout is None:
                continue
            for reflow in (False, True):
                new, ran = rejoin._join(rows, lines, 1, layout, reflow)
                old, ran_old = _join_plain(rows, lines, 1, layout, reflow)
                assert (list(new), ran) == (list(old), ran_old)
                joined += bool(ran) and reflow
    assert joined > 100


def test_many_rows_that_go_on_one_error_stay_linear() -> None:
    width = 16_000
    rows = [("b " * 8000)[:width] + str(i) for i in range(399)]
    for head in ("ValueError: " + "a " * 8000, "\x1b[0m" * 3000 + "ValueError: x"):
        tail = [head, *rows]
        classify(tail[:5])
        t0 = time.perf_counter()
        d = classify(tail)
        took = time.perf_counter() - t0
        assert "rejoin_reflowed" in d.model_dump()["repairs"]
        if sys.gettrace() is None and sys.getprofile() is None:  # (a tracer: no `+=` in place)
            assert took < 0.5, took  # (1.1 s and 0.7 s when each row copied the line, read it)
