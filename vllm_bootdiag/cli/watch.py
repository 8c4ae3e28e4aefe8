"""`watch` (and `classify --follow`): follow a growing log or a pipe, and print the outcome
the moment the boot ends, so `kubectl logs -f POD | vllm-bootdiag watch -` answers while
the pod is still running, without waiting for a health check that will never pass.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import time
from collections.abc import Iterator
from typing import Any

from .errors import UsageError

POLL_SECONDS = 0.2
"""How often a growing file is looked at again (what `tail -f` does, roughly)."""
_MAX_SECONDS = 1e9
"""The longest --timeout taken (about 31 years; none is the default): select() cannot
wait for `inf` or 1e300 seconds."""
_CHUNK = 64 * 1024
_MAX_LINE_BYTES = 4 * 16_384
"""A line longer than this is cut (the rest is skipped up to its newline): the reader cuts
at 16 K characters anyway, and an endless line must not grow memory."""


def watch_args(sp: argparse.ArgumentParser, follow_only: bool = False) -> None:
    """--timeout: how long to wait for the boot to end."""
    sp.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help=("with --follow, " if follow_only else "")
        + "seconds to wait for the boot to end; then report what was seen (default: no limit)",
    )


def _lines(chunks: Iterator[bytes]) -> Iterator[str]:
    """Whole lines out of arriving chunks; a cut-off last line once the input ends."""
    from ..text.tail import decode

    pending = b""
    skipping = False
    for chunk in chunks:
        pending += chunk
        while True:
            nl = pending.find(b"\n")
            if nl < 0:
                break
            line, pending = pending[:nl], pending[nl + 1 :]
            if skipping:
                skipping = False
                continue
            yield decode(line)
        if len(pending) > _MAX_LINE_BYTES:
            if not skipping:
                yield decode(pending[:_MAX_LINE_BYTES])
            pending, skipping = b"", True
    if pending and not skipping:
        yield decode(pending)


def _pipe_chunks(fd: int, deadline: float | None) -> Iterator[bytes]:
    """A pipe's (or a FIFO's) bytes as they arrive, until it closes or the deadline."""
    while True:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return
        yield chunk


def _file_chunks(path: str, deadline: float | None) -> Iterator[bytes]:
    """A regular file's bytes from its start, then whatever is appended (a log cut back
    to empty, as by logrotate's copytruncate, is read again from its start)."""
    with open(path, "rb") as f:
        pos = 0
        while True:
            chunk = f.read(_CHUNK)
            if chunk:
                pos += len(chunk)
                yield chunk
                continue
            if deadline is not None and time.monotonic() >= deadline:
                return
            time.sleep(POLL_SECONDS)
            if os.fstat(f.fileno()).st_size < pos:
                f.seek(0)
                pos = 0


def _decompressed(chunks: Iterator[bytes], path: str) -> Iterator[bytes]:
    """`chunks`, decompressed as they come when the first one opens a gzip, bzip2 or xz
    stream (`classify` reads those too: read raw, a compressed log held "no vLLM output")."""
    import zlib

    from ..text.tail import _COMPRESSED, _UNSUPPORTED

    first = next(chunks, b"")
    for magic, name in _UNSUPPORTED.items():
        if first.startswith(magic):
            raise UsageError(f"{path} is {name}-compressed: decompress it first")
    fmt = next((f for m, f in _COMPRESSED.items() if first.startswith(m)), None)
    if fmt is None:
        yield first
        yield from chunks
        return
    if fmt == "gzip":
        dec: Any = zlib.decompressobj(wbits=31)
    elif fmt == "bzip2":
        import bz2

        dec = bz2.BZ2Decompressor()
    else:
        import lzma

        dec = lzma.LZMADecompressor()
    for chunk in _chain(first, chunks):
        try:
            out: bytes = dec.decompress(chunk)
        except (OSError, EOFError, ValueError, zlib.error) as e:
            raise UsageError(f"{path}: corrupt {fmt} data ({e})") from None
        if out:
            yield out


def _chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _chunks(path: str, deadline: float | None) -> Iterator[bytes]:
    import stat

    if path == "-":
        return _pipe_chunks(sys.stdin.fileno(), deadline)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"is a directory, not a log: {path}")
    if stat.S_ISREG(st.st_mode):
        return _file_chunks(path, deadline)
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        return _pipe_chunks(os.open(path, os.O_RDONLY), deadline)
    raise UsageError(f"cannot follow {path}: not a file, a pipe or -")


def _last_boot_start(args: argparse.Namespace, rules: Any) -> int:
    """The file line the last boot in a regular file's tail starts at (1 for one boot, a
    pipe, or what cannot be read now): a log appended across restarts holds the previous
    boot's end, which a watcher reading from the top reported as this boot's."""
    if args.log == "-" or not os.path.isfile(args.log):
        return 1
    from ..pipeline import classify
    from ..text import tail as text_tail

    try:
        t = text_tail.read(args.log, args.lines)
    except (text_tail.LogReadError, OSError):
        return 1  # the reading below says why, in its own words
    d = classify(t.lines, args.vllm_version, rules=rules, first_line=t.first_line or 1)
    return d.boot_start_line or 1 if d.boots_in_tail > 1 else 1


def cmd_watch(args: argparse.Namespace) -> int:
    """Feed every line to a BootWatcher; print its Diagnosis when the boot ends (or the
    input ends, or --timeout passes). Exit 0 when the server came up, else 1."""
    from . import Loading
    from .log_commands import ruleset, show_diagnosis

    with Loading():
        from ..engine import BootWatcher

    timeout: float | None = args.timeout
    if timeout is not None and not 0 < timeout < _MAX_SECONDS:  # nan, inf: no clock holds it
        raise UsageError(
            f"--timeout takes a number of seconds above 0 (below {_MAX_SECONDS:.0e}), "
            f"not {timeout!r}"
        )
    deadline = None if timeout is None else time.monotonic() + timeout
    rules = ruleset(args)
    start = _last_boot_start(args, rules)
    watcher = BootWatcher(
        version=args.vllm_version, lines=args.lines, rules=rules, first_line=start
    )
    seen: Any = None
    try:
        chunks = _decompressed(_chunks(args.log, deadline), args.log)
        for number, line in enumerate(_lines(chunks), 1):
            if number < start:  # an earlier boot's lines: its end is not this boot's
                continue
            seen = watcher.feed(line)
            if seen is not None:
                break
    except PermissionError:
        raise UsageError(f"permission denied: {args.log}") from None
    d = seen if seen is not None else watcher.diagnosis()
    if start > 1:
        note = f"the log holds an earlier boot; the one from line {start} was watched"
        d = d.model_copy(update={"notes": (*d.notes, note)})
    if seen is None:  # say why we answer now: an `unknown` alone reads as a verdict
        timed_out = deadline is not None and time.monotonic() >= deadline
        why = (
            f"no boot-ending line within --timeout {timeout:g} s (the boot may still be going)"
            if timed_out
            else "the input ended before the boot did (no boot-ending line in it)"
        )
        d = d.model_copy(update={"notes": (*d.notes, why)})
    show_diagnosis(d, args)
    booted = getattr(d.primary, "kind", "") == "booted"
    return 0 if booted else 1
