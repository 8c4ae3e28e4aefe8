"""The CLI's one error type: a user mistake or unreadable input, reported as one line, exit 2."""

from __future__ import annotations


class UsageError(Exception):
    """A bad argument or unreadable input: `vllm-bootdiag: error: <message>`, exit 2.

    Anything else that escapes a command is a bug in vllm-bootdiag and is reported as an
    internal error, so the two never read alike.
    """
