"""Benchmark: what each text stage of `classify` costs, per corpus tail and on 400-line
x 16 KB tails (the issue's bound: no such tail over 50 ms through `classify`).

Run: python bench/bench_text_stages.py [--repeat 9] [--shapes-only]

Stages, in the order the pipeline runs them: reading a list into the tail
(`pipeline._lines`), the clean-tail check (`damage_check.damaged`), the per-line
repairs where it finds damage, the rejoin of wrapped rows, triage (`Tail`) and the
words `match` reads (`Tail.words`), the check and triage as the pipeline runs them (one
`Joined` whose colour codes they strip once, `damaged + Tail`); `classify` is the whole.
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
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vllm_bootdiag import classify, corpus, logtail, pipeline, timeline  # noqa: E402
from vllm_bootdiag.text import damage_check, normalize  # noqa: E402
from vllm_bootdiag.text.joined import Joined  # noqa: E402
from vllm_bootdiag.text.triage import Tail, words_of  # noqa: E402

K = logtail.MAX_LINE_CHARS
RUNS = {"█": "█" * K, "space": " " * K, "9": "9" * K, "(": "(" * K, "`": "`" * K,
        "-": "-" * K, "01-": "01-" * (K // 3), "INFO 01-": "INFO 01-" * (K // 8),
        "x": "x" * K}  # fmt: skip
"""Runs a 16 KB line can be made of: tests/test_rule_linear.py's, and the characters the
text stages' patterns key on (dashes of a timestamp, a record's level)."""
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
    tail = Tail(texts, timeline.progress_key, None, timeline.MESSAGE_STARTS)

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
        "Tail.words": lambda: words_of(tail.other_text),
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--shapes-only", action="store_true")
    args = p.parse_args()
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
