"""classify() of the lines a worker keeps reads as the file would.

Why: a worker's tail is `deque(maxlen=400)` filled by `for line in proc.stdout`, so each line
still ends in its newline. Joining those with newlines made a blank line after each, kept only
the last 200 of 400 lines and shifted every evidence line number; a deque (no slices), an open
file or a generator raised TypeError. Built from real corpus logs.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

import pytest

from vllm_bootdiag import classify, classify_file

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("0.32.0/*.log"))


def _text(path: Path) -> str:
    """The file's text with its line ends as written (`read_text` turns a progress bar's
    lone CR into a line end, which no file reader does)."""
    return path.read_bytes().decode("utf-8", errors="replace")


def _rows(text: str, ends: bool = True) -> list[str]:
    """Lines split at newlines only, as a file holds them (`str.splitlines` splits at CR,
    form feeds and more too)."""
    rows = text.split("\n")
    if rows[-1] == "":
        rows.pop()
    return [r + "\n" for r in rows] if ends else rows


def _same(d: Any) -> dict[str, Any]:
    out: dict[str, Any] = d.model_dump(mode="json")
    return out


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem)
def test_lines_with_their_newlines_read_as_the_file(log: Path) -> None:
    want = _same(classify_file(log))
    text = _text(log)
    assert _same(classify(_rows(text))) == want
    assert _same(classify(_rows(text, ends=False))) == want
    assert _same(classify(deque(_rows(text), maxlen=400))) == want


def test_an_appended_log_keeps_its_last_400_lines_and_their_numbers(tmp_path: Path) -> None:
    """0.14 then 0.32 in one file, 420 lines: all of the last 400 are read, numbered as in
    the file (the 0.32 boot's evidence line is the file's)."""
    old = _text(CORPUS / "0.14.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log")
    new = _text(CORPUS / "0.32.0" / "disk_full__compile-cache-full__cpu.log")
    path = tmp_path / "appended.log"
    path.write_bytes((old + new).encode())
    want = classify_file(path)
    alone = classify_file(CORPUS / "0.32.0" / "disk_full__compile-cache-full__cpu.log")
    assert want.primary.kind == "disk_full" and want.boots_in_tail == 2
    assert want.primary.evidence[0].line == old.count("\n") + alone.primary.evidence[0].line
    lines = _rows(_text(path))
    for given in (lines, iter(lines), path.open(newline="")):
        assert _same(classify(given)) == _same(want), type(given).__name__
    # a worker's deque holds the last 400 only: it says where they start in the file
    kept = deque(lines, maxlen=400)
    assert _same(classify(kept, first_line=len(lines) - 399)) == _same(want)
    bytes_lines = [r.encode() for r in lines]
    assert _same(classify(bytes_lines)) == _same(want)
    with path.open("rb") as f:
        assert _same(classify(f)) == _same(want)


def test_crlf_and_mixed_endings_number_as_lines() -> None:
    log = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
    rows = _rows(_text(log), ends=False)
    want = _same(classify_file(log))
    mixed = [r + ("\r\n" if i % 2 else "\n") for i, r in enumerate(rows)]
    assert _same(classify(mixed)) == want


def test_what_is_not_text_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match="as text or as lines of text, not NoneType"):
        classify(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="lines of text, not int"):
        classify([1, 2])  # type: ignore[list-item]
