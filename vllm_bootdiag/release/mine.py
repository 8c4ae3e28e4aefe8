"""Mine a fleet's saved boot logs for the next rules to write.

A fleet keeps thousands of boot logs. Classifying each says how often each
failure happens; the ones no exact rule reads (`unknown`, or caught only by a
tolerant rule) are grouped by their error line with numbers, paths, hex ids and
pids masked (Drain-style: mask first, then count equal templates), ranked by
count, each with an example path. The top groups are the rules to write next.

Files are classified on every core, in chunks, and only counts and one example
per group are kept: memory is bounded by the number of distinct groups, not the
number of files.
"""

from __future__ import annotations

import fnmatch
import multiprocessing
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_GROUPS = 5000
"""Distinct masked lines kept; past it new ones count as one `(other)` group."""

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\x1b\[[0-9;]*m"), ""),
    (re.compile(r"(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|\b[A-Za-z]:\\[^\s'\"]+"), "<path>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<id>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b", re.I), "<hex>"),
    (re.compile(r"(?<![\w<])[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?"), "<n>"),
    (re.compile(r"\s+"), " "),
)


def mask(line: str) -> str:
    """An error line as a template: numbers, paths, hex ids, pids and uuids masked,
    the log record's prefix (process tag, level, time, source) cut."""
    from ..text.logline import parse

    text = parse(line).message
    for rx, repl in _MASKS:
        text = rx.sub(repl, text)
    return text.strip()[:300]


@dataclass(frozen=True, slots=True)
class One:
    """What one file said (the worker's answer, kept small to cross processes)."""

    path: str
    kind: str
    rule_id: str | None
    tier: str | None
    line: str | None
    error: str | None = None


def classify_one(path: str) -> One:
    """Classify one file as `classify_file` does; unreadable files are an answer, not an
    exception. The lines before the tail are not counted (a fleet's logs can be long,
    and an answer here carries no line numbers)."""
    from .. import logtail, pipeline
    from ..rules.ruleset import default_rules
    from ..text import tail as text_tail

    try:
        t = text_tail.read(path, logtail.DEFAULT_LINES, number_lines=False)
    except (logtail.LogReadError, OSError) as e:
        return One(path, "unreadable", None, None, None, str(e)[:200])
    d = pipeline.run(t.lines, None, default_rules())
    p = d.primary
    tier = getattr(d, "match", None)
    line: str | None = None
    if p.kind == "unknown":
        line = getattr(p, "last_error_line", None)
    elif tier == "tolerant" and p.evidence:
        line = p.evidence[0].text
    return One(path, p.kind, p.rule_id, tier, line)


def _chunk(paths: Sequence[str]) -> list[One]:
    return [classify_one(p) for p in paths]


@dataclass
class Group:
    """Logs whose error line masks to the same template."""

    pattern: str
    count: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    example: str = ""
    example_line: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "count": self.count,
            "kinds": dict(self.kinds.most_common()),
            "example": self.example,
            "example_line": self.example_line,
        }


@dataclass
class Mined:
    """A fleet's logs, counted."""

    files: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU time of this process and its workers: on a busy machine the wall-clock rate
    says more about the neighbours than about mining, this does not."""
    workers: int = 1
    kinds: Counter[str] = field(default_factory=Counter)
    rules: Counter[str] = field(default_factory=Counter)
    tiers: Counter[str] = field(default_factory=Counter)
    groups: dict[str, Group] = field(default_factory=dict)
    unreadable: list[tuple[str, str]] = field(default_factory=list)

    def add(self, one: One) -> None:
        self.files += 1
        self.kinds[one.kind] += 1
        if one.rule_id:
            self.rules[one.rule_id] += 1
        self.tiers[one.tier or "none"] += 1
        if one.kind == "unreadable":
            if len(self.unreadable) < 20:
                self.unreadable.append((one.path, one.error or ""))
            return
        if one.kind != "unknown" and one.tier != "tolerant":
            return
        pattern = mask(one.line) if one.line else "(no error line)"
        if pattern not in self.groups and len(self.groups) >= MAX_GROUPS:
            pattern = "(other)"
        group = self.groups.get(pattern)
        if group is None:
            group = self.groups[pattern] = Group(pattern, example=one.path)
            group.example_line = (one.line or "")[:500]
        group.count += 1
        group.kinds[one.kind if one.kind == "unknown" else f"tolerant:{one.kind}"] += 1

    def ranked(self) -> list[Group]:
        return sorted(self.groups.values(), key=lambda g: (-g.count, g.pattern))

    @property
    def rate(self) -> float:
        return self.files / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "seconds": round(self.seconds, 3),
            "logs_per_second": round(self.rate, 1),
            "cpu_seconds": round(self.cpu_seconds, 3),
            "workers": self.workers,
            "kinds": dict(self.kinds.most_common()),
            "rules": dict(self.rules.most_common()),
            "tiers": dict(self.tiers.most_common()),
            "groups": [g.as_dict() for g in self.ranked()],
            "unreadable": [{"path": p, "error": e} for p, e in self.unreadable],
        }


SKIPPED = (".json", ".md")
"""Not logs: a corpus's labels and READMEs (a file named on the command line is read)."""


class MineError(Exception):
    """A path to mine that does not exist: one line for the user."""


def files(roots: Iterable[str | Path], pattern: str = "*") -> Iterator[str]:
    """Every regular file under `roots` matching `pattern` (a file given is taken as
    is), but SKIPPED ones; walked lazily, in a stable order."""
    for root in roots:
        p = Path(root)
        if p.is_file():
            yield str(p)
            continue
        if not p.is_dir():
            raise MineError(f"no such file or directory: {p}")
        for dirpath, dirnames, names in os.walk(p):
            dirnames.sort()
            for name in sorted(names):
                if name.endswith(SKIPPED) or not fnmatch.fnmatch(name, pattern):
                    continue
                path = os.path.join(dirpath, name)
                if _special(path):
                    continue
                yield path


def _special(path: str) -> bool:
    """A FIFO, socket or device found in a folder: reading one could wait forever.
    (A dangling link is kept: it is reported as unreadable.)"""
    import stat

    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _batches(paths: Iterator[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for path in paths:
        batch.append(path)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _pool(workers: int) -> ProcessPoolExecutor:
    """Workers forked where that is safe and cheap (Linux), so each starts with the
    rule table already compiled."""
    methods = multiprocessing.get_all_start_methods()
    fork = sys.platform == "linux" and "fork" in methods
    ctx = multiprocessing.get_context("fork" if fork else None)
    return ProcessPoolExecutor(workers, mp_context=ctx)


def mine(
    roots: Iterable[str | Path],
    *,
    pattern: str = "*",
    workers: int | None = None,
    batch: int = 64,
    progress: Callable[[int, float], None] | None = None,
) -> Mined:
    """Classify every file under `roots` on `workers` processes (all cores by default)."""
    n = workers or os.cpu_count() or 1
    _warm(every_rule=n > 1)
    out = Mined(workers=n)
    start = time.perf_counter()
    cpu = _cpu()
    batches = _batches(files(roots, pattern), batch)
    if n <= 1:
        for b in batches:
            for one in _chunk(b):
                out.add(one)
            if progress:
                progress(out.files, time.perf_counter() - start)
    else:
        with _pool(n) as pool:
            pending: list[Any] = []
            for b in batches:  # at most 4 batches a worker in flight: bounded memory
                pending.append(pool.submit(_chunk, b))
                if len(pending) >= 4 * n:
                    for one in pending.pop(0).result():
                        out.add(one)
                    if progress:
                        progress(out.files, time.perf_counter() - start)
            for fut in pending:
                for one in fut.result():
                    out.add(one)
    out.seconds = time.perf_counter() - start
    out.cpu_seconds = _cpu() - cpu
    if progress:
        progress(out.files, out.seconds)
    return out


def _warm(every_rule: bool) -> None:
    """Load the engine once here, before any worker forks: with `every_rule`, compile
    every rule's patterns and build every outcome's validator too (both are otherwise
    built on first use), so each worker starts ready instead of building them again."""
    from .. import outcomes, pipeline
    from ..rules.ruleset import default_rules

    pipeline.classify("")
    if every_rule:
        for rule in default_rules():
            _ = rule.compiled
        for kind in outcomes.OUTCOME_TYPES.values():
            kind.model_rebuild()


def _cpu() -> float:
    """User and system CPU seconds of this process and its finished children."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
