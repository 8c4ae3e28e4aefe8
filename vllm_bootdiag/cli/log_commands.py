"""The commands that read one boot log: `classify`, `timeline`, `redact`."""

from __future__ import annotations

import argparse
from typing import Any

from .errors import UsageError
from .output import emit

DEFAULT_LINES = 400
"""The tail a worker keeps (RunPod's worker-vllm keeps 400 lines); the library's default too."""


def read(path: str, lines: int) -> list[str]:
    """The log's tail, or a one-line UsageError saying why it cannot be read."""
    from .. import logtail

    try:
        return logtail.read_tail(path, lines)
    except logtail.LogReadError as e:
        raise UsageError(str(e)) from None


def cmd_classify(args: argparse.Namespace) -> int:
    from .. import engine

    d = engine.classify(read(args.log, args.lines), version=args.vllm_version)
    emit(d.model_dump(mode="json"), args.json, d.summary())
    return 1 if args.fail_on_failure and d.failed else 0


def cmd_timeline(args: argparse.Namespace) -> int:
    from .. import timeline

    tl = timeline.build(read(args.log, args.lines))
    rows = [
        f"{e.line:>5}  {e.timestamp or '--':<14} "
        f"{'' if e.seconds_from_start is None else f'+{e.seconds_from_start:.0f}s':>7}  "
        f"{e.phase:<15}{'' if e.seconds is None else f'{e.seconds:.0f}s'}"
        for e in tl.events
    ]
    facts = {k: v for k, v in tl.facts.model_dump().items() if v is not None}
    rows.append(f"last phase: {tl.last_phase or 'none'}")
    rows.extend(f"{k}: {v}" for k, v in facts.items())
    emit(tl.model_dump(mode="json"), args.json, "\n".join(rows))
    return 0


def cmd_redact(args: argparse.Namespace) -> int:
    from .. import redact

    text = "\n".join(read(args.log, args.lines))
    out = redact.redact(text, extra_literals=tuple(args.literal or ()))
    emit({"text": out}, args.json, out)
    return 0


def log_args(sp: argparse.ArgumentParser) -> None:
    """LOG, --lines and --json, shared by every command that reads a log."""
    sp.add_argument("log", metavar="LOG", help="a log file, or - for stdin")
    sp.add_argument(
        "--lines",
        type=int,
        default=DEFAULT_LINES,
        help="tail length to read (default: %(default)s)",
    )
    sp.add_argument("--json", action="store_true", help="print JSON")


def register(sub: Any) -> None:
    """Add `classify`, `timeline` and `redact` to the subparsers."""
    c = sub.add_parser("classify", help="the outcome of a boot log")
    log_args(c)
    c.add_argument("--vllm-version", help="the vLLM version, when the log does not state it")
    c.add_argument(
        "--fail-on-failure", action="store_true", help="exit 1 when the log shows a failure"
    )
    c.set_defaults(func=cmd_classify)

    t = sub.add_parser("timeline", help="boot phases, their times, and the numbers printed")
    log_args(t)
    t.set_defaults(func=cmd_timeline)

    x = sub.add_parser("redact", help="scrub paths, hosts, IPs and tokens from a log")
    log_args(x)
    x.add_argument("--literal", action="append", help="another string to scrub (repeatable)")
    x.set_defaults(func=cmd_redact)
