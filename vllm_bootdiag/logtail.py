"""Read the last lines of a log without reading the whole log.

A worker's log can be gigabytes; only its tail matters. We seek from the end in
blocks, so the cost is proportional to the tail, and decode with replacement so
no byte sequence can make us fail.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import BinaryIO

DEFAULT_LINES = 400
"""What serving workers keep: RunPod's worker-vllm keeps the last 400 lines."""

MAX_LINE_CHARS = 16_384
"""Longer lines are cut: vLLM's own lines are far shorter, and a 50 MB line
(a binary dump, a runaway progress bar) must not cost regex time."""

MIN_TAIL_BYTES = 1024 * 1024
"""Reading stops after `lines` newlines or `lines * MAX_LINE_CHARS` bytes (at least this),
so the cost is bounded by the tail asked for, even in a file with no newlines."""

_BLOCK = 64 * 1024


class LogReadError(Exception):
    """The log could not be read (missing, a directory, no permission)."""


def split_lines(text: str, lines: int | None = DEFAULT_LINES) -> list[str]:
    """Split text into lines, dropping CR line ends and cutting overlong lines.

    `\\r\\n` and `\\n` end a line. A lone `\\r` is a progress-bar redraw (tqdm):
    like a terminal, we keep what was drawn last. Only the last `lines` lines
    are kept (all of them when `lines` is None).
    """
    out = text.replace("\r\n", "\n").split("\n")
    if out and out[-1] == "":
        out.pop()
    if lines is not None and len(out) > lines:
        out = out[-lines:]
    return [_last_redraw(line)[:MAX_LINE_CHARS] for line in out]


def _last_redraw(line: str) -> str:
    """The text a terminal shows for a line redrawn with carriage returns."""
    if "\r" not in line:
        return line
    parts = [p for p in line.split("\r") if p.strip()]
    return parts[-1] if parts else ""


def decode(data: bytes) -> str:
    """Decode log bytes as UTF-8, replacing what is not, and dropping NULs."""
    return data.decode("utf-8", errors="replace").replace("\x00", "")


def _budget(lines: int) -> int:
    return max(MIN_TAIL_BYTES, lines * MAX_LINE_CHARS)


def _tail_bytes(f: BinaryIO, size: int, lines: int) -> bytes:
    """Read blocks backwards from the end until `lines` newlines are seen."""
    limit = _budget(lines)
    pos = size
    chunks: list[bytes] = []
    newlines = 0
    read = 0
    while pos > 0 and newlines <= lines and read < limit:
        step = min(_BLOCK, pos)
        pos -= step
        f.seek(pos)
        chunk = f.read(step)
        chunks.append(chunk)
        read += len(chunk)
        newlines += chunk.count(b"\n")
    return b"".join(reversed(chunks))


def read_tail(path: str | os.PathLike[str], lines: int = DEFAULT_LINES) -> list[str]:
    """The last `lines` lines of the file at `path` ("-" reads stdin).

    Raises LogReadError with a one-line reason when the file cannot be read.
    """
    if lines < 1:
        raise ValueError("lines must be at least 1")
    if str(path) == "-":
        return read_tail_stream(sys.stdin.buffer, lines)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            data = _tail_bytes(f, size, lines)
    except FileNotFoundError:
        raise LogReadError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise LogReadError(f"is a directory, not a log: {path}") from None
    except PermissionError:
        raise LogReadError(f"permission denied: {path}") from None
    except OSError as e:
        raise LogReadError(f"cannot read {path}: {e.strerror or e}") from None
    return split_lines(decode(data), lines)


def read_tail_stream(stream: BinaryIO | Iterable[bytes], lines: int = DEFAULT_LINES) -> list[str]:
    """The last `lines` lines of a stream read to its end (a pipe, stdin).

    Memory stays bounded by the tail: older blocks are dropped as we go.
    """
    limit = _budget(lines)
    keep: list[bytes] = []
    kept_newlines = 0
    kept_bytes = 0
    blocks: Iterable[bytes]
    if hasattr(stream, "read"):
        reader: BinaryIO = stream  # type: ignore[assignment]
        blocks = iter(lambda: reader.read(_BLOCK), b"")
    else:
        blocks = stream
    for block in blocks:
        keep.append(block)
        kept_newlines += block.count(b"\n")
        kept_bytes += len(block)
        while len(keep) > 1 and (
            kept_newlines - keep[0].count(b"\n") > lines or kept_bytes > limit
        ):
            first = keep.pop(0)
            kept_newlines -= first.count(b"\n")
            kept_bytes -= len(first)
    return split_lines(decode(b"".join(keep)), lines)
