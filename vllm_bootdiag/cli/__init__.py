"""`vllm-bootdiag`: the command line over the library.

Every subcommand takes `--json`. Exit codes: 0 the command worked (whatever the
outcome), 1 the log shows a failure and `--fail-on-failure` was asked (or a
supervised boot gave up), 2 a usage or input error, printed as one line. No
Python traceback reaches the user.

One module per group of subcommands, each with `register(subparsers)`; the
library modules a command needs are imported when it runs, so `--help` and a
usage error cost no rule table.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from .._version import __version__
from .errors import Parser, UsageError

__all__ = ["UsageError", "build_parser", "main"]


_OWN_PROCESS = False
"""True once `main()` runs as this process's command (its arguments from sys.argv: the
`vllm-bootdiag` script, `python -m vllm_bootdiag`), not called by another program."""


class Loading:
    """`with Loading():` around the command's import of the library: when the process is
    the CLI's own, the cyclic garbage collector waits while the library loads (pydantic,
    the outcome models, the rule table, the patterns: some 100,000 objects, none of them
    garbage) and then freezes them (`gc.freeze`), so that no later collection walks them
    again: 10 ms of `cli classify LOG`. Otherwise (the library imported, or `main(argv)`
    called by a program) the collector is left alone: its state is that program's."""

    __slots__ = ("_active",)

    def __enter__(self) -> None:
        self._active = _OWN_PROCESS and gc.isenabled()
        if self._active:
            gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._active:
            gc.freeze()
            gc.enable()


GROUPS: dict[str, tuple[str, ...]] = {
    "vllm_bootdiag.cli.log_commands": ("classify", "watch", "timeline", "redact"),
    "vllm_bootdiag.cli.rule_commands": ("rules", "schema"),
    "vllm_bootdiag.release.commands": ("corpus", "scan-source"),
    "vllm_bootdiag.cli.remediation": ("plan", "run"),
}
"""Each module with a `register(subparsers)` and the subcommands it adds, in help order.
A command's run imports only its own group: `classify` never loads the planner, the
supervisor or their network code (a test checks this table against the modules)."""


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand named in `argv` (the first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line: every group's subcommands, or, when `argv` names a known
    command, that command's group alone (help and errors still see every command)."""
    import importlib

    p = Parser(
        prog="vllm-bootdiag",
        description="Say what a vllm serve boot log shows, and what to launch next.",
    )
    p.add_argument("--version", action="version", version=f"vllm-bootdiag {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    command = None if argv is None else _command(argv)
    if command is None and argv is not None and "--version" in argv and "--help" not in argv:
        return p  # argparse prints the version and exits before it wants a command
    known = any(command in names for names in GROUPS.values())
    for module, names in GROUPS.items():
        if not known or command in names:
            # Imported here, not at the top, so `python -m vllm_bootdiag.cli.remediation`
            # runs its module once (a package that imported it first would make runpy warn).
            with Loading():  # `plan` and `run` load the planner and the classifier here
                importlib.import_module(module).register(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit code, never a traceback."""
    global _OWN_PROCESS
    if argv is None:
        _OWN_PROCESS = True
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            paths = getattr(args, "paths", None)
            options = [a for a in extra if a.startswith("-")]
            if not isinstance(paths, list) or options:
                parser.error("unrecognized arguments: " + " ".join(options or extra))
            # `corpus mine --json DIR`: argparse gives a `*` positional only the words
            # before the first option, and leaves the rest over.
            paths.extend(extra)
        code: int = args.func(args)
        return code
    except UsageError as e:
        print(f"vllm-bootdiag: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except SystemExit as e:  # --help and --version: 0
        return e.code if isinstance(e.code, int) else 2
    except RecursionError:
        # Input nested past Python's limit (a JSON flag of ten thousand brackets): the
        # input is the problem, not us.
        print("vllm-bootdiag: error: input nested too deeply to read", file=sys.stderr)
        return 2
    except Exception as e:  # the promise is: no traceback, ever
        print(f"vllm-bootdiag: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
