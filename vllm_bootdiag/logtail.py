"""The old import path of `vllm_bootdiag.text.tail`, kept for the code and tests that use it."""

from .text.tail import (
    DEFAULT_LINES,
    MAX_LINE_CHARS,
    MAX_LINES,
    MIN_TAIL_BYTES,
    LogReadError,
    LogTail,
    check_lines,
    decode,
    read,
    read_tail,
    read_tail_stream,
    split_lines,
)

__all__ = [
    "DEFAULT_LINES",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "MIN_TAIL_BYTES",
    "LogReadError",
    "LogTail",
    "check_lines",
    "decode",
    "read",
    "read_tail",
    "read_tail_stream",
    "split_lines",
]
