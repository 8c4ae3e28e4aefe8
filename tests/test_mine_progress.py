"""`corpus mine` on a terminal: a progress bar of the logs found, not a bare counter.

Why: a fleet's folder takes minutes; the bar says how far along it is and how long is left.
The total is counted first (a walk, 50 ms for 10,000 files), only when stderr is a terminal.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_bootdiag.release.commands import progress_bar

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_the_bar_shows_done_of_total_and_time_left() -> None:
    out = io.StringIO()
    draw = progress_bar(out, 200)
    draw(0, 0.0)
    draw(50, 0.5)  # within 0.2 s of the last draw: skipped
    draw(200, 2.0)  # the last one is always drawn
    frames = out.getvalue().split("\r")[1:]
    assert len(frames) == 2
    assert frames[0].startswith("[....................] 0/200   0%")
    assert frames[-1].startswith("[####################] 200/200 100%    100 logs/s")
    assert all(len(f) <= 80 for f in frames)
    half = io.StringIO()
    progress_bar(half, 1_000_000)(500_000, 40.0)
    frame = half.getvalue()
    assert "[##########..........] 500,000/1,000,000  50%" in frame and "40 s left" in frame
    assert len(frame) <= 81


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_on_a_terminal_mine_draws_the_bar(tmp_path: Path) -> None:
    for i, log in enumerate(sorted((CORPUS / "0.33.0").glob("*.log"))[:6]):
        shutil.copy(log, tmp_path / f"{i}.log")
    master, slave = os.openpty()
    r = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", "corpus", "mine", str(tmp_path), "--jobs", "1"],
        stdout=subprocess.PIPE,
        stderr=slave,
        timeout=120,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert r.returncode == 0
    assert r.stdout.decode().startswith("6 logs in ")
    assert "[####################] 6/6 100%" in shown.decode()
