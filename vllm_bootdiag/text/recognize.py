"""Is this vLLM's output at all? An empty file, an nginx log, random bytes or a gzip read
as text are not a boot that failed in a way we do not know: they are the wrong input, and
saying so (with how many lines were looked at) beats a bare `unknown`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# vLLM's logger: `%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s` with
# datefmt "%m-%d %H:%M:%S" (vllm/logger.py `_FORMAT`, 0.8.5-0.32.0), possibly behind a
# process tag, a launcher's or a container runtime's prefix: searched, not anchored.
# Every part is bounded or a single character class, so a search is linear in the line.
# A line is searched from the dash of the timestamp (a literal, found fast: the levels'
# alternation first is tried at every character, 70 us on a 16 KB line), its source a
# run of path characters (a looser `[^]]{1,200}` cost a 16 KB run of
# `ERROR 01-02 03:04:05 [` 200 steps a dash, 0.5 ms a line).
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_RECORD = re.compile(
    r"-(?<=\d\d-)(?:"
    + "|".join(rf"(?<={level} \d\d-)" for level in _LEVELS)
    + r")\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? \[[\w./-]{1,200}\.py:\d{1,6}\]"
)
"""`LEVEL mm-dd HH:MM:SS[.f] [file.py:N]`, found by its dash."""


def is_vllm_output(lines: Iterable[str]) -> bool:
    """True when any line is a vLLM logger record or names vLLM (a traceback through
    `vllm/`, the `vllm serve` command, the banner). Most often the first line says so."""
    record = _RECORD.search
    return any(
        (
            "[" in line
            and "]" in line
            and "." in line
            and ".py:" in line
            and record(line) is not None
        )
        or (("v" in line or "V" in line) and "vllm" in (low := line.lower()) and _names_vllm(low))
        for line in lines
    )  # (one-character tests first, at memchr speed: a 16 KB run of dashes costs the
    # record's search 0.3-0.7 ms, as every dash is tried, and `lower` copies the line;
    # then the `]` and `.py:` every record holds: 16 KB of stamps with no source cost the
    # search 140 us, the `.py:` 9 us (led by its `.`: 1 us where none is), the `]` 0.1)


def _names_vllm(low: str) -> bool:
    """`vllm` in a lower-cased line, other than in our own name: `/proc/self/status` of
    `vllm-bootdiag`, or a shell's `vllm-bootdiag: command not found`, is not vLLM's output."""
    return "vllm" in low.replace("vllm-bootdiag", "").replace("vllm_bootdiag", "")
