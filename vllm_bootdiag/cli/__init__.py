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
import sys
from collections.abc import Sequence

from .._version import __version__
from .errors import Parser, UsageError

__all__ = ["UsageError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every group's subcommands on one parser."""
    # Imported here, not at the top, so `python -m vllm_bootdiag.cli.remediation` runs its
    # module once (a package that imported it first would make runpy warn).
    from ..release import commands as release_commands
    from . import log_commands, remediation, rule_commands

    p = Parser(
        prog="vllm-bootdiag",
        description="Say what a vllm serve boot log shows, and what to launch next.",
    )
    p.add_argument("--version", action="version", version=f"vllm-bootdiag {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    log_commands.register(sub)  # classify, timeline, redact
    rule_commands.register(sub)  # rules
    release_commands.register(sub)  # corpus, scan-source
    remediation.register(sub)  # plan, run
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit code, never a traceback."""
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
