"""Benchmark: the instructions each whole-text scan and row test of the clean-tail check
executes over the corpus tails, under valgrind (cachegrind), where timings vary 2x with a
shared machine's load.

Run: python bench/bench_scans.py [NAME ...]   (valgrind on PATH; about 20 s a name)

Each name is counted as the difference of two runs (one pass over every clean corpus
tail's text, and five), so the set-up, the imports and one classification of each tail
(which compiles triage's scan) cancel out. What one warm pass of `classify` executes
in all is bench_per_line.py's `--instructions` (475 M on 2026-12-03).

Measured 2026-12-03 (CPython 3.11.7, 225 clean tails of the 226, 9.5 K characters each
on average once the tags are off, 152 of them two-byte text for the banner's block
characters): triage's scan 66-70 M; the check's scans for a record inside a line 21 M,
for a frame's `File "` 16 M, for argparse's and uvicorn's heads 15 M, for caret codes
and bare resets 13.5 M; the rows' starts tested (`_rows`) 41 M, the tags taken off 46 M.
On that interpreter every `str.startswith`, `find`, `count` and `rfind` call parses its
arguments with `PyArg_ParseTuple` (a format string copied per call): a call of
`str.startswith` via `map` costs about 600 instructions before it tests a character, the
most of what `_rows` costs a row; three `in` tests for the caret codes cost more than the
one scan (19-23 M), and `str.count("\\n")` over the text 17.6 M. Where one scan stops at
a frequent character (`-`, `"`, `: `), its stops cost as much as its steps.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench_per_line import cachegrind_refs

ROOT = Path(__file__).resolve().parent.parent

_RUN = r"""
import sys
sys.path.insert(0, sys.argv[1])
from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.text import row_scan, triage
from vllm_bootdiag.text.joined import Joined

tails = [logtail.read_tail(e.log_path) for e in corpus.entries(sys.argv[1] + "/corpus")]
texts, rows = [], []
for t in tails:
    classify(t)  # compiles triage's scan for the markers' starts
    j = Joined.of(t)
    if row_scan.clean_rows(j) is not None and j.untagged is not None:
        texts.append(j.untagged[0])
        rows.append((t, j.doc))
concern = next(iter(triage._CONCERN.values()))
frame = row_scan._FRAME_INSIDE
SCANS = {
    "triage_scan": concern.findall,
    "record_inside": row_scan._RECORD_INSIDE.search,
    "frame_inside": lambda x: list(frame.finditer(x)) if '"' in x else None,
    "usage_or_uvicorn": lambda x: list(row_scan._USAGE_OR_UVICORN.finditer(x)),
    "caret_or_reset": row_scan._CARET_OR_RESET.search,
    "count_newlines": lambda x: x.count("\n"),
}
ROWS = {"row_starts": lambda r: row_scan._rows(*r)}
name, passes = sys.argv[2], int(sys.argv[3])
f, over = (SCANS[name], texts) if name in SCANS else (ROWS[name], rows)
for _ in range(passes):
    for x in over:
        f(x)
"""

NAMES = (
    "triage_scan",
    "record_inside",
    "frame_inside",
    "usage_or_uvicorn",
    "caret_or_reset",
    "count_newlines",
    "row_starts",
)


def _count(script: Path, name: str, passes: int) -> int:
    argv = [sys.executable, str(script), str(ROOT), name, str(passes)]
    return cachegrind_refs(argv, dict(os.environ))


def main(argv: list[str]) -> int:
    if not shutil.which("valgrind"):
        print("bench_scans.py needs valgrind", file=sys.stderr)
        return 2
    names = argv or list(NAMES)
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        print(f"unknown: {', '.join(unknown)}; known: {', '.join(NAMES)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "scan.py"
        script.write_text(_RUN)
        for name in names:
            per = (_count(script, name, 5) - _count(script, name, 1)) / 4
            print(f"{name:18s} {per / 1e6:7.2f} M instructions a pass", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
