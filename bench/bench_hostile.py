"""Benchmark: classify on hostile 16 KB rows of every short repeated unit, after six heads.

Run: python bench/bench_hostile.py [--limit-ms 50] [--rows 400] [--repeat 3] [--units UNIT ...]
     [--all] [--shapes-only] [--heads HEAD ...]      (~1 min; --all with --rows 40: a few minutes)

bench_classify.py times 27 chosen 400 x 16 KB shapes; this one sweeps what nobody chose.
Every row is one short unit repeated to 16 KB (each row shifted and numbered, so no two rows
of a tail are equal), alone or in the place a real line puts a message: after an ERROR
record, after a Python exception line, inside an ERROR record, inside one a code block indented
(the `indented` step takes the indent off first), inside a tagged record. The
units are every character of a set of 44 that patterns stop at (letters of both cases,
digits, punctuation, blanks, a block character, an accented letter, ESC), every pair of
them (--all; ~8,000 cases: minutes with --rows 40), and ~60 longer pieces of vLLM's own lines
(record heads, tags, frames, colour codes, exception names).

Each case is classified once warm and then timed (CPU time, the best of --repeat), at the
real 400 rows: the figure issue 10 bounds at 50 ms. `--rows 40` times 40 rows and scales
by 10, a quick sweep that overstates what a tail pays once (a collapsed row cut into 745
lines fills the 400 kept alone; boots searches the whole text of a tail under 1 MB) and
cannot see a cost that grows across rows. The multi-line shapes (SHAPES) are built at
their real row count and timed whole. A pattern that backtracks on
a unit shows as seconds. Not a timed test: the figures are the machine's; the worst cases
and the count over the limit are the result.
"""

from __future__ import annotations

import argparse
import itertools
import re
import time
from collections.abc import Callable

from vllm_bootdiag import classify

CHARS = [*"Aa0.,:;-_()[]{}<>'\"`~^|/\\=+*?!@#%& \t", "█", "é", "\x1b"]
PIECES = [
    "A.b", "a. ", "Error: ", "INFO ", 'File "', "  File ", "pid=1) ", "(a pid=1) ", "01-02 ",
    "03:04:05 ", "[a.py:1] ", "\x1b[0m", "^[[", "> ", "| ", "    ",
    "Traceback (most recent call last)", "usage: ", "ERROR:     ", "a.b.c", "A1.", "Aa.", "_a.",
    "A_.", "a:", "Error", "Exception ", "%|",
    "it/s]", "s/it]", "pid=", "(a)", "[rank0]:", "W1129 ", '{"log":"', "\\n", "0;", "[0", ";0m",
    "Ab", "e.g. ", "1.0 ", "v0.", "0.1", "E ", "Ab ", "AbError ", "a.Error", "ValueError: ",
    "Error: a", ": error: ", "INFO 01-02 03:04:05 [", "ERROR 01-02 03:04:05 [", "]", "] ",
    "a.py:1", ".py:", "(APIServer pid=1) ", "█ ", "▀▄", "\u00a0", "é ", "Ab.", "AB", "aB", "A-",
    "A_", "a_", "aError.", "rError.", "Errorr.", "Err.",
]  # fmt: skip
WIDTH = 16_384


def _row(unit: str, i: int) -> str:
    run = unit * (WIDTH // len(unit) + 1)
    return run[i % len(unit) :][: WIDTH - 16] + f" {i}"


HEADS: dict[str, Callable[[str, int], list[str]]] = {
    "alone": lambda u, n: [_row(u, i) for i in range(n)],
    "after_error": lambda u, n: [
        x for i in range(n // 2) for x in ("ERROR 01-02 03:04:05 [a.py:1] boom", _row(u, i))
    ],
    "after_exc": lambda u, n: [x for i in range(n // 2) for x in ("ValueError: boom", _row(u, i))],
    "in_record": lambda u, n: ["ERROR 01-02 03:04:05 [a.py:1] " + _row(u, i) for i in range(n)],
    "indented": lambda u, n: ["    ERROR 01-02 03:04:05 [a.py:1] " + _row(u, i) for i in range(n)],
    "tagged": lambda u, n: [
        "(EngineCore_DP0 pid=1) ERROR 01-02 03:04:05 [a.py:1] " + _row(u, i) for i in range(n)
    ],
}


def _pydantic(rows: int) -> list[str]:
    """pydantic's error blocks, each detail line a run of `, input_value=` (planner's shape:
    one search per line cost 15-40 ms)."""
    out: list[str] = []
    for k in range(rows // 3):
        detail = "  Input should be x [type=y" + ", input_value=" * 1100 + "]"
        out += [f"1 validation error for Config{k}", "field", detail]
    return out


def _boots(rows: int) -> list[str]:
    """A new boot on every row: the API server's version line, the pid and version changing."""
    return [
        f"(APIServer pid={i}) INFO 11-29 17:28:40 [api_server.py:1] vLLM API server version "
        f"0.{10 + i % 20}.0"
        for i in range(rows)
    ]


def _engines(rows: int) -> list[str]:
    """An engine's config line on every row, its version changing (each a boot start)."""
    return [
        f"(EngineCore pid={i}) INFO 11-29 17:28:40 [core.py:1] Initializing a V1 LLM engine "
        f"(v0.{10 + i % 20}.0) with config: model='m{i}', " + "x=1, " * 300
        for i in range(rows)
    ]


def _long_tags(rows: int) -> list[str]:
    """A 16 KB process tag in front of every record."""
    return [f"({'a' * 16_000} pid={i}) INFO 11-29 17:28:40 [core.py:1] x" for i in range(rows)]


def _redrawn_bars(rows: int) -> list[str]:
    """A progress bar redrawn 100 times with carriage returns on every row."""
    bar = "\r".join(f"{k}% Completed | {k}/100 [00:0{k % 10}<00:00, 1.0it/s]" for k in range(100))
    return [f"Loading safetensors checkpoint shards: {bar} {i}" for i in range(rows)]


def _every_rule(rows: int) -> list[str]:
    """Every rule's first example in turn, its numbers shifted per row (planner's: a hit on
    every line, an outcome per distinct one)."""
    from vllm_bootdiag.rules.ruleset import default_rules

    examples = [r.examples[0] for r in default_rules().rules]

    def numbered(text: str, i: int) -> str:
        return re.sub(r"\d{1,5}", lambda m: str(int(m[0]) + i), text)

    return [numbered(examples[i % len(examples)], i // len(examples) + 1) for i in range(rows)]


def _ooms_under_frames(rows: int) -> list[str]:
    """A traceback, a graph-capture frame and a distinct CUDA OOM, again and again (planner's:
    an outcome per OOM, each attributed from its frames)."""
    out: list[str] = []
    for k in range(rows // 3):
        out += [
            "Traceback (most recent call last):",
            f'  File "/x/vllm/v1/worker/gpu_model_runner.py", line {k}, in capture_model',
            f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {k}.00 MiB. GPU 0 "
            f"has a total capacity of 79.19 GiB of which {k}.00 MiB is free.",
        ]
    return out


def _echoes(rows: int) -> list[str]:
    """vLLM's echoes of a cause printed above the tail, and tracebacks, with no cause (planner's:
    the unknown ends on an echo)."""
    said = (
        "RuntimeError: Engine core initialization failed. See root cause above. "
        "Failed core proc(s): {}",
        "ERROR 11-29 16:51:14 [core.py:1] EngineCore failed to start.",
        "Traceback (most recent call last):",
    )
    return [f"(EngineCore_DP{i} pid={i}) {said[i % len(said)]}" for i in range(rows)]


def _unknown_errors(rows: int) -> list[str]:
    """Error-looking lines no rule reads, every one distinct (planner's: the unknown's search)."""
    return [
        f"ValueError: something went wrong number {i}"
        if i % 2
        else f"(EngineCore pid={i}) ERROR 11-29 16:51:14 [core.py:{i}] frobnicator {i} refused"
        for i in range(rows)
    ]


def _words(unit: str, i: int) -> str:
    """A 16 KB row of lower-case words (a reflowed message's), numbered, shifted to start
    on a letter."""
    run = unit * (WIDTH // len(unit) + 1)
    shift = i % len(unit)
    while not run[shift].islower():
        shift = (shift + 1) % len(unit)
    return run[shift:][: WIDTH - 16] + f" {i}"


def _reflowed(head: str, unit: str = "and more words ") -> Callable[[int], list[str]]:
    """An error line, then every other row a 16 KB row that goes on it (lower-case, with
    spaces: what a paste that reflowed one long message gives): the rejoin grows one line
    over all of them (a copy or a search of the grown line per row is quadratic)."""
    return lambda rows: [head, *(_words(unit, i) for i in range(rows - 1))]


def _import_rows(rows: int, width: int = WIDTH) -> list[str]:
    """An error, then rows of import-time words (`Triton `, `usage: vllm `): boots looks for
    import lines after a failure, in the whole text up to its 1 MB cutoff and in each line's
    head past it."""
    return ["ERROR 01-02 03:04:05 [a.py:1] ValueError: x"] + [
        _row("Triton usage: vllm ", i)[:width] for i in range(rows - 1)
    ]


_UNDER_CUTOFF = 2**20 // (WIDTH + 1) - 1
"""Rows of 16 KB whose joined text stays under boots' `_WIDE_TEXT` (1 MB): the whole-text
searches, where 400 rows take the per-line heads."""

SHAPES: dict[str, Callable[[int], list[str]]] = {
    "pydantic input_value runs": _pydantic,
    "a boot on every row": _boots,
    "an engine config on every row": _engines,
    "16 KB process tags": _long_tags,
    "progress bars redrawn by CR": _redrawn_bars,
    "every rule's example, numbers shifted": _every_rule,
    "distinct OOMs under frames": _ooms_under_frames,
    "echoes without a cause": _echoes,
    "unknown error lines": _unknown_errors,
    "rows going on a raw error": _reflowed("ValueError: x"),
    "rows going on an ERROR record": _reflowed("ERROR 01-02 03:04:05 [a.py:1] ValueError: x"),
    "rows going on a tagged ERROR record": _reflowed(
        "(EngineCore_DP0 pid=1) ERROR 01-02 03:04:05 [a.py:1] ValueError: x"
    ),
    "rows going on an error behind colour codes": _reflowed(
        "\x1b[0m" * 3000 + "ERROR 01-02 03:04:05 [a.py:1] ValueError: x"
    ),
    "rows of one-letter words going on an error": _reflowed("ValueError: x", "a "),
    "rows of dotted words going on an error": _reflowed("ValueError: x", "a.b c "),
    "import words after an error, past 1 MB": _import_rows,
    "import words after an error, under 1 MB": lambda rows: _import_rows(min(rows, _UNDER_CUTOFF)),
}
"""Multi-line shapes a unit and a head do not make: built at the real row count (400 by
default, not --rows: a cost that grows across rows, or one that changes at boots' 1 MB
cutoff, is not seen in 40 rows scaled by 10), timed whole."""


def units(every_pair: bool) -> list[str]:
    pairs = ["".join(p) for p in itertools.product(CHARS, repeat=2)] if every_pair else []
    return [*CHARS, *pairs, *PIECES]


def _best_ms(tail: list[str], repeat: int) -> float:
    """CPU milliseconds of the fastest of `repeat` warm classifies (the machine is shared:
    the fastest is the one least disturbed)."""
    classify(tail)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        classify(tail)
        best = min(best, time.process_time() - t0)
    return best * 1000


def per_400_rows(unit: str, head: str, rows: int, repeat: int = 1) -> float:
    """CPU milliseconds of a warm classify of `rows` such rows, scaled to 400 rows."""
    tail = HEADS[head](unit, rows)
    return _best_ms(tail, repeat) / len(tail) * 400


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit-ms", type=float, default=50.0)
    ap.add_argument("--rows", type=int, default=400, help="rows per unit case (scaled to 400)")
    ap.add_argument("--shape-rows", type=int, default=400, help="rows per multi-line shape")
    ap.add_argument("--repeat", type=int, default=3, help="timings per case, the best kept")
    ap.add_argument("--all", action="store_true", help="every pair of characters too")
    ap.add_argument("--units", nargs="*", help="these units only (Python escapes read)")
    ap.add_argument("--shapes-only", action="store_true", help="the multi-line shapes only")
    ap.add_argument("--heads", nargs="*", choices=list(HEADS), help="these heads only")
    args = ap.parse_args()
    chosen = (
        []
        if args.shapes_only
        else (
            [u.encode("latin-1", "backslashreplace").decode("unicode_escape") for u in args.units]
            if args.units
            else units(args.all)
        )
    )
    results = []
    for unit in chosen:
        for head in args.heads or HEADS:
            ms = per_400_rows(unit, head, args.rows, args.repeat)
            results.append((ms, head, unit))
            if ms > args.limit_ms:
                print(f"{ms:9.1f} ms per 400 rows  {head:12s} {unit!r}", flush=True)
    for name, make in SHAPES.items():
        tail = make(args.shape_rows)
        ms = _best_ms(tail, args.repeat)  # a whole tail: at most 400 rows, not scaled
        results.append((ms, "shape", name))
        flag = " OVER" if ms > args.limit_ms else ""
        print(f"{ms:9.1f} ms  {len(tail):3d} rows  shape        {name}{flag}", flush=True)
    results.sort(reverse=True)
    over = sum(1 for r in results if r[0] > args.limit_ms)
    print(f"{len(results)} cases; {over} over {args.limit_ms:g} ms per 400 rows; worst:")
    for ms, head, unit in results[:10]:
        print(f"  {ms:9.1f}  {head:12s} {unit!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
