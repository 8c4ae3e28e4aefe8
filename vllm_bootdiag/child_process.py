"""The child's process group from outside: is the server answering, is any of its
processes still alive, signal all of them. The supervisor runs vLLM in its own
group (an engine core and workers besides the leader), so every stop is a group's.
`Boot` is what one launch ended in; `output_pieces` reads the child's output in bounded
memory."""

from __future__ import annotations

import codecs
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import suppress
from typing import IO

from .diagnosis import Diagnosis


def health_ok(port: int, timeout: float = 1.0) -> bool:
    """GET http://127.0.0.1:<port>/health returned 200 (no proxy, loopback only)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/health", timeout=timeout) as resp:
            return int(resp.status) == 200
    except (OSError, urllib.error.URLError, ValueError):
        return False


class LaunchError(RuntimeError):
    """The command could not be started at all (not found, not executable, port taken)."""


def killpg(pgid: int, sig: int) -> None:
    """Signal every process of the group; one already gone is not an error."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc"):
        return True
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


class Boot:
    """What one launch ended in."""

    def __init__(
        self,
        kind: str,
        diagnosis: Diagnosis | None,
        exit_code: int | None,
        seconds: float,
        health: bool = False,
    ) -> None:
        self.kind = kind
        self.diagnosis = diagnosis
        self.exit_code = exit_code
        self.seconds = seconds
        self.health = health


PIECE_BYTES = 64 * 1024
"""The most of one output line held at once: a child that prints without a newline (a
progress bar redrawn with CR for an hour, or junk) must not grow the supervisor's memory."""


def output_pieces(stream: IO[bytes]) -> Iterator[tuple[str, bool]]:
    """The child's output as (text, whole): whole lines with their line end dropped, and
    the pieces of a line longer than PIECE_BYTES (whole=False for every piece but its
    last). UTF-8 cut between pieces is decoded whole; what is not UTF-8 is replaced."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for raw in iter(lambda: stream.readline(PIECE_BYTES), b""):
        whole = raw.endswith(b"\n")
        text = decoder.decode(raw, final=whole)
        yield (text.rstrip("\r\n"), True) if whole else (text, False)
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail, False
