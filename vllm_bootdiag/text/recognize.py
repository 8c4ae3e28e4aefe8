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
# Every part is bounded or a single character class, so a search is linear in the line;
# it starts at the dash of the timestamp (a literal, found fast: an alternation of the
# levels first would be tried at every character, 70 us on a 16 KB line).
_RECORD = re.compile(
    r"-(?<=\d\d-)(?:"
    + "|".join(
        rf"(?<={level} \d\d-)" for level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
    )
    + r")\d\d \d\d:\d\d:\d\d(?:[.,]\d{1,6})? \[[\w./-]{1,200}\.py:\d{1,6}\]"
)


def is_vllm_output(lines: Iterable[str]) -> bool:
    """True when any line is a vLLM logger record or names vLLM (a traceback through
    `vllm/`, the `vllm serve` command, the banner). Most often the first line says so."""
    search = _RECORD.search
    return any(search(line) is not None or "vllm" in line.lower() for line in lines)
