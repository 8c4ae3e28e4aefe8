"""Benchmark: tail reading cost vs file size, and classification time of a 400-line tail.

Run: python bench/bench_classify.py [--log corpus/0.32.0/<file>.log] [--gib 4]

Not a timed test: numbers depend on the machine. What it shows is the shape: reading the tail
of a 4 GiB log costs what reading it from a small one costs; a tail with fewer newlines than
asked reads at most `lines * MAX_LINE_CHARS` bytes ("capped"); and classifying 400 lines
stays under a millisecond.

Measured (2026-12-01, load ~2.2, one run): the nine 400 x 16 KB shapes 18-42 ms wall, the
slowest the run of block characters (wide characters: every scan reads twice the bytes;
29-32 ms of CPU); records run together 28 ms, 303-430 ms before the paste was cut to its
last 400 records. Then (`bench_text_stages.py --against` main of 19:41, CPU ms, load 3-4,
20:37): runs of `\x1b[0m` 134 -> 28, behind a gutter 214 -> 27; of `^[[` 166 -> 15, 172 ->
17; of bare `ERROR 01-02 03:04:05 [` stamps 311 -> 55, 239 -> 44 (of the 55, ~20 is
triage's scan reading each line's unclosed `[` a character at a time); every other
shape 14-41. Then (CPU best of 15, A/B against 1916dc7 in one run, load ~6, 23:45): `]`
then bare stamps 50 -> 24 ms (of its 48: the rejoin's error tests 15, the check's five
level scans 6, the dash count 2, `.py:` 3.5); runs of `\r` 197 -> 8 and codes left open
(`\x1b[`) 168 -> 19 (both new here); every other shape 0.75-1.13x (noise at that load),
the slowest random codes at 43-44 ms (one `sub` of a 16 KB run of codes a line).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from vllm_bootdiag import classify, logtail

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LOG = ROOT / "corpus" / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


def _best_of(fn, repeat: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def bench_tail(log: Path, gib: float) -> None:
    data = log.read_bytes()
    repeats = 400 // max(data.count(b"\n"), 1) + 1
    with tempfile.TemporaryDirectory() as d:
        small = Path(d) / "small.log"
        small.write_bytes(data * repeats)
        big = Path(d) / "big.log"
        with big.open("wb") as f:
            f.truncate(int(gib * 2**30))  # sparse: no disk used, but a real multi-GB size
            f.seek(0, os.SEEK_END)
            f.write(data * repeats)
        worst = Path(d) / "worst.log"  # the tail has fewer than 400 newlines: read is capped
        with worst.open("wb") as f:
            f.truncate(int(gib * 2**30))
            f.seek(0, os.SEEK_END)
            f.write(data)
        for name, p in (("small", small), (f"{gib:g} GiB", big), ("capped", worst)):
            best, med = _best_of(lambda p=p: logtail.read_tail(p, 400), 20)
            print(
                f"read_tail 400 lines, {name:>8} file ({p.stat().st_size:>13,} bytes): "
                f"best {best * 1e3:.3f} ms, median {med * 1e3:.3f} ms"
            )


def _tail_of(log: Path) -> list[str]:
    """The log's last 400 lines, repeated from its start when shorter (a full worker tail)."""
    lines = logtail.read_tail(log, 400)
    while 0 < len(lines) < 400:
        lines = lines[: 400 - len(lines)] + lines
    return lines[-400:]


def bench_classify(log: Path) -> None:
    lines = _tail_of(log)
    n = 200
    best, med = _best_of(lambda: classify(lines), n)
    kind = classify(lines).primary.kind
    print(
        f"classify 400 lines ({sum(map(len, lines)):,} chars) -> {kind}: "
        f"best {best * 1e6:.0f} us, median {med * 1e6:.0f} us over {n} runs"
    )


def bench_corpus(root: Path) -> None:
    """Every corpus log as a 400-line tail: the spread across real shapes."""
    times = []
    for log in sorted(root.glob("*/*.log")):
        lines = _tail_of(log)
        best, _ = _best_of(lambda lines=lines: classify(lines), 30)
        times.append((best, log.parent.name + "/" + log.stem))
    times.sort()
    pick = [times[0], times[len(times) // 2], times[-1]]
    print(
        f"classify every corpus log ({len(times)}) as a 400-line tail: "
        + ", ".join(
            f"{label} {t * 1e6:.0f} us ({name})"
            for label, (t, name) in zip(("fastest", "median", "slowest"), pick, strict=False)
        )
    )


def bench_big_input(log: Path) -> None:
    """classify(list) and classify(str) of a huge log cost what its tail costs: the input
    is cut before any work. Printed as ratios to the 400-line tail, in one run."""
    tail = _tail_of(log)
    big = tail * 2500  # 1M lines
    text, big_text = "\n".join(tail), "\n".join(big)
    base_l, _ = _best_of(lambda: classify(tail), 20)
    big_l, _ = _best_of(lambda: classify(big), 5)
    base_s, _ = _best_of(lambda: classify(text), 20)
    big_s, _ = _best_of(lambda: classify(big_text), 5)
    print(
        f"classify of {len(big):,} lines vs 400: list {big_l / base_l:.1f}x, "
        f"str ({len(big_text) / 2**20:.0f} MiB) {big_s / base_s:.1f}x the tail's cost"
    )


_ROUTE = "(APIServer pid=1) INFO 11-29 16:19:50 [launcher.py:46] Route: /v1/models, Methods: GET "


_MIXED = "\x1b[1m\x1b[0;36m\x1b[32m\x1b[0m"
_CODES = ("\x1b[1m", "\x1b[0;36m", "\x1b[32m", "\x1b[0m", "\x1b[2K", "\x1b[1;31m", "\x1b[?25l")


def _random_codes() -> list[str]:
    """400 different 16 KB lines of colour and cursor codes in a seeded random order."""
    rng = random.Random(7)
    return ["".join(rng.choices(_CODES, k=3000))[:16384] for _ in range(400)]


def adversarial_shapes() -> dict[str, list[str]]:
    """The issue's bound: no tail of <= 400 lines x 16 KB over 50 ms. Every run of
    tests/test_rule_linear.py after a record, and every corpus line padded with one of
    them to 16 KB, 400 lines of each shape; the same behind a CI gutter (every repair step
    runs), and a paste that lost its newlines (each line 188 records run together: 75,200
    records, of which, as of the same records with their newlines, the last 400 are read)."""
    runs = ["█" * 16384, " " * 16384, "9" * 16384, "(" * 16384, "`" * 16384]
    lines = [f"(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] {r}" for r in runs]
    lines += [f"(EngineCore pid=2) ERROR 11-29 16:20:31 [core.py:1] {r}" for r in runs]
    corpus_line = _tail_of(DEFAULT_LOG)[-1]
    return {
        **{f"{r[0]!r} run": [f"{pre}{r}"[:16384] for pre in (lines[0][:60], lines[5][:52])] * 200
           for r in runs},
        "corpus lines + 16 KB": [(line + " " + runs[k % 5])[:16384]
                                 for k, line in enumerate(_tail_of(DEFAULT_LOG))],
        "one record, 16 KB message": [corpus_line[:60] + "x" * 16324] * 400,
        "behind a CI gutter": [("  | " + line + " " + runs[k % 5])[:16384]
                               for k, line in enumerate(_tail_of(DEFAULT_LOG))],
        "records run together": [(_ROUTE * 200)[:16384]] * 400,
        # runs of what a prefix or a repair keys on, bare and behind a gutter
        **{f"{r[:8]!r} runs{' behind a gutter' if pre else ''}": [pre + (r * 8192)[:16380]] * 400
           for r in ("\x1b[0m", "> ", "Error: ", "^[[", "ERROR 01-02 03:04:05 [")
           for pre in ("", "  | ")},
        # runs of mixed colour codes, of stamps closed once, led by `]`, of `INFO` stamps,
        # of a frame's `  File "` and of quote markers (16 KB, or one past it: cut)
        "mixed codes": [("\x1b[1m\x1b[0;36m\x1b[32m\x1b[0m" * 700)[:16384]] * 400,
        "mixed codes, each line shifted": [(_MIXED * 820)[k % 17 : 16384 + k % 17]
                                           for k in range(400)],
        "random codes": _random_codes(),
        "stamps+]": ["ERROR 01-02 03:04:05 [" * 745 + "]"] * 400,
        "]stamps": ["]" + ("ERROR 01-02 03:04:05 [" * 745)[:16383]] * 400,
        "INFO stamps": [("INFO 01-02 03:04:05 [" * 780)[:16384]] * 400,
        "'  File \"' runs": [('  File "' * 2100)[:16384]] * 400,
        "quote >": ["> " * 8192] * 400,
        # carriage returns (a redraw per character) and codes left open (`\x1b[`, no letter)
        "'\\r' runs": ["\r" * 16384] * 400,
        "open codes": ["\x1b[" * 8192] * 400,
    }  # fmt: skip


def bench_adversarial() -> None:
    """The slowest 16 KB adversarial line (tests/test_rule_linear.py's runs) through
    classify, as a ratio to a plain 400-line tail: linear patterns keep it near 1."""
    runs = ["█" * 16384, " " * 16384, "9" * 16384, "(" * 16384, "`" * 16384]
    lines = [f"(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] {r}" for r in runs]
    lines += [f"(EngineCore pid=2) ERROR 11-29 16:20:31 [core.py:1] {r}" for r in runs]
    worst, _ = _best_of(lambda: classify(lines), 5)
    base, _ = _best_of(lambda: classify(_tail_of(DEFAULT_LOG)), 20)
    print(f"classify 10 adversarial 16 KB lines: {worst / base:.1f}x a 400-line corpus tail")
    shapes = adversarial_shapes()
    costs = sorted(
        ((_best_of(lambda t=t: classify(t), 3)[0], name) for name, t in shapes.items()),
        reverse=True,
    )
    print(
        f"classify 400 lines x 16 KB ({len(shapes)} shapes), bound 50 ms: "
        + ", ".join(f"{name} {t * 1e3:.0f} ms" for t, name in costs)
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log", type=Path, default=DEFAULT_LOG)
    p.add_argument("--gib", type=float, default=4.0)
    args = p.parse_args()
    bench_tail(args.log, args.gib)
    bench_classify(args.log)
    bench_corpus(ROOT / "corpus")
    bench_big_input(args.log)
    bench_adversarial()


if __name__ == "__main__":
    main()
