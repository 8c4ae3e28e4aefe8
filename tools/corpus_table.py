#!/usr/bin/env python3
"""Print the version x outcome table of ``corpus/`` for corpus/README.md.

Why: the README's counts must come from the labels, not from memory. ``--write`` replaces the
table between ``<!-- table -->`` and ``<!-- /table -->`` in corpus/README.md. Stdlib only.
"""

from __future__ import annotations

import collections
import io
import json
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def vkey(version: str) -> tuple[int, ...]:
    """Sort key for version directory names."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def table() -> None:
    """Markdown table: one row per version, one column per outcome, C=captured R=reconstructed."""
    cells: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    totals: collections.Counter[str] = collections.Counter()
    for label_path in sorted(CORPUS.glob("*/*.json")):
        label = json.loads(label_path.read_text(encoding="utf-8"))
        kind = label["provenance"]["kind"]
        cells[(label["vllm_version"], label["expected"]["kind"])][kind] += 1
        totals[kind] += 1
    versions = sorted({v for v, _ in cells}, key=vkey, reverse=True)
    outcomes = sorted({o for _, o in cells})
    print("| version | " + " | ".join(outcomes) + " |")
    print("|---" * (len(outcomes) + 1) + "|")
    for v in versions:
        row = []
        for o in outcomes:
            c = cells.get((v, o), collections.Counter())
            parts = [
                f"{c['captured']}C" if c["captured"] else "",
                f"{c['reconstructed']}R" if c["reconstructed"] else "",
            ]
            row.append(" ".join(p for p in parts if p) or "·")
        print(f"| {v} | " + " | ".join(row) + " |")
    print(f"\ncaptured: {totals['captured']}, reconstructed: {totals['reconstructed']}")


def main(argv: list[str]) -> int:
    """Print the table, or with ``--write`` put it into corpus/README.md."""
    if argv != ["--write"]:
        table()
        return 0
    buf = io.StringIO()
    with redirect_stdout(buf):
        table()
    readme = CORPUS / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, end = "<!-- table -->\n", "<!-- /table -->"
    if start not in text or end not in text:
        print(f"{readme}: no {start.strip()} ... {end} markers", file=sys.stderr)
        return 2
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(head + start + buf.getvalue() + end + tail, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
