"""Is this vLLM's output at all? An empty file, an nginx log, random bytes or a gzip read
as text are not a boot that failed in a way we do not know: they are the wrong input, and
saying so (with how many lines were looked at) beats a bare `unknown`.
"""

from __future__ import annotations

from collections.abc import Iterable

from .wrappers import Lazy

# vLLM's logger: `%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s` with
# datefmt "%m-%d %H:%M:%S" (vllm/logger.py `_FORMAT`, 0.8.5-0.32.0), possibly behind a
# process tag, a launcher's or a container runtime's prefix: searched, not anchored.
# Every part is bounded or a single character class, so a search is linear in the line.
_RECORD = Lazy(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? "
    r"\[[\w./-]{1,200}\.py:\d{1,6}\]"
)


def is_vllm_output(lines: Iterable[str]) -> bool:
    """True when any line is a vLLM logger record or names vLLM (a traceback through
    `vllm/`, the `vllm serve` command, the banner)."""
    return any("vllm" in line.lower() or _RECORD.search(line) is not None for line in lines)
