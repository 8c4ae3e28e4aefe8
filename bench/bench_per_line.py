"""Benchmark: classify's cost per line of a corpus tail, as a ratio to a worker's usual
regex list (tools/regex_baseline.py) measured in the same run, and BootWatcher.feed.

Run: python bench/bench_per_line.py [--against DIR] [--repeat 7]

Every corpus log is read as a worker keeps it (its last 400 lines). `classify` runs
over each tail; `usual()` (the handful of case-insensitive patterns over the joined
text that workers grep with) runs over the same tails, in the same process, so the
ratio holds whatever the machine's load. BootWatcher feeds every corpus log line by
line: once with its report (one diagnosis per log, as a worker gets it) and once
over the lines before the report only (the per-line cost of watching a boot).

`--against DIR` measures the same in a subprocess that imports vllm_bootdiag from
DIR (an export of an older commit: `git archive cb3e784 vllm_bootdiag | tar -x -C DIR`),
on the same tails, alternating runs with this checkout: the before/after of a
change as ratios in one run. Not a timed test: absolute figures depend on the
machine; the ratios are the result.

`--instructions` counts instead what one warm pass of classify over every tail executes,
under valgrind (cachegrind; about 20 s per package), for this checkout and `--against`'s:
a count that neighbours on a shared machine do not change, where timings vary 2x. It is
not time: a pass over a text already in cache costs fewer cycles than one that is not,
and this workload's time ran about 15% above its instruction ratio (see README).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def corpus_tails() -> list[list[str]]:
    """Every corpus log's last 400 lines, read as the file reader reads them."""
    from vllm_bootdiag import corpus, logtail

    return [logtail.read_tail(e.log_path) for e in corpus.entries(ROOT / "corpus")]


def before_report(tails: list[list[str]]) -> list[list[str]]:
    """Each tail up to the line that makes BootWatcher.feed report (the whole tail if none):
    the lines a worker streams while the boot is still going."""
    from vllm_bootdiag import BootWatcher

    before: list[list[str]] = []
    for tail in tails:
        w = BootWatcher()
        cut = len(tail)
        for n, line in enumerate(tail):
            if w.feed(line) is not None:
                cut = n
                break
        before.append(tail[:cut])
    return before


def measure(tails: list[list[str]], before: list[list[str]], repeat: int) -> dict[str, float]:
    """Seconds (best of `repeat`) for usual(), classify and BootWatcher over `tails`
    (and `before`, see before_report), with whichever vllm_bootdiag this interpreter
    imports."""
    import vllm_bootdiag

    sys.path.insert(0, str(ROOT / "tools"))
    from regex_baseline import usual

    classify, watcher = vllm_bootdiag.classify, vllm_bootdiag.BootWatcher

    def feed(lines: list[str]) -> None:
        f = watcher().feed
        for line in lines:
            f(line)

    out = dict.fromkeys(("usual", "classify", "watch", "watch_before"), 0.0)
    clock = time.perf_counter
    for tail, early in zip(tails, before, strict=True):
        # Per tail, each case's best of `repeat`, interleaved: a burst of load on a shared
        # machine spoils a few short runs, not a whole case.
        cases = (("usual", usual, tail), ("classify", classify, tail), ("watch", feed, tail),
                 ("watch_before", feed, early))  # fmt: skip
        best = dict.fromkeys(out, float("inf"))
        for _ in range(repeat):
            for name, fn, arg in cases:
                t0 = clock()
                fn(arg)
                best[name] = min(best[name], clock() - t0)
        for name in out:
            out[name] += best[name]
    out["lines"] = float(sum(map(len, tails)))
    out["lines_before"] = float(sum(map(len, before)))
    return out


def _print(name: str, m: dict[str, float]) -> None:
    n, nb = m["lines"], m["lines_before"]
    print(
        f"{name}: classify {m['classify'] * 1e6 / n:.2f} us/line, "
        f"usual regex list {m['usual'] * 1e6 / n:.2f} us/line, "
        f"classify/usual {m['classify'] / m['usual']:.2f}"
    )
    usual = m["usual"] / n
    print(
        f"{name}: BootWatcher.feed {n / m['watch'] / 1e3:.0f}k lines/s with its reports, "
        f"{nb / m['watch_before'] / 1e3:.0f}k lines/s before them ({nb:.0f} lines); "
        f"per line {m['watch_before'] / nb / usual:.2f}x the regex list's per line"
    )


_COUNTED = """
import json, sys
tails = json.load(open(sys.argv[1]))[0]
from vllm_bootdiag import classify
for _ in range(5):  # warm: each model that a pass builds twice has its validator by now
    for t in tails: classify(t)
for _ in range(int(sys.argv[2])):
    for t in tails: classify(t)
"""


def instructions(root: Path, tails_file: Path) -> float:
    """Instructions of one warm classify pass over the tails, importing from `root`: two
    runs under cachegrind (one pass and three after the warm-up), their difference halved.
    The warm-up is five passes: a model's validator is built once, at its ninth build
    (`quick_build.WARM_BUILDS`), and after one pass of warm-up that build fell in the
    passes counted for the kinds that 3 or 4 corpus tails give (4 M of 485 M a pass)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    run = [sys.executable, "-c", _COUNTED, str(tails_file)]
    counts = [cachegrind_refs([*run, str(passes)], env, tails_file.parent) for passes in (1, 3)]
    return (counts[1] - counts[0]) / 2


def cachegrind_refs(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> int:
    """The instructions `argv` executes under valgrind's cachegrind (hash seed fixed, so two
    runs of one program execute alike)."""
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
           *argv]  # fmt: skip
    env = {**env, "PYTHONHASHSEED": "0"}
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    if r.returncode or not m:
        raise SystemExit(f"valgrind failed on {argv[-3:]}: {r.stderr[-300:]}")
    return int(m[1].replace(",", ""))


def _count(tails: list[list[str]], against: Path | None) -> None:
    lines = sum(map(len, tails))
    with tempfile.TemporaryDirectory() as d:
        tails_file = Path(d) / "tails.json"
        tails_file.write_text(json.dumps([tails]))
        now = instructions(ROOT, tails_file)
        print(f"now: {now / 1e6:.1f} M instructions a pass, {now / lines:,.0f} a line")
        if against is not None:
            then = instructions(against.resolve(), tails_file)
            print(f"then ({against}): {then / 1e6:.1f} M instructions a pass, "
                  f"{then / lines:,.0f} a line")
            print(f"now/then: classify {now / then:.3f}x the instructions")


def _worker(tails_file: str, repeat: int) -> None:
    tails, before = json.loads(Path(tails_file).read_text())
    print(json.dumps(measure(tails, before, repeat)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", type=Path, help="a directory holding an older vllm_bootdiag/")
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--rounds", type=int, default=3, help="alternations with --against")
    p.add_argument("--instructions", action="store_true", help="count instructions (valgrind)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        _worker(args.worker, args.repeat)
        return
    tails = corpus_tails()
    if args.instructions:
        print(f"{len(tails)} corpus tails, {sum(map(len, tails)):,} lines")
        _count(tails, args.against)
        return
    before = before_report(tails)  # this checkout's: the same lines for both with --against
    print(f"{len(tails)} corpus tails, {sum(map(len, tails)):,} lines")
    if args.against is None:
        _print("this checkout", measure(tails, before, args.repeat))
        return
    with tempfile.TemporaryDirectory() as d:
        tails_file = Path(d) / "tails.json"
        tails_file.write_text(json.dumps([tails, before]))
        env = {**os.environ, "PYTHONPATH": str(args.against.resolve())}
        cmd = [sys.executable, __file__, "--worker", str(tails_file), "--repeat", str(args.repeat)]
        now: list[dict[str, float]] = []
        then: list[dict[str, float]] = []
        for _ in range(args.rounds):  # alternated, so a burst of load hits both alike
            out = subprocess.run(cmd, env=env, cwd=d, check=True, capture_output=True, text=True)
            then.append(json.loads(out.stdout))
            now.append(measure(tails, before, args.repeat))
    base = {k: min(r[k] for r in then) for k in then[0]}
    cur = {k: min(r[k] for r in now) for k in now[0]}
    _print(f"then ({args.against})", base)
    _print("now", cur)

    def rel(key: str) -> float:
        """now/then of `key` as a ratio to the regex list, each round's, the median."""
        return statistics.median(
            (a[key] / a["usual"]) / (b[key] / b["usual"]) for a, b in zip(now, then, strict=True)
        )

    print(
        f"now/then, as ratios to the regex list in the same process (median of "
        f"{args.rounds} rounds): classify {rel('classify'):.2f}x the time, "
        f"BootWatcher.feed {rel('watch_before'):.2f}x the time per line"
    )


if __name__ == "__main__":
    main()
