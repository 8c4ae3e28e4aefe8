"""The release tools' subcommands: `corpus` (check, write labels, mine) and `scan-source`.

`register(subparsers)` adds them to the CLI. Errors are one line on stderr and
exit 2, like every other subcommand; the result goes to stdout, one versioned
JSON document with `--json`. Library modules are imported when a command runs,
so `--help` costs no rule table.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..cli import render
from ..cli.documents import document
from ..cli.errors import UsageError
from ..cli.log_commands import rules_arg, ruleset
from ..cli.output import emit


def cmd_corpus(args: argparse.Namespace) -> int:
    from .. import corpus

    paths: list[str] = args.paths
    if paths[:1] == ["mine"]:
        return cmd_mine(args, paths[1:])
    if len(paths) > 1:
        raise UsageError("corpus takes one directory (or: corpus mine DIR...)")
    rules = ruleset(args) if args.rules else None
    try:
        results = corpus.check(
            paths[0] if paths else "corpus", write_expected=args.write_expected, rules=rules
        )
    except corpus.CorpusError as e:
        raise UsageError(str(e)) from None
    bad = [r for r in results if not r.ok]
    rows: list[str] = []
    for r in results:
        rows.append(render.wrap(f"{'ok ' if r.ok else 'BAD'} {r.id}", args.wide, " " * 4))
        if not r.ok or args.wide:
            rows.append(render.wrap(f"    got: {r.got}", args.wide, " " * 9))
        if not r.ok:
            rows.append(render.wrap(f"    label: {r.want}", args.wide, " " * 11))
    rows.append(f"{len(results) - len(bad)} of {len(results)} logs classify to their label")
    emit(document("corpus", [r.as_dict() for r in results]), args.json, "\n".join(rows))
    return 1 if bad and args.fail_on_failure else 0


def cmd_mine(args: argparse.Namespace, roots: list[str]) -> int:
    import sys

    from . import mine

    if not roots:
        raise UsageError("corpus mine needs a directory or file of boot logs")
    if args.write_expected:
        raise UsageError("--write-expected is for labelled corpus logs, not for mining")
    if args.rules:
        raise UsageError("--rules is for `corpus DIR` and scan-source; mine reads built-in rules")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    try:
        bar = None
        if sys.stderr.isatty():  # counting first costs a walk (50 ms for 10,000 files)
            bar = progress_bar(sys.stderr, sum(1 for _ in mine.files(roots, args.glob)))
        found = mine.mine(roots, pattern=args.glob, workers=args.jobs, progress=bar)
    except mine.MineError as e:
        raise UsageError(str(e)) from None
    finally:
        if bar is not None:
            sys.stderr.write("\n")
    if found.files == 0:
        raise UsageError(f"no files matching {args.glob!r} under {', '.join(roots)}")
    emit(document("mine", found.as_dict()), args.json, _mined_text(found, args.top, args.wide))
    return 0


def progress_bar(stream: Any, total: int, width: int = 20) -> Callable[[int, float], None]:
    """A bar redrawn on a terminal: logs done of those found, the rate and what is left
    (one line within 80 columns up to a million logs; redrawn at most five times a second)."""
    import time

    last = [0.0]

    def draw(done: int, seconds: float) -> None:
        now = time.perf_counter()
        if now - last[0] < 0.2 and 0 < done < total:
            return
        last[0] = now
        part = min(done / total, 1.0) if total else 1.0
        rate = done / seconds if seconds > 0 else 0.0
        left = f"{max(total - done, 0) / rate:4.0f} s left" if rate else ""
        fill = round(width * part)
        line = f"[{'#' * fill}{'.' * (width - fill)}] {done:,}/{total:,} {part:4.0%} "
        stream.write("\r" + f"{line}{rate:6,.0f} logs/s {left}".ljust(79))
        stream.flush()

    return draw


def _mined_text(found: Any, top: int, wide: bool) -> str:
    rows = [
        f"{found.files:,} logs in {found.seconds:.1f} s ({found.rate:,.0f} logs/s, "
        f"{found.workers} processes)",
        render.wrap(
            "kinds: " + ", ".join(f"{k} {v:,}" for k, v in found.kinds.most_common()), wide, "  "
        ),
    ]
    groups = found.ranked()
    rows.append("")
    rows.append(
        render.wrap(
            f"{sum(g.count for g in groups):,} logs no exact rule reads, in {len(groups):,} "
            "groups by masked error line (the next rules to write):",
            wide,
            "",
        )
    )
    for g in groups[:top]:
        kinds = ", ".join(f"{k} {v}" for k, v in g.kinds.most_common(2))
        rows.append(render.wrap(f"{g.count:>7,}  {g.pattern}", wide, " " * 9))
        rows.append(render.wrap(f"         {kinds}; e.g. {g.example}", wide, " " * 11))
    if len(groups) > top:
        rows.append(f"  ... {len(groups) - top:,} more groups (--top N, or --json)")
    for path, error in found.unreadable[:5]:
        rows.append(render.wrap(f"unreadable: {path}: {error}", wide, "    "))
    return "\n".join(rows)


def cmd_scan_source(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import other_packages, report, sources

    paths: list[str] = args.paths
    if len(paths) > 2:
        raise UsageError("scan-source takes one release, or two: OLD NEW")
    old, new = (paths[0], paths[1]) if len(paths) == 2 else (None, paths[0])
    table = tuple(ruleset(args)) if args.rules else None
    try:
        given = other_packages.expand(other_packages.parse_with(args.with_ or ()))
        corpus = (
            args.corpus
            if args.corpus is not None
            else ("corpus" if Path("corpus").is_dir() else None)
        )
        rep = report.scan(
            new, old, version=args.vllm_version, rules=table, packages=given, corpus=corpus
        )
    except sources.SourceError as e:
        raise UsageError(str(e)) from None
    text = report.render(rep, all_=args.all, top=args.top, wide=args.wide)
    emit(rep.as_dict(), args.json, text)
    return 1 if args.fail_on_failure and rep.needs_action else 0


def register(sub: Any) -> None:
    """Add `corpus` and `scan-source` to an argparse subparsers object."""
    k = sub.add_parser(
        "corpus",
        help="check every corpus log against its label; `corpus mine DIR...`: a fleet's logs",
        usage="%(prog)s [DIR] [--write-expected] [--rules FILE]\n"
        "       %(prog)s mine DIR... [--jobs N] [--json]",
        description="Check every labelled log of a corpus (default: corpus) against its "
        "label, or, as `corpus mine DIR...`, classify a fleet's saved boot logs and group "
        "the ones no exact rule reads by their masked error line.",
    )
    k.add_argument(
        "paths",
        nargs="*",
        metavar="DIR",
        help="corpus directory (default: corpus); or `mine` then directories or files of logs",
    )
    k.add_argument(
        "--write-expected",
        action="store_true",
        help="write the classifier's numbers into labels that differ (marks them reviewed: false)",
    )
    k.add_argument("--fail-on-failure", action="store_true", help="exit 1 when a log disagrees")
    rules_arg(k)
    k.add_argument("--json", action="store_true", help="print JSON")
    k.add_argument("--wide", action="store_true", help="whole lines, and what every log gave")
    k.add_argument("--jobs", type=int, metavar="N", help="mine: processes (default: every core)")
    k.add_argument(
        "--glob", default="*", help="mine: file names to read (default: all but .json, .md)"
    )
    k.add_argument(
        "--top", type=int, default=20, metavar="N", help="mine: groups to list (default: 20)"
    )
    k.set_defaults(func=cmd_corpus)

    s = sub.add_parser(
        "scan-source",
        help="check the rule table against a vLLM release's source (or diff two releases)",
        description="Check every rule vLLM prints, the engine's version lines, phase "
        "markers and OOM frame names against a release's own format strings, and list "
        "boot-path messages no rule matches. With two releases, OLD NEW: what changed.",
    )
    s.add_argument(
        "paths",
        nargs="+",
        metavar="WHEEL",
        help="a vLLM wheel (pip download --no-deps vllm==X), a zip or a vllm/ tree; "
        "two of them: OLD NEW",
    )
    s.add_argument("--vllm-version", help="the (newer) release, if its path does not say it")
    s.add_argument(
        "--with",
        dest="with_",
        action="append",
        metavar="NAME=PATH",
        help="another package's source for the rules it prints: a wheel, sdist or directory "
        "(torch=..., huggingface_hub=..., transformers=..., pydantic=... (and pydantic_core), "
        "safetensors=..., uvicorn=...; argparse, python, os default to this interpreter's); "
        "repeatable",
    )
    s.add_argument(
        "--corpus",
        metavar="DIR",
        help="labelled logs whose argparse and pydantic lines are checked against the "
        "release's flags (default: ./corpus if there)",
    )
    rules_arg(s)
    s.add_argument("--all", action="store_true", help="list everything, not only what to act on")
    s.add_argument(
        "--top", type=int, default=15, metavar="N", help="gaps to list (default: %(default)s)"
    )
    s.add_argument(
        "--fail-on-failure", action="store_true", help="exit 1 when something needs action"
    )
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--wide", action="store_true", help="print whole lines, not 80 columns")
    s.set_defaults(func=cmd_scan_source)
