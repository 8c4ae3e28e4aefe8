"""`vllm-bootdiag`: the command line over the library.

Every subcommand takes `--json`. Exit codes: 0 the command worked (whatever the
outcome), 1 the log shows a failure and `--fail-on-failure` was asked (or a
supervised boot gave up), 2 a usage or input error, printed as one line. No
Python traceback reaches the user.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from . import cli_remediation, corpus, engine, logtail, redact, rules, source_scan, timeline
from .outcomes import OUTCOME_TYPES


class UsageError(Exception):
    """A bad argument or unreadable input: exit 2 with this message."""


def _emit(data: Any, as_json: bool, text: str) -> None:
    if as_json:
        print(json.dumps(data, indent=None, sort_keys=False, default=str))
    else:
        print(text)


def _read(path: str, lines: int) -> list[str]:
    try:
        return logtail.read_tail(path, lines)
    except logtail.LogReadError as e:
        raise UsageError(str(e)) from None


def cmd_classify(args: argparse.Namespace) -> int:
    d = engine.classify(_read(args.log, args.lines), version=args.vllm_version)
    _emit(d.model_dump(mode="json"), args.json, d.summary())
    return 1 if args.fail_on_failure and d.failed else 0


def cmd_rules(args: argparse.Namespace) -> int:
    if args.rule_id:
        rule = rules.BY_ID.get(args.rule_id.upper())
        if rule is None:
            raise UsageError(f"no rule {args.rule_id!r}; `vllm-bootdiag rules` lists them")
        text = "\n".join(
            [
                f"{rule.id} {rule.name} ({rule.status})",
                f"vLLM: {rule.vllm or 'all versions'}",
                f"outcome: {rule.outcome} ({OUTCOME_TYPES[rule.outcome].CATEGORY.value})",
                f"summary: {rule.summary}",
                f"remediation: {rule.remediation}",
                f"literal: {rule.literal}",
                *(f"pattern: {p}" for p in rule.patterns),
                *(f"example: {e}" for e in rule.examples),
                *(f"references: {r}" for r in rule.references),
            ]
        )
        _emit(rule.model_dump(mode="json"), args.json, text)
        return 0
    listed = [r for r in rules.RULES if args.outcome in (None, r.outcome)]
    rows = [f"{r.id}  {r.vllm or 'all':<18} {r.outcome:<28} {r.name}" for r in listed]
    _emit(
        [{"id": r.id, "name": r.name, "vllm": r.vllm, "outcome": r.outcome} for r in listed],
        args.json,
        "\n".join(rows),
    )
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    tl = timeline.build(_read(args.log, args.lines))
    rows = [
        f"{e.line:>5}  {e.timestamp or '--':<14} "
        f"{'' if e.seconds_from_start is None else f'+{e.seconds_from_start:.0f}s':>7}  "
        f"{e.phase:<15}{'' if e.seconds is None else f'{e.seconds:.0f}s'}"
        for e in tl.events
    ]
    facts = {k: v for k, v in tl.facts.model_dump().items() if v is not None}
    rows.append(f"last phase: {tl.last_phase or 'none'}")
    rows.extend(f"{k}: {v}" for k, v in facts.items())
    _emit(tl.model_dump(mode="json"), args.json, "\n".join(rows))
    return 0


def cmd_redact(args: argparse.Namespace) -> int:
    text = "\n".join(_read(args.log, args.lines))
    out = redact.redact(text, extra_literals=tuple(args.literal or ()))
    _emit({"text": out}, args.json, out)
    return 0


def cmd_corpus(args: argparse.Namespace) -> int:
    try:
        results = corpus.check(args.dir, write_expected=args.write_expected)
    except corpus.CorpusError as e:
        raise UsageError(str(e)) from None
    bad = [r for r in results if not r.ok]
    rows = [
        f"{'ok ' if r.ok else 'BAD'} {r.id:<70} {r.got}" + ("" if r.ok else f" (label: {r.want})")
        for r in results
    ]
    rows.append(f"{len(results) - len(bad)} of {len(results)} logs classify to their label")
    _emit([r.as_dict() for r in results], args.json, "\n".join(rows))
    return 1 if bad and args.fail_on_failure else 0


def cmd_scan_source(args: argparse.Namespace) -> int:
    try:
        version, findings = source_scan.scan(args.path, args.vllm_version)
    except source_scan.SourceError as e:
        raise UsageError(str(e)) from None
    bad = [f for f in findings if not f.ok]
    rows = [f"{f.rule_id}  {f.verdict}" for f in (findings if args.all else bad)]
    rows.append(
        f"vLLM {version}: {len(findings) - len(bad)} of {len(findings)} vLLM-printed rules agree "
        "with this release's source"
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
    _emit(data, args.json, "\n".join(rows))
    return 1 if bad and args.fail_on_failure else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="vllm-bootdiag",
        description="Say what a vllm serve boot log shows, and what to launch next.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def log_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("log", metavar="LOG", help="a log file, or - for stdin")
        sp.add_argument(
            "--lines",
            type=int,
            default=logtail.DEFAULT_LINES,
            help="tail length to read (default: %(default)s)",
        )
        sp.add_argument("--json", action="store_true", help="print JSON")

    c = sub.add_parser("classify", help="the outcome of a boot log")
    log_args(c)
    c.add_argument("--vllm-version", help="the vLLM version, when the log does not state it")
    c.add_argument(
        "--fail-on-failure", action="store_true", help="exit 1 when the log shows a failure"
    )
    c.set_defaults(func=cmd_classify)

    r = sub.add_parser("rules", help="list the rules, or explain one")
    r.add_argument("rule_id", nargs="?", metavar="RULE", help="a rule id, e.g. KV004")
    r.add_argument("--outcome", help="only rules yielding this outcome kind")
    r.add_argument("--json", action="store_true", help="print JSON")
    r.set_defaults(func=cmd_rules)

    t = sub.add_parser("timeline", help="boot phases, their times, and the numbers printed")
    log_args(t)
    t.set_defaults(func=cmd_timeline)

    x = sub.add_parser("redact", help="scrub paths, hosts, IPs and tokens from a log")
    log_args(x)
    x.add_argument("--literal", action="append", help="another string to scrub (repeatable)")
    x.set_defaults(func=cmd_redact)

    k = sub.add_parser("corpus", help="check every corpus log against its label")
    k.add_argument("dir", nargs="?", default="corpus", help="corpus directory (default: corpus)")
    k.add_argument(
        "--write-expected",
        action="store_true",
        help="write the classifier's numbers into labels that differ (marks them reviewed: false)",
    )
    k.add_argument("--fail-on-failure", action="store_true", help="exit 1 when a log disagrees")
    k.add_argument("--json", action="store_true", help="print JSON")
    k.set_defaults(func=cmd_corpus)

    s = sub.add_parser("scan-source", help="check the rule table against a vLLM release's source")
    s.add_argument("path", help="a vLLM wheel (pip download --no-deps vllm==X) or a vllm/ tree")
    s.add_argument("--vllm-version", help="the release, if the path does not say it")
    s.add_argument("--all", action="store_true", help="list every rule, not only disagreements")
    s.add_argument("--fail-on-failure", action="store_true", help="exit 1 on any disagreement")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=cmd_scan_source)

    cli_remediation.register(sub)  # plan, run
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        code: int = args.func(args)
        return code
    except UsageError as e:
        print(f"vllm-bootdiag: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as e:  # argparse: usage errors are exit 2, --help is 0
        return e.code if isinstance(e.code, int) else 2
    except Exception as e:  # the promise is: no traceback, ever
        print(f"vllm-bootdiag: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
