"""The release tools' subcommands: `scan-source` and `corpus` (check, write, mine).

`register(subparsers)` adds them to the CLI. Errors are one line on stderr and
exit 2, like every other subcommand; the result goes to stdout, as JSON with
`--json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from .. import corpus
from . import report, sources


class _InputError(Exception):
    """A path or file the command cannot use: one line, exit 2."""


def _guarded(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (_InputError, sources.SourceError, corpus.CorpusError) as e:
            print(f"vllm-bootdiag: error: {e}", file=sys.stderr)
            return 2

    return run


def _emit(data: Any, as_json: bool, text: str) -> None:
    print(json.dumps(data, default=str) if as_json else text)


def cmd_scan_source(args: argparse.Namespace) -> int:
    paths: list[str] = args.paths
    if len(paths) > 2:
        raise _InputError("scan-source takes one release, or two: OLD NEW")
    old, new = (paths[0], paths[1]) if len(paths) == 2 else (None, paths[0])
    rep = report.scan(new, old, version=args.vllm_version)
    _emit(rep.as_dict(), args.json, report.render(rep, all_=args.all, top=args.top))
    return 1 if args.fail_on_failure and rep.needs_action else 0


def register(subparsers: Any) -> None:
    """Add `scan-source` to an argparse subparsers object."""
    s = subparsers.add_parser(
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
    s.set_defaults(func=_guarded(cmd_scan_source))
