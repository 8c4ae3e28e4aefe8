"""classify reads one log alike whatever form it is handed in: a str, its lines, its bytes, the
file. A NUL byte (a log file pre-allocated or cut by a crash, a terminal's paste) is dropped by
the file reader and by classify(lines); the text form kept it, so a NUL inside the line that
names the cause hid the cause (`unknown` where the file said `invalid_argument`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify, classify_file, corpus, logtail

ROOT = Path(__file__).resolve().parent.parent
ENTRIES = corpus.entries(ROOT / "corpus")


def _with_nul(lines: list[str]) -> tuple[list[str], int] | None:
    """The tail with a NUL put after the first space in the middle of its cause's line."""
    clean = classify(lines)
    if not clean.primary.evidence:
        return None
    i = clean.primary.evidence[0].line - 1
    line = lines[i]
    k = line.find(" ", len(line) // 2)
    if k < 0:
        return None
    return [*lines[:i], line[:k] + "\x00" + line[k:], *lines[i + 1 :]], i


def test_a_nul_in_the_cause_line_hides_it_from_no_form(tmp_path: Path) -> None:
    tried = 0
    for entry in ENTRIES[::4]:
        lines = logtail.read_tail(entry.log_path)
        damaged = _with_nul(lines)
        if damaged is None:
            continue
        nul_lines, _ = damaged
        text = "\n".join(nul_lines) + "\n"
        path = tmp_path / f"{tried}.log"
        path.write_bytes(text.encode())
        want = classify(nul_lines).model_dump_json()
        assert classify(text).model_dump_json() == want, entry.id
        assert classify(text.encode()).model_dump_json() == want, entry.id
        assert classify_file(path).model_dump_json() == want, entry.id
        tried += 1
    assert tried >= 20


@pytest.mark.parametrize("nul", ["\x00", "\x00" * 3])
def test_text_with_nuls_reads_as_its_lines(nul: str) -> None:
    line = "vllm serve: error: argument --max-num-seqs: invalid int value: 'abc'"
    k = line.find(" invalid")
    text = f"INFO 01-02 03:04:05 [api_server.py:1] vLLM API server version 0.11.0\n{line[:k]}{nul}{line[k:]}\n"
    assert classify(text).primary.kind == "invalid_argument"
    assert classify(text).model_dump_json() == classify(text.splitlines()).model_dump_json()
