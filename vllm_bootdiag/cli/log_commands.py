"""The commands that read one boot log: `classify`, `timeline`, `redact`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from . import render
from .documents import document
from .errors import UsageError
from .output import emit

if TYPE_CHECKING:
    from ..diagnosis import Diagnosis
    from ..rules.ruleset import RuleSet
    from ..rules.schema import Rule
    from ..text.tail import LogTail

DEFAULT_LINES = 400
"""The tail a worker keeps (RunPod's worker-vllm keeps 400 lines); the library's default too."""
MAX_LINES = 100_000
"""`text.tail.MAX_LINES`, repeated so that parsing arguments imports no reader (a test checks)."""


def tail_length(text: str) -> int:
    """`--lines`: a whole number of lines in 1..MAX_LINES, or a one-line usage error."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_LINES:
        raise argparse.ArgumentTypeError(
            f"takes a whole number from 1 to {MAX_LINES}, not {text!r}"
        )
    return n


def vllm_version(text: str) -> str:
    """`--vllm-version`: a version vLLM could have (0.32.0, v0.10.1.1), or a one-line
    usage error: a typo was silently ignored, and the log read without the hint."""
    from ..versions import parse_version

    if parse_version(text) is None:
        raise argparse.ArgumentTypeError(f"takes a vLLM version such as 0.32.0, not {text!r}")
    return text


def read(path: str, lines: int) -> LogTail:
    """The log's tail, or a one-line UsageError saying why it cannot be read."""
    from ..text import tail

    try:
        return tail.read(path, lines)
    except tail.LogReadError as e:
        raise UsageError(str(e)) from None


def exit_code(d: Diagnosis) -> int:
    """1 when the log shows a failure: a known one, an unknown whose evidence is an error
    line, or input that holds no vLLM output at all (a worker must not read that as fine)."""
    return 1 if d.failed or not d.vllm_output_found else 0


def show_diagnosis(d: Diagnosis, args: argparse.Namespace) -> None:
    """Print a Diagnosis as the `diagnosis` document, or for a person (without dumping it:
    a dump builds the serializer of every outcome kind, 8 ms a person's output never needs)."""
    if args.json:
        emit(document("diagnosis", d.model_dump(mode="json")), True, "")
    else:
        emit(None, False, render.diagnosis(d, args.wide))


def ruleset(args: argparse.Namespace) -> RuleSet:
    """The built-in rules plus the user's `--rules FILE`s (a platform's own wrapper messages);
    a bad file, or an id that clashes, is one usage error naming the rule and field."""
    from ..rules.ruleset import RuleFileError, load_rules, resolve

    extra: list[Rule] = []
    try:
        for path in args.rules or ():
            extra.extend(load_rules(path))
        return resolve(extra_rules=extra)
    except (RuleFileError, ValueError) as e:
        raise UsageError(f"--rules: {e}") from None


def cmd_classify(args: argparse.Namespace) -> int:
    if args.follow:
        from .watch import cmd_watch

        return cmd_watch(args)
    from . import Loading

    with Loading():
        from .. import pipeline

    rules = ruleset(args)
    t = read(args.log, args.lines)
    d = pipeline.run(t.lines, args.vllm_version, rules, first_line=t.first_line or 1)
    show_diagnosis(d, args)
    return exit_code(d) if args.fail_on_failure else 0


def cmd_timeline(args: argparse.Namespace) -> int:
    from . import Loading

    with Loading():
        from .. import timeline

    t = read(args.log, args.lines)
    tl = timeline.build(t.lines, first_line=t.first_line or 1)
    rows = [
        f"{e.line:>5}  {e.timestamp or '--':<14} "
        f"{'' if e.seconds_from_start is None else f'+{e.seconds_from_start:.0f}s':>7}  "
        f"{e.phase:<15}{'' if e.seconds is None else f'{e.seconds:.0f}s'}"
        for e in tl.events
    ]
    facts = {k: v for k, v in tl.facts.model_dump().items() if v is not None}
    rows.append(f"last phase: {tl.last_phase or 'none'}")
    rows.extend(render.wrap(f"{k}: {v}", args.wide) for k, v in facts.items())
    emit(document("timeline", tl.model_dump(mode="json")), args.json, "\n".join(rows))
    return 0


def cmd_redact(args: argparse.Namespace) -> int:
    from .. import redact

    text = "\n".join(read(args.log, args.lines).lines)
    out = redact.redact(text, extra_literals=tuple(args.literal or ()))
    emit(document("redacted", {"text": out}), args.json, out)
    return 0


def log_args(sp: argparse.ArgumentParser, wide: bool = True) -> None:
    """LOG, --lines, --json (and --wide), shared by every command that reads a log."""
    sp.add_argument("log", metavar="LOG", help="a log file (also .gz, .bz2, .xz), or - for stdin")
    sp.add_argument(
        "--lines",
        type=tail_length,
        default=DEFAULT_LINES,
        metavar="N",
        help=f"tail length to read, 1 to {MAX_LINES} (default: %(default)s)",
    )
    sp.add_argument("--json", action="store_true", help="print JSON")
    if wide:
        sp.add_argument("--wide", action="store_true", help="print whole lines, not 80 columns")


def classify_args(sp: argparse.ArgumentParser) -> None:
    """The options `classify` and `watch` share."""
    log_args(sp)
    sp.add_argument(
        "--vllm-version",
        type=vllm_version,
        help="the vLLM version, when the log does not state it",
    )
    rules_arg(sp)


def rules_arg(sp: argparse.ArgumentParser) -> None:
    """`--rules FILE` (repeatable), read by `ruleset(args)`: every command that runs the
    rule table takes the user's rule files the same way."""
    sp.add_argument(
        "--rules",
        action="append",
        metavar="FILE",
        help="more rules from a JSON (or TOML) file, beside the built-in ones (repeatable)",
    )


def register(sub: Any) -> None:
    """Add `classify`, `watch`, `timeline` and `redact` to the subparsers."""
    from .watch import watch_args

    c = sub.add_parser("classify", help="the outcome of a boot log")
    classify_args(c)
    c.add_argument(
        "--fail-on-failure",
        action="store_true",
        help="exit 1 when the log shows a failure, or holds no vLLM output",
    )
    c.add_argument(
        "--follow",
        action="store_true",
        help="follow a growing log or a pipe until the boot ends (as `watch`)",
    )
    watch_args(c, follow_only=True)
    c.set_defaults(func=cmd_classify)

    w = sub.add_parser(
        "watch",
        help="follow a growing log or a pipe; print the outcome the moment the boot ends",
        description="Exit 0 when the server came up, 1 when the boot failed (or the input "
        "ended first), 2 on a usage or input error.",
    )
    classify_args(w)
    watch_args(w)
    from .watch import cmd_watch

    w.set_defaults(func=cmd_watch, follow=True, fail_on_failure=True)

    t = sub.add_parser("timeline", help="boot phases, their times, and the numbers printed")
    log_args(t)
    t.set_defaults(func=cmd_timeline)

    x = sub.add_parser("redact", help="scrub paths, hosts, IPs and tokens from a log")
    log_args(x, wide=False)
    x.add_argument("--literal", action="append", help="another string to scrub (repeatable)")
    x.set_defaults(func=cmd_redact)
