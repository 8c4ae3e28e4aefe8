"""Parse one line of `vllm serve` output into its parts.

vLLM wraps its messages in layers that changed across releases: a process tag
`(EngineCore_DP0 pid=12)` (ANSI-coloured in some releases), a level, an
`mm-dd HH:MM:SS` timestamp, a `[file.py:N]` source, and then the message. Raw
stderr (tracebacks, tqdm bars) has fewer layers or none. Container runtimes put
their own RFC 3339 timestamp (and a stream name) in front of it all. Rules match
the message only, so every wrapping reduces to the same text.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

_ANSI = regex.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# Docker (`docker logs -t`) and Kubernetes/CRI (`<ts> stdout F <line>`) prefixes.
_RUNTIME = regex.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]+"
    r"(?:(?:stdout|stderr)[ \t]+[FP][ \t]+)?"
)

_PROC = regex.compile(r"^\((?P<proc>[A-Za-z][\w =.-]*?) pid=(?P<pid>\d+)\)\s*")

_RECORD = regex.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+"
    r"(?P<ts>\d\d-\d\d \d\d:\d\d:\d\d)(?:[.,]\d+)?\s+"
    r"\[(?P<file>[^\]\s]+?):(?P<lineno>\d+)\]\s?(?P<msg>.*)$",
    regex.DOTALL,
)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of output with vLLM's wrapping taken apart.

    `message` is what the rule patterns see. For a raw stderr line (a traceback,
    a progress bar) it is the line itself, less ANSI codes and prefixes.
    """

    number: int
    raw: str
    message: str
    process: str | None = None
    pid: int | None = None
    level: str | None = None
    timestamp: str | None = None
    source: str | None = None

    @property
    def is_error(self) -> bool:
        """ERROR or CRITICAL records."""
        return self.level in ("ERROR", "CRITICAL")


def strip_wrapping(raw: str) -> str:
    """Drop CR, ANSI codes and a container-runtime prefix; keep everything else."""
    text = raw.rstrip("\r\n")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if text[:1].isdigit():
        text = _RUNTIME.sub("", text, count=1)
    return text


def parse(raw: str, number: int = 0) -> LogLine:
    """Parse one line; `number` is its 1-based position in the tail."""
    text = strip_wrapping(raw)
    process: str | None = None
    pid: int | None = None
    if text.startswith("("):
        m = _PROC.match(text)
        if m:
            process, pid = m["proc"], int(m["pid"])
            text = text[m.end() :]
    rec = _RECORD.match(text) if text[:1] in "DIWEC" else None
    if rec is None:
        return LogLine(number, raw, text.strip(), process, pid)
    level = "WARNING" if rec["level"] == "WARN" else rec["level"]
    return LogLine(
        number,
        raw,
        rec["msg"].strip(),
        process,
        pid,
        level,
        rec["ts"],
        f"{rec['file']}:{rec['lineno']}",
    )
