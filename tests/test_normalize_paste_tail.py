"""A paste that lost its newlines is read as the same records with their newlines are.

A worker keeps the last 400 lines; 400 physical lines of a newline-less paste hold tens
of thousands of records. `normalize` keeps only the last rows such a paste is cut into
(as many as a worker keeps): the answer (kind, numbers, version, boots, remediation,
evidence) equals the one for the records given with their newlines, where the same
tail is cut to its last 400 lines, and each evidence line is the physical line its
record was pasted on.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from vllm_bootdiag import classify, corpus, logtail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_RECORD = re.compile(
    r"(?:\([A-Za-z][\w =.-]{0,60}? pid=\d+\) )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    r"\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)? \[[^\]\s]+:\d+\]"
)
_FILLER = CORPUS / "0.20.0" / "booted__smollm135m-eager__cpu.log"
"""An older release's whole boot: repeated before the failure, it is the earlier boots
of a restart loop, and a tail read past its last 400 lines would count more of them."""


def _records(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if _RECORD.match(line)]


def _cases() -> list[Path]:
    """0.20+ failure logs whose records alone are classified as labelled."""
    out = []
    for e in corpus.entries(CORPUS):
        kind = e.label.expected["kind"]
        if e.label.vllm_version.startswith(("0.2", "0.3")) and kind not in ("booted", "unknown"):
            records = _records(e.log_path)
            if len(records) >= 40 and classify(records).primary.kind == kind:
                out.append(e.log_path)
    return out[::4]


def _paste(lines: list[str]) -> tuple[list[str], list[int]]:
    """`lines` run together, each physical line up to 16 KB, and the physical line
    (1-based) each of them landed on."""
    paste: list[str] = []
    where: list[int] = []
    for line in lines:
        if paste and len(paste[-1]) + 1 + len(line) <= logtail.MAX_LINE_CHARS:
            paste[-1] += " " + line
        else:
            paste.append(line)
        where.append(len(paste))
    return paste, where


def _mapped(value: Any, where: list[int]) -> Any:
    """A diagnosis dump with each line number of the newline version mapped to the
    physical line of the paste, and each evidence text without trailing blanks (a
    cut line's parts are stripped at the right)."""
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if key in ("line", "boot_start_line") and isinstance(v, int):
                v = where[v - 1]
            elif key == "text" and isinstance(v, str):
                v = v.rstrip()
            elif key == "notes":
                v = [re.sub(r"line (\d+)", lambda m: f"line {where[int(m[1]) - 1]}", n) for n in v]
            out[key] = _mapped(v, where)
        return out
    if isinstance(value, list):
        return [_mapped(v, where) for v in value]
    return value


@pytest.mark.parametrize("log", _cases(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_paste_without_newlines_reads_as_its_records_with_them(log: Path) -> None:
    records = _records(log)
    lines = (_records(_FILLER) * 40)[:1500] + records
    paste, where = _paste(lines)
    assert len(lines) / len(paste) > 20  # tens of records on each pasted line

    with_newlines = classify(lines).model_dump(mode="json")
    pasted = classify(paste).model_dump(mode="json")

    assert pasted.pop("repairs") == ["split_collapsed"]
    assert with_newlines.pop("repairs") == []
    assert pasted == _mapped(with_newlines, where)
    assert pasted["primary"]["kind"] == classify(records).primary.kind
    assert pasted["boots_in_tail"] > 1  # the tail holds earlier boots: where it starts counts


def test_the_rows_kept_are_the_last_a_worker_keeps() -> None:
    """400 lines of 188 records each (75,200): the last 400 records are read, each on the
    physical line it was pasted on, and no more."""
    from vllm_bootdiag.text.normalize import normalize_rows

    record = "(APIServer pid=1) INFO 11-29 16:19:50 [launcher.py:{}] Route: /v1/models {}"
    lines = [record.format(k % 1000, k) for k in range(400 * 40)]
    paste, where = _paste(lines)
    rows, ran = normalize_rows(paste)
    assert ran == ("split_collapsed",)
    assert [r[0] for r in rows] == lines[-logtail.DEFAULT_LINES :]
    assert [r[1] for r in rows] == where[-logtail.DEFAULT_LINES :]


def test_an_empty_record_run_together_with_the_next_is_cut_from_it() -> None:
    """A banner's blank record, then the next record: two lines (the blank one's message
    is not the record after it), whether the blank one starts the pasted line or not."""
    from vllm_bootdiag.text.collapsed import split_collapsed
    from vllm_bootdiag.text.damage_check import damaged

    blank = "(APIServer pid=1) INFO 11-29 15:59:58 [api_utils.py:347]"
    args = "(APIServer pid=1) INFO 11-29 15:59:58 [api_utils.py:286] non-default args: {}"
    assert split_collapsed(f"{blank} {args}") == [blank, args]
    assert split_collapsed(f"{args} {blank} {args}") == [args, blank, args]
    bare = blank.removeprefix("(APIServer pid=1) ")
    assert split_collapsed(f"{bare}  {args}") == [bare, args]
    assert damaged("\n" + f"{bare}  {args}") and damaged("\n" + f"{blank} {args}")
    # a record's own message that is another start (a traceback) is not cut off
    tb = f"{blank} Traceback (most recent call last):"
    assert split_collapsed(tb) is None
