"""Benchmark: `corpus mine` over a fleet-sized folder, one process against every core.

Run: python bench/bench_mine.py [--files 10000] [--jobs N] [--baseline COMMIT] [--repeat R]
                                [--instructions N]

The corpus logs are copied, round robin, to `--files` files in a temporary folder
(nested 100 to a folder, as a fleet's saved logs are), then mined on one process and
on every core, each in a fresh interpreter (as `vllm-bootdiag corpus mine` runs), and,
with `--baseline COMMIT`, by that commit's package too (extracted with `git archive`),
interleaved, so before and after come from one run. Not a timed test: the numbers
depend on the machine and its load. What it shows: logs/s on one core and on all of
them, and that every run classified the copies alike. On a shared machine the
wall-clock rate depends on the neighbours; logs per CPU-second (the miner and its
workers) does not, and times the core count bounds what idle cores give.
`--instructions N` also counts, under valgrind, the instructions one process executes
per log once warm (mining 2N copies less mining N, so start-up and first-use costs
cancel): a per-log cost that no neighbour's load changes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"

MINE = """
import json, sys
from vllm_bootdiag.release import mine
m = mine.mine([sys.argv[1]], workers=int(sys.argv[2]))
top = [(g.count, g.pattern) for g in m.ranked()[:3]]
print(json.dumps({"files": m.files, "seconds": m.seconds, "cpu": m.cpu_seconds,
                  "kinds": dict(m.kinds), "top": top}))
"""


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


def _extract(commit: str, dest: Path) -> Path:
    """The package as it was at `commit`, in `dest` (importable from there)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "vllm_bootdiag"],
                             check=True, capture_output=True).stdout  # fmt: skip
    dest.mkdir()
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _mine(package: Path, folder: Path, workers: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(package)}
    argv = [sys.executable, "-c", MINE, str(folder), str(workers)]
    out = subprocess.run(argv, env=env, cwd=package, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _instructions(package: Path, folder: Path) -> int:
    """Instructions one process executes to mine `folder`, counted by valgrind."""
    env = {**os.environ, "PYTHONPATH": str(package), "PYTHONHASHSEED": "0"}
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
            "-c", MINE, str(folder), "1"]  # fmt: skip
    r = subprocess.run(argv, env=env, cwd=package, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode or not m:
        raise SystemExit(f"valgrind failed: {r.stderr[-300:]}")
    return int(m[1])


def _per_log(packages: dict[str, Path], tmp: Path, n: int) -> None:
    some, more = tmp / "some", tmp / "more"
    some.mkdir()
    more.mkdir()
    fleet(some, n)
    fleet(more, 2 * n)
    print(f"instructions per log once warm (valgrind, 1 process, {2 * n} logs less {n}):")
    for name, package in packages.items():
        per = (_instructions(package, more) - _instructions(package, some)) / n
        print(f"  {name:20} {per / 1e6:6.2f} M")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--baseline", metavar="COMMIT", help="also mine with this commit's package")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each case (the best is kept)")
    ap.add_argument("--instructions", type=int, metavar="N", help="count instructions per log")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "fleet"
        folder.mkdir()
        size = fleet(folder, args.files)
        packages = {"now": ROOT}
        if args.baseline:
            packages[f"@{args.baseline}"] = _extract(args.baseline, Path(tmp) / "baseline")
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"{args.files:,} logs, {size / 2**20:.0f} MiB, cores: {os.cpu_count()}, load: {load}")
        cases = [(name, w) for w in sorted({1, args.jobs}) for name in packages]
        best: dict[tuple[str, int], dict[str, Any]] = {}
        for _ in range(args.repeat):  # interleaved, so a burst of load hits every case alike
            for name, w in cases:
                r = _mine(packages[name], folder, w)
                if (name, w) not in best or r["seconds"] < best[name, w]["seconds"]:
                    best[name, w] = r
        print(f"{'':22} {'logs/s':>8} {'seconds':>8} {'logs/CPU-s':>11} {'on idle cores':>14}")
        for name, w in cases:
            r = best[name, w]
            per_cpu = r["files"] / r["cpu"]
            label = f"{name}, {w} process{'es' if w > 1 else ''}"
            print(f"{label:22} {r['files'] / r['seconds']:8,.0f} {r['seconds']:8.2f} "
                  f"{per_cpu:11,.0f} {w * per_cpu:14,.0f}")  # fmt: skip
        for name in packages:
            one, every = best[name, 1], best[name, args.jobs]
            print(f"{name}: {args.jobs} processes / 1 (wall): "
                  f"{one['seconds'] / every['seconds']:.2f}x")  # fmt: skip
        assert all(r["files"] == args.files for r in best.values())
        for name in packages:
            assert best[name, 1]["kinds"] == best[name, args.jobs]["kinds"], (
                f"{name}: the pool must classify like one process"
            )
        if len({json.dumps(r["kinds"], sort_keys=True) for r in best.values()}) > 1:
            print("note: the baseline's rule table classifies some copies differently")
        top = best["now", args.jobs]["top"]
        print("top groups:", *(f"{c:>6}  {p[:70]}" for c, p in top), sep="\n  ")
        if args.instructions:
            _per_log(packages, Path(tmp), args.instructions)


if __name__ == "__main__":
    main()
