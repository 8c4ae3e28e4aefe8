"""Benchmark: redaction is linear in its input, on the runs a hostile log can hold.

Run: python bench/bench_redact.py

For each repeated fragment (hyphenated words, dotted names, glued paths, addresses,
secrets) it redacts a 4 KB and a 16 KB line and prints the time ratio: a linear pattern
set shows about 4x, a quadratic one 16x. The ratios, not the times, are the result.
"""

from __future__ import annotations

import time

from vllm_bootdiag.redact import redact

FRAGMENTS = [
    "a", "a-", "a.", "1.", "a@", "/a", "~", "a:", "0", "a.b-", "x://", "=a", "A_", "/home/a",
    "@a.", "AKIA", "password=", "http://a", "com.", "co.", "a.com ", "a.com.", "/lib/python3.1/",
    "a/lib/", "ip-1-2-3-4.", "1.2.3.", "1.2.3.4.", "::", "a::", "00:1a:", "u@a.com", "\x1b[0m",
    "HF_TOKEN=", "A_TOKEN=a ", "Bearer ", "'password': '", '"x"',
]  # fmt: skip


def _time(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        redact(text)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    rows = []
    for frag in FRAGMENTS:
        small = _time(frag * (4096 // len(frag)))
        big = _time(frag * (16384 // len(frag)))
        rows.append((big / small, frag))
    print("16 KB / 4 KB time ratio per fragment (linear ~4, quadratic ~16), worst first:")
    for ratio, frag in sorted(rows, reverse=True):
        print(f"  {ratio:5.1f}  {frag!r}")


if __name__ == "__main__":
    main()
