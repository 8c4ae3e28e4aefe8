"""Benchmark: what importing the package and starting the CLI cost, as ratios to
`python -c "import pydantic"` measured in the same run.

Run: python bench/bench_startup.py [--runs 15]

Every figure is the wall time of a fresh interpreter (minimum and median of --runs), with
bytecode compiled first, as an installed package has it. Absolute times depend on the
machine and its load; the ratios are the result. Targets (issue 10): `import vllm_bootdiag`
plus a classify-ready engine within about 150 ms, `vllm-bootdiag classify LOG` within about
250 ms, which is roughly 1.5x and 2.5x pydantic's own import on a quiet machine.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "corpus" / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"

CASES: list[tuple[str, list[str]]] = [
    ("python -c pass", ["-c", "pass"]),
    ("import pydantic", ["-c", "import pydantic"]),
    ("import vllm_bootdiag", ["-c", "import vllm_bootdiag"]),
    ("import + engine ready", ["-c", "import vllm_bootdiag; vllm_bootdiag.classify"]),
    ("cli --version", ["-m", "vllm_bootdiag", "--version"]),
    ("cli classify LOG", ["-m", "vllm_bootdiag", "classify", str(LOG)]),
    ("cli classify LOG --json", ["-m", "vllm_bootdiag", "classify", str(LOG), "--json"]),
    ("cli rules", ["-m", "vllm_bootdiag", "rules"]),
    ("cli plan LOG", ["-m", "vllm_bootdiag", "plan", str(LOG)]),
]


def _wall(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    runs = ap.parse_args().runs
    compileall.compile_dir(ROOT / "vllm_bootdiag", quiet=1)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times: dict[str, list[float]] = {name: [] for name, _ in CASES}
    for _ in range(runs):  # interleaved, so a burst of load hits every case alike
        for name, args in CASES:
            times[name].append(_wall(args, env))
    base = min(times["import pydantic"])
    print(f"{runs} runs each; ratio = minimum / minimum of `import pydantic`")
    print(f"{'':26} {'min ms':>8} {'median ms':>10} {'ratio':>6}")
    for name, _ in CASES:
        t = times[name]
        print(f"{name:26} {min(t) * 1e3:8.0f} {statistics.median(t) * 1e3:10.0f} "
              f"{min(t) / base:6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
