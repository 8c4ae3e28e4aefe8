"""Benchmark: `corpus mine` over a fleet-sized folder, one process against every core.

Run: python bench/bench_mine.py [--files 10000] [--jobs N]

The corpus logs are copied, round robin, to `--files` files in a temporary folder
(nested 100 to a folder, as a fleet's saved logs are), then mined once on one
process and once on every core. Not a timed test: the numbers depend on the
machine and its load. What it shows: logs/s on one core, on all of them, and
their ratio (how well the pool scales), and that every copy was classified the
same way both times. On a shared machine the wall-clock rate depends on the
neighbours; logs per CPU-second (this process and its workers) does not, and
times the core count bounds what idle cores give.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

from vllm_bootdiag.release import mine

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"


def fleet(dest: Path, n: int) -> int:
    """`n` copies of the corpus logs under `dest`; their total size in bytes."""
    logs = sorted(CORPUS.glob("*/*.log"))
    size = 0
    for i in range(n):
        src = logs[i % len(logs)]
        folder = dest / f"host{i // 100:03d}"
        folder.mkdir(exist_ok=True)
        shutil.copyfile(src, folder / f"{i:05d}-{src.name}")
        size += src.stat().st_size
    return size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        size = fleet(Path(d), args.files)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{args.files:,} logs, {size / 2**20:.0f} MiB, cores: {os.cpu_count()}, load: {load}")
        one = mine.mine([d], workers=1)
        all_ = mine.mine([d], workers=args.jobs)
        for name, m in (("1 process", one), (f"{args.jobs} processes", all_)):
            per_cpu = m.files / m.cpu_seconds
            print(
                f"{name:<12} {m.rate:7,.0f} logs/s wall ({m.seconds:.2f} s); "
                f"{per_cpu:7,.0f} logs per CPU-second ({m.cpu_seconds:.2f} CPU-s)"
            )
        print(f"ratio (wall): {all_.rate / one.rate:.2f}x")
        print(
            f"on {args.jobs} idle cores at this CPU cost: "
            f"{args.jobs * all_.files / all_.cpu_seconds:,.0f} logs/s"
        )
        assert one.files == all_.files == args.files
        assert one.kinds == all_.kinds, "the pool must classify like one process"
        top = all_.ranked()[:3]
        print("top groups:", *(f"{g.count:>6}  {g.pattern[:70]}" for g in top), sep="\n  ")


if __name__ == "__main__":
    main()
