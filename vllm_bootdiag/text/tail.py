"""Read the last lines of a log without holding the whole log.

A worker's log can be gigabytes; only its tail matters. A regular file is read
backwards from its end in blocks, so the cost is proportional to the tail. Anything
else (a pipe, a FIFO, a socket, `/proc/...`, `/dev/stdin`, `<(...)`) has no trustworthy
size and is read to its end as a stream, keeping only the last blocks, so memory is
bounded by the tail asked for. A gzip, bzip2 or xz file is decompressed as a stream.
Bytes are decoded with replacement: no byte sequence makes reading fail.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from typing import BinaryIO, NamedTuple

from . import returns

DEFAULT_LINES = 400
"""What serving workers keep: RunPod's worker-vllm keeps the last 400 lines."""

MAX_LINES = 100_000
"""The longest tail we read. A boot's story is in its last few hundred lines; a bigger
request (`--lines 10**12`) would only make memory grow with the log."""

MAX_LINE_CHARS = 16_384
"""Longer lines are cut: vLLM's own lines are far shorter, and a 50 MB line
(a binary dump, a runaway progress bar) must not cost regex time."""

MIN_TAIL_BYTES = 1024 * 1024
MAX_TAIL_BYTES = 64 * 1024 * 1024
"""Reading stops after `lines` newlines or `lines * MAX_LINE_CHARS` bytes (at least
MIN_TAIL_BYTES, at most MAX_TAIL_BYTES), so the cost is bounded by the tail asked
for, even in a file with no newlines."""

COUNT_LIMIT_BYTES = 256 * 1024 * 1024
"""Numbering the tail's lines from the file's first line means counting the newlines
before it; past this many bytes we do not, and `first_line` is None."""

_BLOCK = 64 * 1024
_COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}
_UNSUPPORTED = {b"\x28\xb5\x2f\xfd": "zstd", b"PK\x03\x04": "zip"}


class LogReadError(Exception):
    """The log could not be read (missing, a directory, no permission, corrupt archive)."""


class LogTail(NamedTuple):
    """The last lines of a log and where they start in it.

    `first_line` is the 1-based line number of `lines[0]` in the whole input, so a
    report can say "line 5123" of the file, not of the tail; None when it was not
    counted (a regular file over COUNT_LIMIT_BYTES before its tail, or not asked).
    `compression` names the format the log was decompressed from, if any.
    """

    lines: list[str]
    first_line: int | None = 1
    compression: str | None = None


def split_lines(text: str, lines: int | None = DEFAULT_LINES) -> list[str]:
    """Split text into lines, dropping CR line ends and cutting overlong lines.

    `\\r\\n` and `\\n` end a line. A lone `\\r` is a progress-bar redraw (tqdm):
    like a terminal, we keep what was drawn last; where the parts between the `\\r`
    are lines and not a bar's frames (a log with classic-Mac line ends), it ends a line
    too (see `returns`). Only the last `lines` lines are kept (all of them when `lines`
    is None).
    """
    return split_tail(text, lines)[0]


def split_tail(text: str, lines: int | None = DEFAULT_LINES) -> tuple[list[str], int]:
    """The last `lines` lines of `text` as `split_lines` reads them, and how many lines
    come before them (a text of carriage returns is not split whole to count them)."""
    out = text.split("\n")
    redrawn = "\r" in text
    if redrawn:
        # A `\r` before a `\n` goes, as `text.replace("\r\n", "\n")` says, without that
        # search for the pair: it crawls through a run of `\r` (6.5 MB of them: 90 ms).
        out[:-1] = [s[:-1] if s[-1:] == "\r" else s for s in out[:-1]]
        redrawn = any(["\r" in s for s in out])
    if out and out[-1] == "":
        out.pop()
    before = 0
    # Per-line work only where some line needs it (most logs have no CR, no long line).
    if redrawn:
        out, before = returns.read(out, lines)
    elif lines is not None and len(out) > lines:
        before = len(out) - lines
        out = out[-lines:]
    if len(text) > MAX_LINE_CHARS and max(map(len, out), default=0) > MAX_LINE_CHARS:
        out = [cut_line(line, len(out) + before) for line in out]
    return out, before


_last_redraw = returns.last_redraw
"""(Its old name here, which tests/test_text_tail.py holds to its reference.)"""


def cut_line(line: str, rows: int = 1) -> str:
    """A line cut to MAX_LINE_CHARS: its start, where a message says what it is about. In
    an input of a few `rows` (a pasted document), an escaped log (a JSON document, a list's
    repr or a string's inside, with `\\n` escapes every few rows: a worker's error field)
    is many lines in one: it is kept up to MAX_DOCUMENT_CHARS, past that its first rows
    (the banner's version) and its last ones (what ended the boot), an escaped newline
    between."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    if rows > DOCUMENT_ROWS or line.count("\\n", 0, 4096) < 8:
        return line[:MAX_LINE_CHARS]
    if len(line) <= MAX_DOCUMENT_CHARS:
        return line
    return line[:_DOCUMENT_HEAD] + "\\n" + line[_DOCUMENT_HEAD + 2 - MAX_DOCUMENT_CHARS :]


DOCUMENT_ROWS = 8
"""The most rows an input may have for a long row of it to be kept as an escaped log."""
MAX_DOCUMENT_CHARS = 256 * 1024
"""The longest escaped log kept whole (a tail of 400 lines of vLLM's is 40-120 KB)."""
_DOCUMENT_HEAD = 2048
"""How much of an escaped log's start a cut keeps (vLLM's banner is in its first rows)."""


def decode(data: bytes) -> str:
    """Decode log bytes as UTF-8, replacing what is not, and dropping NULs."""
    text = data.decode("utf-8", errors="replace")
    return text.replace("\x00", "") if b"\x00" in data else text


def check_lines(lines: int) -> int:
    """`lines` if it is a tail length we read, else ValueError saying the range."""
    if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= MAX_LINES:
        raise ValueError(f"lines must be a whole number from 1 to {MAX_LINES}, not {lines!r}")
    return lines


def _budget(lines: int) -> int:
    return min(MAX_TAIL_BYTES, max(MIN_TAIL_BYTES, lines * MAX_LINE_CHARS))


def _numbered(data: bytes, lines: int, lines_before: int | None) -> tuple[list[str], int | None]:
    """The last `lines` lines of `data`, and the input line number of the first one,
    given how many lines of the input came before `data`."""
    kept, before = split_tail(decode(data), lines)
    if lines_before is None:
        return kept, None
    return kept, lines_before + 1 + before


# --- regular files: backwards from the end ---------------------------------------------


def _tail_bytes(f: BinaryIO, size: int, lines: int) -> tuple[bytes, int]:
    """Read blocks backwards from the end until `lines` newlines are seen; the bytes and
    the offset they start at."""
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
    return b"".join(reversed(chunks)), pos


def _newlines_before(f: BinaryIO, offset: int) -> int | None:
    """How many lines end before `offset`, or None past COUNT_LIMIT_BYTES."""
    if offset > COUNT_LIMIT_BYTES:
        return None
    f.seek(0)
    count = 0
    left = offset
    while left > 0:
        block = f.read(min(1024 * 1024, left))
        if not block:
            break
        count += block.count(b"\n")
        left -= len(block)
    return count


# --- streams: forward to the end, the last blocks kept ------------------------------------


def _blocks(stream: BinaryIO | Iterable[bytes]) -> Iterator[bytes]:
    if hasattr(stream, "read"):
        reader: BinaryIO = stream  # type: ignore[assignment]
        return iter(lambda: reader.read(_BLOCK), b"")
    return iter(stream)


def _stream_tail(blocks: Iterable[bytes], lines: int) -> tuple[bytes, int]:
    """The last blocks holding `lines` lines (within the byte budget), and how many
    lines ended in the blocks dropped before them."""
    limit = _budget(lines)
    keep: deque[bytes] = deque()
    counts: deque[int] = deque()
    kept_newlines = 0
    kept_bytes = 0
    dropped_newlines = 0
    for block in blocks:
        if not block:
            continue
        n = block.count(b"\n")
        keep.append(block)
        counts.append(n)
        kept_newlines += n
        kept_bytes += len(block)
        while len(keep) > 1 and (kept_newlines - counts[0] > lines or kept_bytes > limit):
            first = keep.popleft()
            first_n = counts.popleft()
            kept_newlines -= first_n
            kept_bytes -= len(first)
            dropped_newlines += first_n
    return b"".join(keep), dropped_newlines


def _decompressed(head: bytes, stream: BinaryIO, name: str) -> tuple[BinaryIO, str | None]:
    """`stream` itself, or a decompressing reader over it when `head` is an archive's magic."""
    for magic, fmt in _UNSUPPORTED.items():
        if head.startswith(magic):
            raise LogReadError(f"{name} is {fmt}-compressed: decompress it first")
    for magic, fmt in _COMPRESSED.items():
        if head.startswith(magic):
            if fmt == "gzip":
                import gzip

                return gzip.GzipFile(fileobj=stream, mode="rb"), fmt  # type: ignore[return-value]
            if fmt == "bzip2":
                import bz2

                return bz2.BZ2File(stream), fmt  # type: ignore[return-value]
            import lzma

            return lzma.LZMAFile(stream), fmt  # type: ignore[return-value]
    return stream, None


def _read_stream(stream: BinaryIO | Iterable[bytes], lines: int, name: str) -> LogTail:
    """A stream's tail: peek at its first bytes for an archive, then read it to its end."""
    blocks = _blocks(stream)
    head = next(blocks, b"")
    compression: str | None = None
    if head and any(head.startswith(m) for m in (*_COMPRESSED, *_UNSUPPORTED)):
        rest = _Chained(head, blocks)
        reader, compression = _decompressed(head, io.BufferedReader(rest), name)
        # read1: one decompression step a block, so an archive cut short (a copy or a
        # download stopped, a log still being written) yields all it held before the EOF;
        # read(n) loses what it had gathered for that block when the EOF comes
        step = getattr(reader, "read1", reader.read)
        blocks = _guarded(iter(lambda: step(_BLOCK), b""), compression or "", name)
    else:
        blocks = _prepend(head, blocks)
    data, dropped = _stream_tail(blocks, lines)
    kept, first = _numbered(data, lines, dropped)
    return LogTail(kept, first, compression)


def _prepend(head: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield head
    yield from rest


def _guarded(blocks: Iterator[bytes], fmt: str, name: str) -> Iterator[bytes]:
    """Decompressed blocks; a log cut off mid-archive still yields what it held (its tail
    is what was written last), corrupt data is a LogReadError."""
    import zlib

    got = False
    try:
        for block in blocks:
            got = got or bool(block)
            yield block
    except EOFError:
        if got:
            return
        # nothing decoded at all (a bzip2 block is read whole): not "no vLLM output"
        raise LogReadError(
            f"{name}: the {fmt} data is cut short before anything in it can be read"
        ) from None
    except (OSError, zlib.error, ValueError) as e:
        raise LogReadError(f"{name}: corrupt {fmt} data ({e})") from None


class _Chained(io.RawIOBase):
    """A raw, read-only file over bytes already read and the blocks still to come."""

    def __init__(self, head: bytes, rest: Iterator[bytes]) -> None:
        super().__init__()
        self._buf = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buf:
            nxt = next(self._rest, None)
            if nxt is None:
                return 0
            self._buf = nxt
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


# --- the entry points --------------------------------------------------------------------


def read(
    path: str | os.PathLike[str], lines: int = DEFAULT_LINES, *, number_lines: bool = True
) -> LogTail:
    """The last `lines` lines of the log at `path` ("-" reads stdin), with the input line
    number they start at (`number_lines=False` skips counting a regular file's prefix).

    Raises LogReadError with a one-line reason when the log cannot be read, ValueError
    when `lines` is outside 1..MAX_LINES.
    """
    check_lines(lines)
    name = str(path)
    if name == "-":
        return _read_stream(sys.stdin.buffer, lines, "stdin")
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            device = stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            if device and not (os.isatty(f.fileno()) or os.path.samefile(path, os.devnull)):
                kind = "character" if stat.S_ISCHR(st.st_mode) else "block"
                raise LogReadError(f"is a {kind} device, not a log: {name}")
            if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                # pipes, FIFOs, sockets, /proc files (size 0), growing empty files
                return _read_stream(f, lines, name)
            head = f.read(8)
            if any(head.startswith(m) for m in (*_COMPRESSED, *_UNSUPPORTED)):
                f.seek(0)
                return _read_stream(f, lines, name)
            data, start = _tail_bytes(f, st.st_size, lines)
            before = _newlines_before(f, start) if number_lines else None
    except FileNotFoundError:
        raise LogReadError(f"no such file: {name}") from None
    except IsADirectoryError:
        raise LogReadError(f"is a directory, not a log: {name}") from None
    except PermissionError:
        raise LogReadError(f"permission denied: {name}") from None
    except OSError as e:
        raise LogReadError(f"cannot read {name}: {e.strerror or e}") from None
    kept, first = _numbered(data, lines, before)
    return LogTail(kept, first)


def read_tail(path: str | os.PathLike[str], lines: int = DEFAULT_LINES) -> list[str]:
    """The last `lines` lines of the log at `path` ("-" reads stdin); see `read`."""
    return read(path, lines, number_lines=False).lines


def read_tail_stream(stream: BinaryIO | Iterable[bytes], lines: int = DEFAULT_LINES) -> list[str]:
    """The last `lines` lines of a stream read to its end (a pipe, stdin).

    Memory stays bounded by the tail: older blocks are dropped as we go.
    """
    check_lines(lines)
    return _read_stream(stream, lines, "stream").lines
