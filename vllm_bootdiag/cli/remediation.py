"""The `plan` and `run` subcommands: what to launch next, and the relaunch loop.

`register(subparsers)` adds them to the main CLI's argparse subparsers;
`main()` runs them alone (`python -m vllm_bootdiag.cli.remediation`). Exit
codes: 0 the command worked, 1 `run` gave up, 2 a usage or input error (one
line on stderr, never a traceback), 128+N when `run` was stopped by signal N.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from ..engine import classify_file
from ..launch import LaunchConfig, LaunchConfigError
from ..logtail import LogReadError
from ..planning import GiveUp, NothingToPlan, Policy, PolicyError, plan
from ..supervisor import LaunchError, RunSummary, Supervisor
from . import render
from .documents import document
from .log_commands import vllm_version


class _InputError(Exception):
    """A problem with what the user gave us: reported in one line, exit 2."""


def _policy_args(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--max-concurrency",
        type=int,
        metavar="N",
        help="requests the worker really runs at once (default: $MAX_CONCURRENCY)",
    )
    sp.add_argument(
        "--min-max-model-len",
        type=int,
        metavar="TOKENS",
        help="the shortest context to accept (default: 1024)",
    )
    sp.add_argument(
        "--no-eager", action="store_true", default=None, help="never relaunch with --enforce-eager"
    )
    sp.add_argument(
        "--max-gpu-memory-utilization",
        type=float,
        metavar="F",
        help="the highest gpu_memory_utilization a step may raise to (default: 0.95)",
    )
    sp.add_argument("--json", action="store_true", help="print JSON")
    sp.add_argument("--wide", action="store_true", help="print whole lines, not 80 columns")


def _policy(args: argparse.Namespace, env: Mapping[str, str], **more: Any) -> Policy:
    """The worker's env policy (Policy.from_env), each flag given overriding it."""
    try:
        return Policy.from_env(
            env,
            max_concurrency=args.max_concurrency,
            min_max_model_len=args.min_max_model_len,
            allow_eager=False if args.no_eager else None,
            max_gpu_memory_utilization=args.max_gpu_memory_utilization,
            **more,
        )
    except PolicyError as e:
        raise _InputError(f"bad policy: {e}") from None


def register(subparsers: Any) -> None:
    """Add `plan` and `run` to an argparse subparsers object."""
    p = subparsers.add_parser("plan", help="the next launch config for a failed boot log")
    p.add_argument("log", metavar="LOG", help="a boot log file, or - for stdin")
    p.add_argument("--args", metavar="ARGV", help='the launch that failed: "vllm serve M --..."')
    p.add_argument("--env-file", metavar="FILE", help="the worker's KEY=VALUE environment")
    p.add_argument(
        "--vllm-version",
        type=vllm_version,
        help="the vLLM version, when the log does not state it",
    )
    _policy_args(p)
    p.set_defaults(func=_guarded(cmd_plan))

    r = subparsers.add_parser(
        "run",
        help="launch vllm serve, relaunching on boot failures until it is up",
        description="Everything after -- is the command to run, e.g. -- vllm serve MODEL ...",
    )
    r.add_argument(
        "--budget",
        type=int,
        metavar="N",
        help="launches in total, the first included (default: $VLLM_BOOTDIAG_MAX_ATTEMPTS or 4)",
    )
    r.add_argument(
        "--budget-seconds",
        type=float,
        metavar="S",
        help="boot seconds in total across launches "
        "(default: $VLLM_BOOTDIAG_MAX_BOOT_SECONDS or 3600)",
    )
    r.add_argument(
        "--boot-timeout",
        type=float,
        default=1800.0,
        metavar="S",
        help="seconds one boot may take (default: %(default)s)",
    )
    r.add_argument(
        "--summary",
        metavar="FILE",
        help="write the JSON summary to FILE instead of stdout",
    )
    r.add_argument(
        "--stop-after-boot",
        action="store_true",
        help="stop the server once it is up (check that a config boots)",
    )
    _policy_args(r)
    r.add_argument(
        "vllm_command",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the command to run: -- vllm serve MODEL [flags]",
    )
    r.set_defaults(func=_guarded(cmd_run))


# --- plan ------------------------------------------------------------------------


def _read_env_file(path: str) -> dict[str, str]:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise _InputError(f"cannot read {path}: {e.strerror or e}") from None
    env: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def _merge(base: LaunchConfig, over: LaunchConfig, from_argv: bool) -> LaunchConfig:
    """`base` with every field `over` sets; an argv also brings its command and the rest."""
    update = {
        k: v
        for k, v in over.model_dump().items()
        if v is not None and k not in ("command", "extra_args", "env")
    }
    update["env"] = tuple(sorted({**base.env_vars(), **over.env_vars()}.items()))
    if from_argv:
        update["command"] = over.command
        update["extra_args"] = over.extra_args
    return base.model_copy(update=update)


def _launch_config(
    args: argparse.Namespace, log_args: str | None, env: Mapping[str, str]
) -> LaunchConfig:
    """The launch that produced the log: the log's own non-default args, then the
    worker's env file, then --args, each overriding what it sets."""
    config = LaunchConfig()
    try:
        if log_args:
            config = LaunchConfig.from_log_args(log_args)
        if args.env_file:
            config = _merge(config, LaunchConfig.from_env(env), False)
        if args.args:
            tokens = shlex.split(args.args)
            if not tokens or tokens[0].startswith("-"):
                model = [config.model] if config.model else []
                tokens = ["vllm", "serve", *model, *tokens]
            config = _merge(config, LaunchConfig.from_argv(tokens), True)
    except LaunchConfigError as e:
        raise _InputError(str(e)) from None
    except ValueError as e:
        raise _InputError(f"--args: {e}") from None
    return config


def cmd_plan(args: argparse.Namespace) -> int:
    try:
        diagnosis = classify_file(args.log, version=args.vllm_version)
    except LogReadError as e:
        raise _InputError(str(e)) from None
    if not diagnosis.vllm_output_found:  # an empty file, another program's log: no boot
        n = diagnosis.lines_examined
        raise _InputError(
            f"no vLLM output found in {args.log} ({n} line{'' if n == 1 else 's'} "
            "examined): nothing to plan"
        )
    env = _read_env_file(args.env_file) if args.env_file else {}
    config = _launch_config(args, diagnosis.facts.non_default_args, env)
    policy = _policy(args, env)
    try:
        result = plan(diagnosis, config, policy)
    except NothingToPlan:
        _print(
            args.json,
            {"kind": "booted", "diagnosis": diagnosis.primary.summary()},
            "booted: nothing to relaunch",
        )
        return 0
    if isinstance(result, GiveUp):
        human = [f"give up: {result.cause}: {result.reason}"]
        human += [f"  - {a}" for a in result.advice]
        data: dict[str, Any] = result.model_dump(mode="json")
    else:
        human = [
            f"relaunch ({result.step}): {result.reason}",
            render.shell("  argv: ", result.argv(), args.wide),
            render.shell(
                "  env:  ",
                [f"{k}={shlex.quote(v)}" for k, v in result.env().items()],
                args.wide,
                quoted=True,
            ),
        ]
        if result.expected_to_free_gib is not None:
            # a larger share is memory added, not freed; both go to the KV cache
            verb = "adds" if result.step.startswith("raise_") else "frees"
            gib = result.expected_to_free_gib
            human.append(f"  {verb} about {gib:g} GiB ({result.estimate})")
        human += [f"  degraded: {d.message}" for d in result.degradations]
        data = result.model_dump(mode="json")  # every key, always: None stays null
        data["argv"] = result.argv()
        data["env"] = result.env()
    data["diagnosis"] = diagnosis.primary.summary()
    text = f"{diagnosis.primary.summary()}\n" + "\n".join(human)
    _print(args.json, data, render.wrap(text, args.wide))
    return 0


def _print(as_json: bool, data: dict[str, Any], human: str) -> None:
    print(json.dumps(document("plan", data)) if as_json else human)


# --- run ---------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    command = list(args.vllm_command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise _InputError("run: give the command after --, e.g. -- vllm serve MODEL")
    _check_summary_file(args.summary)  # before a boot that may take minutes, not after
    policy = _policy(
        args, os.environ, max_attempts=args.budget, max_boot_seconds=args.budget_seconds
    )
    try:
        sup = Supervisor(
            command,
            policy,
            echo=sys.stderr,
            boot_timeout=args.boot_timeout,
            say_width=None if args.wide else render.WIDTH,
        )
    except ValueError as e:  # LaunchConfigError, or a --boot-timeout of nan, 0 or inf
        raise _InputError(str(e).replace("boot_timeout", "--boot-timeout")) from None
    if sup.config.passthrough:
        notice = (
            f"vllm-bootdiag: no vLLM arguments found in {shlex.join(command)[:120]}: relaunches "
            "change its environment (MAX_NUM_SEQS, MAX_MODEL_LEN, ...), never its argv"
        )
        print(render.wrap(notice, args.wide), file=sys.stderr, flush=True)
    with sup.signal_handlers():
        try:
            return _supervise(sup, args)
        except LaunchError as e:
            sup.stop()
            raise _InputError(str(e)) from None
        except BrokenPipeError:
            # `run ... | head -1`: nobody reads us any more; never leave the server behind.
            sup.stop()
            _silence_stdout()
            return 141
        except BaseException:
            sup.stop()
            raise


def _check_summary_file(path: str | None) -> None:
    """`--summary FILE` that cannot be written is a usage error before anything runs (it
    was found only after the boot, and the summary lost)."""
    if path is None or path == "-":
        return
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        raise _InputError(f"--summary {path}: is a directory")
    if not folder.is_dir():
        raise _InputError(f"--summary {path}: no folder {folder}")
    if not os.access(target if target.exists() else folder, os.W_OK):
        raise _InputError(f"--summary {path}: not writable")


def _supervise(sup: Supervisor, args: argparse.Namespace) -> int:
    summary = sup.run()
    _report(summary, args.json, args.summary, args.wide)
    if not summary.booted:
        sup.stop()
        if summary.result == "stopped" and summary.signal is not None:
            return 128 + summary.signal
        return 1
    if args.stop_after_boot:
        sup.stop()
        return 0
    return sup.wait()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    with suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _report(summary: RunSummary, as_json: bool, summary_file: str | None, wide: bool) -> None:
    """The human lines on stderr; the JSON summary alone on stdout (the child's output
    is echoed to stderr, so `| jq` works), or in `--summary FILE` instead."""
    if not as_json:
        last = summary.attempts[-1] if summary.attempts else None
        line = f"vllm-bootdiag: {summary.result} after {len(summary.attempts)} launch(es)"
        if last is not None:
            line += f"; last: {last.summary}"
        if summary.give_up is not None:
            line += f"\nvllm-bootdiag: {summary.give_up.reason}"
            line += "".join(f"\n  - {a}" for a in summary.give_up.advice)
        line += "".join(f"\nvllm-bootdiag: degraded: {d.message}" for d in summary.degradations)
        print(render.wrap(line, wide), file=sys.stderr, flush=True)
    doc = json.dumps(document("run", json.loads(summary.json_line())))
    if summary_file is not None and summary_file != "-":
        try:
            Path(summary_file).write_text(doc + "\n", encoding="utf-8")
        except OSError as e:
            print(
                render.wrap(f"vllm-bootdiag: cannot write {summary_file}: {e}", wide),
                file=sys.stderr,
            )
        return
    print(doc, flush=True)


# --- standalone ----------------------------------------------------------------------


def _guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Report an input error in one line with exit 2, whichever CLI dispatches."""

    def run_guarded(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except _InputError as e:
            print(f"vllm-bootdiag: error: {e}", file=sys.stderr)
            return 2

    return run_guarded


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vllm-bootdiag")
    register(parser.add_subparsers(dest="command_name", required=True, metavar="COMMAND"))
    try:
        args = parser.parse_args(argv)
        code: int = args.func(args)
        return code
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the promise is: no traceback, ever
        print(f"vllm-bootdiag: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
