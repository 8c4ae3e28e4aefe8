"""A log whose lines end in a lone carriage return (saved with classic-Mac line ends, or a
terminal capture that kept only the returns) reads as the same log with its newlines, in
every reader; a progress bar's redraws with `\\r` still read as the bar's last frame.

Built from every corpus log: its newlines made carriage returns, the way such a copy is
made, and its own tqdm redraws (three logs capture CUDA graphs with them)."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import BootWatcher, Diagnosis, classify, classify_file, corpus
from vllm_bootdiag.text import returns
from vllm_bootdiag.text import tail as text_tail

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
ENTRIES = corpus.entries(_CORPUS)
TEXTS = {e.id: text_tail.decode(e.log_path.read_bytes()) for e in ENTRIES}
"""Each log whole, as its bytes decode (its banner's own `\\r\\n` and its bars kept)."""


def _key(d: Diagnosis) -> tuple[object, ...]:
    return (
        d.primary.kind,
        damages.numbers(d.primary),
        d.vllm_version,
        d.phase,
        [e.line for e in d.primary.evidence],
    )


def _cr(text: str) -> str:
    """The log with carriage returns for its line ends."""
    return text.replace("\r\n", "\n").replace("\n", "\r")


def _redraw_lines(text: str) -> list[str]:
    return [s for s in text.replace("\r\n", "\n").split("\n") if "\r" in s.rstrip("\r")]


def test_the_corpus_holds_real_redraws() -> None:
    """What the redraw tests below rest on: tqdm's frames, a process tag before the first."""
    bars = [s for text in TEXTS.values() for s in _redraw_lines(text)]
    assert len(bars) >= 6
    assert all(s.count("\r") >= 3 and "it/s]" in s for s in bars)


def test_a_redraw_still_reads_as_its_last_frame() -> None:
    for log_id, text in TEXTS.items():
        for line in _redraw_lines(text):
            assert not returns.ends_lines(line), log_id
            last = [p for p in line.split("\r") if p.strip()][-1]
            assert text_tail.split_lines(line + "\n") == [last], log_id
            done = [int(m[1]) for m in re.finditer(r"\| *(\d+)/\d+ \[", line)]
            assert len(done) >= 3 and done[-1] == max(done), log_id  # the bar's furthest
            assert re.search(rf"\| *{done[-1]}/\d+ \[", last), log_id


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_carriage_returns_give_the_rows_of_newlines(entry: corpus.Entry) -> None:
    """Row for row, empty lines too: a bar's frames run together between two lines are drawn
    over as in its own line (its first frame over the process tag before it), and a record's
    `\\r\\n` made `\\r\\r` (its `\\n` made `\\r` too) ends one line."""
    text = TEXTS[entry.id]
    for cr, rows in ((_cr(text), text), (text.replace("\n", "\r"), text)):
        assert returns.ends_lines(cr)
        assert text_tail.split_lines(cr, None) == text_tail.split_lines(rows, None)
        assert text_tail.split_lines(cr) == text_tail.split_lines(rows)
        assert text_tail.split_tail(cr, 7) == text_tail.split_tail(rows, 7)


WITH_EMPTY_LINES = [e for e in ENTRIES if "\n\n" in TEXTS[e.id].replace("\r\n", "\n")]


def test_the_corpus_holds_logs_with_empty_lines() -> None:
    assert len(WITH_EMPTY_LINES) >= 4


@pytest.mark.parametrize("entry", WITH_EMPTY_LINES, ids=[e.id for e in WITH_EMPTY_LINES])
def test_evidence_of_a_carriage_return_log_cites_its_lines_empty_ones_counted(
    entry: corpus.Entry,
) -> None:
    """A log whose empty lines end in `\\r` as the others do: evidence cites the lines of
    the log with newlines (a run of returns once read as one line end dropped the empty
    lines, and every evidence line after them was cited one or two lines early)."""
    text = TEXTS[entry.id]
    want = _key(classify(text))
    assert _key(classify(_cr(text))) == want
    assert _key(classify([_cr(text)])) == want
    assert _key(classify(text.replace("\n", "\r"))) == want


def _readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cr: str) -> dict[str, Diagnosis]:
    data = cr.encode()
    path = tmp_path / "log"
    path.write_bytes(data)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    watcher = BootWatcher()
    watcher.feed(cr)
    return {
        "str": classify(cr),
        "list": classify([cr]),
        "bytes lines": classify([data]),
        "file": classify_file(path),
        "stdin": classify_file("-"),
        "stream": classify(text_tail.read_tail_stream(io.BytesIO(data))),
        "watcher": watcher.reported or watcher.diagnosis(),
    }


@pytest.mark.parametrize("entry", ENTRIES[::3], ids=[e.id for e in ENTRIES[::3]])
def test_every_reader_answers_a_carriage_return_log_as_its_newline_log(
    entry: corpus.Entry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = TEXTS[entry.id]
    want = _key(classify(text))
    for name, got in _readers(tmp_path, monkeypatch, _cr(text)).items():
        if name == "watcher":  # a stream's answer: its lines are not rejoined
            watcher = BootWatcher()
            for line in text_tail.split_lines(text, None):
                watcher.feed(line)
            assert _key(got) == _key(watcher.reported or watcher.diagnosis()), name
        else:
            assert _key(got) == want, name


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_every_corpus_log_with_carriage_returns_keeps_its_answer(entry: corpus.Entry) -> None:
    """Its newlines made returns, its records' `\\r\\n` too (`\\r\\r`): the same answer,
    evidence citing the same lines."""
    text = TEXTS[entry.id]
    want = _key(classify(text))
    assert _key(classify(_cr(text))) == want
    assert _key(classify(text.replace("\n", "\r"))) == want


def test_a_tail_of_carriage_return_lines_counts_the_rows_before_it() -> None:
    """The last rows of a long log of returns and how many come before them: as in the log
    with newlines (classify cites the file's line numbers from them)."""
    first, then = sorted(TEXTS.values(), key=lambda t: t.count("\n"))[-2:]
    text = first.replace("\r\n", "\n") + then.replace("\r\n", "\n")  # over a restart
    rows = text_tail.split_lines(text, None)
    assert len(rows) > 400
    kept, before = text_tail.split_tail(_cr(text), 400)
    assert kept == rows[-400:] and before == len(rows) - 400
    assert _key(classify(_cr(text))) == _key(classify(text))


def _ends_lines_long_way(line: str) -> bool:
    """`returns.ends_lines` as it reads: two parts are neither blank nor a frame, of all
    parts where no part is a frame, else of the first four and the last four."""
    parts = line.split("\r")
    if any(map(returns._is_frame, parts)):
        parts = parts[:4] + parts[4:][-4:]
    return sum(1 for p in parts if p.strip() and not returns._is_frame(p)) >= 2


_PARTS = st.sampled_from(
    ("", " ", "a", "x%|", "1.5it/s]", "2.1s/it]", "/s", "%", "|", "\t", "INFO x", "(A pid=1) ")
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PARTS, min_size=2, max_size=12))
def test_ends_lines_is_its_long_way(parts: list[str]) -> None:
    line = "\r".join(parts)
    assert returns.ends_lines(line) == _ends_lines_long_way(line), parts


def test_ends_lines_is_its_long_way_on_every_corpus_line_and_long_runs() -> None:
    for log in sorted(_CORPUS.glob("*/*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").split("\n"):
            if "\r" in line:
                assert returns.ends_lines(line) == _ends_lines_long_way(line), log.name
    for unit in ("x%|\r", "a\rb%|", "\r", " \r", "10%|#| 1/2 [00:01<00:01, 1.0it/s]\r"):
        for tail in ("", "\rtext", "\rtext\rmore"):
            line = unit * 4000 + tail
            assert returns.ends_lines(line) == _ends_lines_long_way(line), (unit, tail)


def _record(line: str) -> bool:
    return re.search(r"\.py:\d+\]", line) is not None


def test_two_returns_after_a_record_end_it_elsewhere_they_hold_an_empty_line() -> None:
    """The two readings of `\\r\\r`, told apart by the line before it (built from a corpus
    log's own lines: a record's, and a traceback's around its empty line)."""
    text = TEXTS["0.32.0/MF002/model_files_unreadable__config-json-cut__cpu"]
    lines = text.replace("\r\n", "\n").split("\n")
    at = lines.index("")
    record = next(s for s in lines if _record(s))
    before, after = lines[at - 1], lines[at + 1]
    assert not _record(before)
    assert text_tail.split_lines(f"{before}\r\r{after}\r") == [before, "", after]
    assert text_tail.split_lines(f"{record}\r\r{after}\r") == [record, after]
    assert text_tail.split_lines(f"{record}\r\r\r{after}\r") == [record, "", "", after]
    assert text_tail.split_tail(f"{before}\r\r{record}\r\r{after}\r", 2) == ([record, after], 2)
