"""The clean-tail check's scans against the plain statement of what they look for.

`damage_check.damaged` finds each sign with a pattern that leaves out where vLLM puts
it and counts the commonest clean places instead of looking at them. Here each sign is
found the plain way (every occurrence, one at a time) and judged by the rule the check
states; the two must agree on every corpus tail, every damaged copy of it, and lines
hypothesis splices signs into. And wherever the check calls a tail clean, no per-line
repair step changes any of its lines: the check never hides damage.
"""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import damage_check, row_scan
from vllm_bootdiag.text import normalize as norm
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.wrappers import ESC_CSI, PREFIX_AT_START, PREFIXES

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
_HEAD = re.compile(damage_check.HEAD.pattern)
_RECORD = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d")
_RAW = ("Traceback (most recent call last)", "INFO:     ", "WARNING:     ", "ERROR:     ",
        "usage: ")  # fmt: skip


def _occurrences(doc: str, needle: str) -> list[int]:
    found, pos = [], doc.find(needle)
    while pos >= 0:
        found.append(pos)
        pos = doc.find(needle, pos + 1)
    return found


def _at_head(doc: str, pos: int) -> bool:
    before = doc[doc.rfind("\n", 0, pos) + 1 : pos]
    head = _HEAD.match(before)
    return head is not None and head.end() == len(before)


def reference(doc: str) -> bool:
    """`damaged`, said plainly: a wrapper at a line's start, caret or bare ANSI, or a
    sign that is not where vLLM puts it."""
    if PREFIX_AT_START.search(doc) or "^[[" in doc or "␛[" in doc or "\xa0" in doc:
        return True
    if re.search(r"(?<!\x1b)\[0(?:;0)?m", doc):
        return True
    doc = ESC_CSI.sub("", doc)
    for p in _occurrences(doc, 'File "'):  # two spaces at a line's start, or three after a head
        line_start = doc[p - 3 : p] == "\n  "
        after_head = doc[p - 3 : p] == "   " and doc[p - 4] in "])" and _at_head(doc, p - 3)
        if not (line_start or after_head):
            return True
    if any(not _at_head(doc, p) for raw in _RAW for p in _occurrences(doc, raw)):
        return True
    for m in _RECORD.finditer(doc):
        p = m.start()
        start = doc.rfind("\n", 0, p) + 1
        after_tag = (
            doc[start] == "(" and doc.find(") ", start) == p - 2 and "(" not in doc[start + 1 : p - 2]
        )
        after_head = _at_head(doc, p) and "]" not in doc[start:p]  # not after a record's
        if not (doc[p - 1] == "\n" or after_tag or after_head):
            return True
    return False


def _doc(lines: list[str]) -> str:
    return "\n" + "\n".join(lines)


def _repaired(lines: list[str]) -> bool:
    """Whether a per-line step changes any line (what `damaged` must not miss). A row
    that is a wrapper alone and nothing else (`>`, `  |`) is left out: the wrappers'
    search over the joined text reads their `$` as the text's end, not a line's, and
    such a row is as often the end of a wrapped row (`<module` / `>`) as a quote. So is
    a record after a parenthesized prefix at a line's start that is not vLLM's
    `(Name pid=N)` tag: the check takes it for a tag, as it must for Ray's
    `(RayWorkerWrapper pid=3, ip=...)`, which `split_collapsed` would cut off."""
    for line in lines:
        rows, names = norm._per_line(line)
        if names == ["split_collapsed"] and rows[0][:1] == "(" and rows[0][-1:] == ")":
            continue
        if names and any(row.strip() for row in rows):
            return True
    return False


def _by_rows(lines: list[str]) -> bool:
    """The check as the pipeline runs it (the lines known: `row_scan` answers first), and
    where it calls the tail clean, the rows it hands the rejoin are `slow_rows`'."""
    got, slow = damage_check.check(Joined.of(lines))
    if slow is not None:
        assert not got and slow == row_scan.slow_rows(lines)
    joined = Joined.of(lines)
    rows = row_scan._rows(lines, joined.doc)
    if rows is not None:  # the tags come off the coloured text as off the plain one
        plain = joined.plain
        for tag in rows[0]:
            plain = plain.replace("\n" + tag + " ", "\n\x01")
        assert row_scan._untagged(Joined.of(lines), rows[0], rows[2]) == plain
    return got


def test_the_check_agrees_with_its_plain_statement_on_the_corpus_and_its_damaged_copies() -> None:
    checked = damaged = 0
    for log in LOGS[::2]:
        tail = logtail.read_tail(log)
        for lines in [tail, *(d.apply(list(tail)) for d in damages.DAMAGES)]:
            doc = _doc(lines)
            got = damage_check.damaged(doc)
            assert got == reference(doc) == _by_rows(lines), log.name
            assert got or not _repaired(lines), log.name
            checked += 1
            damaged += got
    assert checked > 2000
    assert 0.3 < damaged / checked < 0.9  # both clean and damaged tails were checked


_POOL = sorted({line for log in LOGS[::6] for line in logtail.read_tail(log)[-40:]})
_SIGNS = (
    "INFO 01-02 03:04:05 [api_server.py:1] ", "ERROR 11-29 17:04:04 [core.py:12] ",
    "WARNING 01-02 03:04:05 ", "CRITICAL 01-02 03:04:05.123 [x.py:9]   File \"a.py\"",
    "(EngineCore_DP0 pid=12) ", "(APIServer pid=1)", "(Worker_TP1 pid=7) ERROR 01-02 03:04:05 ",
    '  File "/x/y.py", line 3, in f', '   File "', 'File "', "Traceback (most recent call last):",
    "INFO:     ", "WARNING:     ", "ERROR:     ", "usage: vllm serve", "\x1b[0m", "\x1b[1;36m",
    "[0m", "[0;0m", "^[[0;36m", "␛[0m", "  ", ") ", "\n", "-", "01-02 03:04:05", "{",
    "\x1b[0;36m(APIServer pid=1)\x1b[0;0m ", "\n(EngineCore_DP0 pid=12)", "(Worker pid=3)x",
    "\n    ~~~~^^^^", "\n  ```", "\n<details>", "\n\t", "\n[Gloo] ", "\n  ",
    "\n(APIServer pid=1)   File \"", "ERROR 01-02 03:04:05 [core.py:9]   File \"a\", line 1, in f",
    "\n(APIServer pid=2) INFO:     ", "\nERROR 01-02 03:04:05 [core.py:9] Traceback (most recent "
    "call last):", "\x1b[32mINFO\x1b[0m \x1b[90m01-02 03:04:05\x1b[0m ",
)  # fmt: skip
"""What the check looks for, and pieces of it, to splice anywhere into real lines."""


@st.composite
def _spliced(draw: st.DrawFn) -> list[str]:
    lines = draw(st.lists(st.sampled_from(_POOL), min_size=1, max_size=12))
    for _ in range(draw(st.integers(0, 4))):
        k = draw(st.integers(0, len(lines) - 1))
        at = draw(st.integers(0, len(lines[k])))
        sign = draw(st.sampled_from(_SIGNS))
        lines[k] = lines[k][:at] + sign + lines[k][at:]
    return "\n".join(lines).split("\n")


@settings(max_examples=600, deadline=None)
@given(_spliced())
def test_the_check_agrees_with_its_plain_statement_where_signs_are_spliced_in(
    lines: list[str],
) -> None:
    doc = _doc(lines)
    got = damage_check.damaged(doc)
    assert got == reference(doc) == _by_rows(lines)
    assert got or not _repaired(lines)


_RUNS = ("-", "01-", "INFO 01-", ":", "01:", "01-01 01:01:01 ", "INFO 01-02 03:",
         "INFO 01-02 03:04:", "-:", "x", " ", "[0", "[0;")  # fmt: skip
"""16 KB runs a long tail's lines end in: the check's count of the records inside lines
takes another road when dashes, or dashes and colons, are many; a long tail's colour
resets are searched for each alone."""


@st.composite
def _long_spliced(draw: st.DrawFn) -> list[str]:
    lines = draw(_spliced())
    runs = draw(st.lists(st.sampled_from(_RUNS), min_size=1, max_size=3))
    for k, run in enumerate(runs * (5 // len(runs) + 1)):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, lines[k % len(lines)] + (run * (16384 // len(run)))[:16000])
    return lines


@settings(max_examples=120, deadline=None)
@given(_long_spliced())
def test_the_check_agrees_with_its_plain_statement_on_long_tails(lines: list[str]) -> None:
    doc = _doc(lines)
    assert len(doc) >= 65536
    got = damage_check.damaged(doc)
    assert got == reference(doc) == _by_rows(lines)
    assert got or not _repaired(lines)


_RECORD_LINES = ("(APIServer pid=1) INFO 11-29 16:19:50 [api_utils.py:347] ",
                 "ERROR 11-29 16:20:31 [core.py:1] ", "", "  | INFO 11-29 16:19:50 [a.py:1] ")  # fmt: skip
_INSIDE = ("", " INFO 01-02 03:04:05 [x.py:1] inside", " (Worker pid=3) ERROR 01-02 03:04:05 x")


@pytest.mark.parametrize("run", _RUNS)
def test_each_road_of_the_record_count_agrees_on_long_tails_of_one_run(run: str) -> None:
    """Tails of 16 KB lines of one run each, with a record inside a line or none: each road
    the count of records takes (by the dashes, the first or the second colon of a time, or
    the levels) answers as the plain statement does."""
    for head, inside in itertools.product(_RECORD_LINES, _INSIDE):
        lines = [(head + run * (16384 // len(run)))[:16000] for _ in range(6)]
        lines[3] = lines[3][:7000] + inside + lines[3][7000:]
        doc = _doc(lines)
        assert damage_check.damaged(doc) == reference(doc) == _by_rows(lines), (head, inside)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_spliced(), _long_spliced()))
def test_a_long_texts_line_starts_are_read_where_its_lines_start(lines: list[str]) -> None:
    """A text over `_LONG_TEXT` whose lines are known is read at each line start by a
    match there: the same answer as the scans (the bound lowered to hold it to every
    text drawn)."""
    doc = _doc(lines)
    bound = damage_check._LONG_TEXT
    damage_check._LONG_TEXT = 0
    try:
        got = damage_check.damaged(Joined.of(lines))
    finally:
        damage_check._LONG_TEXT = bound
    assert got == reference(doc) == damage_check.damaged(doc)


def test_no_wrapper_matches_nothing() -> None:
    """The one-scan wrapper search tells a wrapper by a non-empty match."""
    for name, pattern in PREFIXES:
        assert pattern.match("") is None, name
        assert pattern.match("\n") is None, name


def test_the_row_starts_passed_over_are_quick_and_no_wrappers() -> None:
    """`row_scan` passes over rows that start as `_STARTS` says without a look: each is a
    quick start (no rejoin reads such a row) and none is a wrapper's, whatever follows."""
    for start in row_scan._STARTS:
        assert start.startswith(row_scan.QUICK_STARTS), start
        for rest in ("", "x", " | ", "```", "2026-01-02T03:04:05Z ", "> ", "{", "\x1b[1m"):
            assert PREFIX_AT_START.search("\n" + start + rest) is None, (start, rest)
