"""BootWatcher.feed takes the lines a worker's pump really has.

Why: `subprocess.Popen(..., stdout=PIPE)` without `text=True` yields bytes, and
`watcher.feed(line)` then failed with "a bytes-like object is required, not 'str'" deep in
the matcher. A line read as bytes is decoded as a log file is; what is not text is a
TypeError that says so. The lines are a real corpus log's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import BootWatcher

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


def _first_report(lines: list[str] | list[bytes]) -> tuple[str, int, str | None]:
    w = BootWatcher()
    for line in lines:
        d = w.feed(line)  # type: ignore[arg-type]
        if d is not None:
            return d.primary.kind, d.primary.evidence[0].line, d.vllm_version
    raise AssertionError("the boot never ended")


def test_bytes_lines_read_as_text_lines() -> None:
    raw = KV_LOG.read_bytes().splitlines(keepends=True)
    want = _first_report([x.decode() for x in raw])
    assert want[0] == "kv_cache_shortfall" and want[2] == "0.32.0"
    assert _first_report(raw) == want
    assert _first_report([bytearray(x) for x in raw]) == want


def test_what_is_not_text_is_a_clear_type_error() -> None:
    with pytest.raises(TypeError, match="feed\\(\\) takes a line of text, not NoneType"):
        BootWatcher().feed(None)  # type: ignore[arg-type]
