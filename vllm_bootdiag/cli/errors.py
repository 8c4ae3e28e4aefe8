"""The CLI's one error type, and the parser that reports through it."""

from __future__ import annotations

import argparse
from typing import NoReturn


class UsageError(Exception):
    """A bad argument or unreadable input: `vllm-bootdiag: error: <message>`, exit 2.

    Anything else that escapes a command is a bug in vllm-bootdiag and is reported as an
    internal error, so the two never read alike.
    """


class Parser(argparse.ArgumentParser):
    """argparse, with its usage errors as one line (a UsageError), not a usage block."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")
