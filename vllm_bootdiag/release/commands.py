"""The release tools' subcommands: `corpus` (check, write labels, mine) and `scan-source`.

`register(subparsers)` adds them to the CLI. Errors are one line on stderr and
exit 2, like every other subcommand; the result goes to stdout, one versioned
JSON document with `--json`. Library modules are imported when a command runs,
so `--help` costs no rule table.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..cli import render
from ..cli.documents import document
from ..cli.errors import UsageError
from ..cli.output import emit


def cmd_corpus(args: argparse.Namespace) -> int:
    from .. import corpus

    try:
        results = corpus.check(args.dir, write_expected=args.write_expected)
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


def cmd_scan_source(args: argparse.Namespace) -> int:
    from . import report, sources

    paths: list[str] = args.paths
    if len(paths) > 2:
        raise UsageError("scan-source takes one release, or two: OLD NEW")
    old, new = (paths[0], paths[1]) if len(paths) == 2 else (None, paths[0])
    try:
        rep = report.scan(new, old, version=args.vllm_version)
    except sources.SourceError as e:
        raise UsageError(str(e)) from None
    text = report.render(rep, all_=args.all, top=args.top, wide=args.wide)
    emit(rep.as_dict(), args.json, text)
    return 1 if args.fail_on_failure and rep.needs_action else 0


def register(sub: Any) -> None:
    """Add `corpus` and `scan-source` to an argparse subparsers object."""
    k = sub.add_parser("corpus", help="check every corpus log against its label")
    k.add_argument("dir", nargs="?", default="corpus", help="corpus directory (default: corpus)")
    k.add_argument(
        "--write-expected",
        action="store_true",
        help="write the classifier's numbers into labels that differ (marks them reviewed: false)",
    )
    k.add_argument("--fail-on-failure", action="store_true", help="exit 1 when a log disagrees")
    k.add_argument("--json", action="store_true", help="print JSON")
    k.add_argument("--wide", action="store_true", help="whole lines, and what every log gave")
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
