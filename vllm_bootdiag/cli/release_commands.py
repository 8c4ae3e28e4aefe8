"""The release tooling's commands: `corpus` (every log against its label) and `scan-source`."""

from __future__ import annotations

import argparse
from typing import Any

from . import render
from .documents import document
from .errors import UsageError
from .output import emit


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
    import zipfile

    from .. import source_scan

    try:
        version, findings = source_scan.scan(args.path, args.vllm_version)
    except source_scan.SourceError as e:
        raise UsageError(str(e)) from None
    except (zipfile.BadZipFile, EOFError) as e:  # a wheel cut short by a failed download
        raise UsageError(f"not a readable wheel: {args.path} ({e})") from None
    bad = [f for f in findings if not f.ok]
    rows = [
        render.wrap(f"{f.rule_id}  {f.verdict}", args.wide, " " * 7)
        for f in (findings if args.all else bad)
    ]
    rows.append(
        render.wrap(
            f"vLLM {version}: {len(findings) - len(bad)} of {len(findings)} vLLM-printed rules "
            "agree with this release's source",
            args.wide,
        )
    )
    data = {
        "vllm_version": str(version),
        "findings": [
            {
                "rule_id": f.rule_id,
                "in_range": f.in_range,
                "present": f.present,
                "ok": f.ok,
                "verdict": f.verdict,
            }
            for f in findings
        ],
    }
    emit(document("scan_source", data), args.json, "\n".join(rows))
    return 1 if bad and args.fail_on_failure else 0


def register(sub: Any) -> None:
    """Add `corpus` and `scan-source` to the subparsers."""
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

    s = sub.add_parser("scan-source", help="check the rule table against a vLLM release's source")
    s.add_argument("path", help="a vLLM wheel (pip download --no-deps vllm==X) or a vllm/ tree")
    s.add_argument("--vllm-version", help="the release, if the path does not say it")
    s.add_argument("--all", action="store_true", help="list every rule, not only disagreements")
    s.add_argument("--fail-on-failure", action="store_true", help="exit 1 on any disagreement")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--wide", action="store_true", help="print whole lines, not 80 columns")
    s.set_defaults(func=cmd_scan_source)
