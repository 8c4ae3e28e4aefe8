"""Compare a serving worker's usual regex list with vllm_bootdiag on the corpus.

The list below is our own rendering of the common approach (a handful of
case-insensitive patterns over the last 400 lines, first match wins, the answer
a string or None), not copied from any worker. Run from the repository root:

    python tools/regex_baseline.py            # a markdown table for the README
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vllm_bootdiag import corpus, engine, logtail

USUAL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"CUDA out of memory|OutOfMemoryError", "oom"),
    (r"No available memory for the cache blocks", "kv_cache"),
    (r"larger than the available KV cache memory", "kv_cache"),
    (r"maximum number of tokens that can be stored in KV cache", "kv_cache"),
    (r"less than desired GPU memory utilization", "gpu_busy"),
)


def usual(lines: list[str]) -> str | None:
    """What the regex-list approach answers for a tail."""
    text = "\n".join(lines)
    for pattern, answer in USUAL_PATTERNS:
        if re.search(pattern, text, re.IGNORECASE):
            return answer
    return None


def main() -> int:
    rows = []
    for entry in corpus.entries(Path(__file__).resolve().parent.parent / "corpus"):
        lines = logtail.read_tail(entry.log_path)
        d = engine.classify(lines)
        rows.append((entry.id, entry.label.provenance.kind, usual(lines), d.primary.kind))
    failures = [r for r in rows if r[3] != "booted"]
    missed = [r for r in failures if r[2] is None]
    print("| log | provenance | regex list says | vllm_bootdiag says |")
    print("|---|---|---|---|")
    for log_id, prov, old, new in rows:
        print(f"| `{log_id}` | {prov} | {old or '**None**'} | `{new}` |")
    print()
    named = sum(r[3] != "unknown" for r in failures)
    print(f"{len(missed)} of {len(failures)} failure logs get no answer from the regex list; "
          f"vllm_bootdiag names the cause of {named} of {len(failures)} (the rest are labelled "
          "unknown, and it points at their last error line).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
