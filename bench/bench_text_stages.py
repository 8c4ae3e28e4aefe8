"""Benchmark: what each text stage of `classify` costs, per corpus tail and on 400-line
x 16 KB tails (the issue's bound: no such tail over 50 ms through `classify`).

Run: python bench/bench_text_stages.py [--repeat 9] [--shapes-only] [--against DIR]

`--against DIR` (DIR from `git archive <commit> vllm_bootdiag | tar -x -C DIR`) times
classify on every shape here and in bench_classify.py, and over the corpus tails, with
DIR's package and this one's, alternating in subprocesses: before/after in one run.

Stages, in the order the pipeline runs them: reading a list into the tail
(`pipeline._lines`), the clean-tail check (`damage_check.damaged`), the per-line
repairs where it finds damage, the rejoin of wrapped rows, triage (`Tail`), the check and
triage as the pipeline runs them (one `Joined` whose colour codes they strip once,
`damaged + Tail`); `classify` is the whole.
Each figure is the best of `--repeat` runs per tail, summed (and apart for the coloured
tails, where the shared strip counts): absolute times depend on the machine, so compare
stages and shapes within one run (bench_per_line.py gives the ratios to a worker's
regex list and to an older commit).

Measured on a shared 2-core machine (2026-12-01, one run): per corpus tail, before this
round's text changes (ab3e55a) / after: _lines 11 / 7 us, damaged 127 / 79, normalize 165 /
109, Tail 69 / 63, Tail.words 21 / 8. 400 x 16 KB: every clean shape 13-37 ms in
`damaged`; behind a CI gutter `normalize` 7-25 ms where a run of parentheses cost 990 ms
and one of `INFO 01-` 300 ms. `Tail` is 23-43 ms on runs of spaces or block characters,
nearly all of it `timeline.progress_key`'s banner pattern on each 16 KB message.
Then (fd84ec3, one colour-code strip shared), on the 38 coloured corpus tails: `damaged`
118 + `Tail` 98 us apart, 192 us as `damaged + Tail` (the uncoloured: 141 and 138 us).
Then (`--against` ab8df2c, CPU ms, load ~3, 18:40): the newline-less paste 299 -> 28 (the
last 400 of its 75,200 records are read), runs of `[0` after records 132 -> 25, of
`INFO 01-` 50 -> 23, of `File "` 59 -> 29, bare runs 82 -> 32, corpus lines + 16 KB 56 ->
33, a gutter before `INFO 01-02 03:` 80 -> 53, bench_classify's runs 25-32, block
characters after records 46 -> 36 (wide characters double every scan). Against main
less this round's text commits (one run, 18:42): the corpus tails 1.00x, each stage as
before. Then runs of `INFO 01-02 03:` after records 54 -> 26 (their records counted by
the second colon); behind a gutter 52 (split_collapsed's record search stops at each
of their dashes: a stamp's dashes, colons and level all dense).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# `--worker DIR`: the classify costs of an older export in DIR (see `--against`)
_SOURCE = sys.argv[sys.argv.index("--worker") + 1] if "--worker" in sys.argv else str(ROOT)
sys.path.insert(0, _SOURCE)

from vllm_bootdiag import classify, corpus, logtail, pipeline, timeline  # noqa: E402
from vllm_bootdiag.text import damage_check, normalize  # noqa: E402
from vllm_bootdiag.text.joined import Joined  # noqa: E402
from vllm_bootdiag.text.triage import Tail  # noqa: E402

K = logtail.MAX_LINE_CHARS
RUNS = {"█": "█" * K, "space": " " * K, "9": "9" * K, "(": "(" * K, "`": "`" * K,
        "-": "-" * K, "01-": "01-" * (K // 3), "INFO 01-": "INFO 01-" * (K // 8),
        "x": "x" * K, "[0": "[0" * (K // 2), "INFO 01-02 03:": "INFO 01-02 03:" * (K // 14),
        "File \"": 'File "' * (K // 6), "\x1b[0m": "\x1b[0m" * (K // 4), "^[[": "^[[" * (K // 3),
        "ERROR 01-02 03:04:05 [": "ERROR 01-02 03:04:05 [" * (K // 22)}  # fmt: skip
"""Runs a 16 KB line can be made of: tests/test_rule_linear.py's, and the characters the
text stages' patterns key on (dashes and colons of a timestamp, a record's level, a colour
reset's `[0`, a frame's `File "`), and colour codes, caret codes and stamps with no source."""
_INFO = "(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] "
_ERROR = "(EngineCore pid=2) ERROR 11-29 16:20:31 [core.py:1] "


def shapes() -> dict[str, list[str]]:
    """400-line tails of 16 KB lines: each run after a record (clean: no repair runs),
    the same behind a CI gutter (damaged: every per-line step runs), bare runs, and a
    corpus tail's lines padded to 16 KB."""
    tail = logtail.read_tail(
        ROOT / "corpus" / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
    )
    out: dict[str, list[str]] = {}
    for name, run in RUNS.items():
        out[f"records + {name!r}"] = [(pre + run)[:K] for pre in (_INFO, _ERROR)] * 200
        out[f"gutter + {name!r}"] = [("  | " + pre + run)[:K] for pre in (_INFO, _ERROR)] * 200
    out["bare runs"] = [run[:K] for run in RUNS.values()] * (400 // len(RUNS))
    out["corpus lines + 16 KB"] = [
        (line + " " + list(RUNS.values())[k % len(RUNS)])[:K]
        for k, line in enumerate((tail * 9)[:400])
    ]
    return out


def _stages(raw: Sequence[str]) -> dict[str, Callable[[], object]]:
    rows, _ = normalize.normalize_rows(raw, lookahead=False)
    doc = "\n" + "\n".join(raw)
    texts = [r[0] for r in rows]

    def check_and_tail() -> None:
        """As the pipeline runs them: one `Joined`, its colour codes stripped once."""
        joined = Joined(doc)
        clean = not damage_check.damaged(joined)
        Tail(texts, timeline.progress_key, None, timeline.MESSAGE_STARTS,
             joined=joined if clean else None)  # fmt: skip

    return {
        "_lines": lambda: pipeline._lines(list(raw), logtail.DEFAULT_LINES),
        "damaged": lambda: damage_check.damaged(doc),
        "normalize (no rejoin)": lambda: normalize.normalize_rows(raw, lookahead=False),
        "normalize": lambda: normalize.normalize_rows(raw),
        "Tail": lambda: Tail(texts, timeline.progress_key, None, timeline.MESSAGE_STARTS),
        "damaged + Tail": check_and_tail,
        "classify": lambda: classify(list(raw)),
    }


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _all_shapes() -> dict[str, list[str]]:
    """This file's shapes and bench_classify.py's."""
    sys.path.append(str(ROOT / "bench"))
    import bench_classify

    theirs = bench_classify.adversarial_shapes()
    return {**shapes(), **{f"[classify] {k}": v for k, v in theirs.items()}}


def _worker(repeat: int) -> None:
    """CPU seconds (best of `repeat`) of classify on each shape and, summed, on the corpus
    tails, as JSON: CPU time, as the load of a shared machine moves wall times."""
    import vllm_bootdiag

    assert vllm_bootdiag.__file__ is not None and vllm_bootdiag.__file__.startswith(_SOURCE)

    def cpu(raw: list[str], n: int) -> float:
        best = float("inf")
        for _ in range(n):
            t0 = time.process_time()
            classify(list(raw))
            best = min(best, time.process_time() - t0)
        return best

    out = {name: cpu(raw, repeat) for name, raw in _all_shapes().items()}
    tails = [logtail.read_tail(e.log_path) for e in corpus.entries(ROOT / "corpus")]
    out["corpus tails (sum)"] = sum(cpu(raw, 3 * repeat) for raw in tails)
    print(json.dumps(out))


def against(older: Path, rounds: int, repeat: int) -> None:
    """Then (an export of an older commit in `older`) and now, alternating in subprocesses
    on this machine: the ratio holds whatever the load, the absolute times do not."""
    runs: dict[str, list[dict[str, float]]] = {"then": [], "now": []}
    for _ in range(rounds):
        for label, src in (("then", older), ("now", ROOT)):
            cmd = [sys.executable, __file__, "--worker", str(src), "--repeat", str(repeat)]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            runs[label].append(json.loads(done.stdout))
    print(f"classify, CPU ms (best of {repeat}, least of {rounds} rounds): then ({older}) / now")
    for name in runs["now"][0]:
        then = min(r[name] for r in runs["then"] if name in r) * 1e3
        now = min(r[name] for r in runs["now"]) * 1e3
        print(f"  {name:40s} {then:7.1f} {now:7.1f}  {now / then:5.2f}x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--shapes-only", action="store_true")
    p.add_argument("--against", type=Path, help="a directory holding an older vllm_bootdiag/")
    p.add_argument("--rounds", type=int, default=3, help="alternations with --against")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        _worker(min(args.repeat, 5))
        return
    if args.against:
        against(args.against, args.rounds, min(args.repeat, 5))
        return
    if not args.shapes_only:
        tails = [logtail.read_tail(e.log_path) for e in corpus.entries(ROOT / "corpus")]
        total: dict[str, float] = {}
        coloured: dict[str, float] = {}  # the tails with colour codes (most 0.2x logs)
        for raw in tails:
            ansi = any("\x1b" in line for line in raw)
            for name, fn in _stages(raw).items():
                t = _best(fn, args.repeat)
                total[name] = total.get(name, 0.0) + t
                if ansi:
                    coloured[name] = coloured.get(name, 0.0) + t
        n, c = len(tails), sum(any("\x1b" in line for line in raw) for raw in tails)
        print(f"{n} corpus tails, {sum(map(len, tails)) / n:.0f} lines each on average "
              f"(us per tail; the {c} coloured ones apart):")  # fmt: skip
        for name, t in total.items():
            per_coloured = coloured.get(name, 0.0) / max(c, 1)
            print(f"  {name:22s} {t / n * 1e6:7.1f}   {per_coloured * 1e6:7.1f}")
    print("400 lines x 16 KB (ms; bound 50 ms for classify):")
    for shape, raw in shapes().items():
        cost = {name: _best(fn, 3) for name, fn in _stages(raw).items()}
        print(f"  {shape:26s} " + "  ".join(f"{k} {v * 1e3:.1f}" for k, v in cost.items()))


if __name__ == "__main__":
    main()
