"""The clean-tail check's record loop, where its count of records after a line's process
tag is off (a run-on line), sets the tagged records aside first (`_untagged_records`);
held to the long way (every record not at a line's start looked at, `_records_inside`),
for each of the check's three record searches: the records left are the long way's less
only ones its loop passes over as after their line's tag, and the answer is the same, on
the corpus tails' texts, their damaged copies, and spliced texts of tags, records and
run-on lines."""

from __future__ import annotations

import sys
from itertools import chain, islice
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail
from vllm_bootdiag.text import damage_check
from vllm_bootdiag.text.joined import Joined

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _after_tag(doc: str, p: int) -> bool:
    """The long loop's test for a record right after its line's process tag."""
    start = doc.rfind("\n", 0, p) + 1
    return (
        doc[p - 2 : p] == ") "
        and doc[start] == "("
        and doc.find(") ", start) == p - 2
        and "(" not in doc[start + 1 : p - 2]
    )


def _same(doc: str) -> int:
    left = 0
    for inside, back in (
        (damage_check._RECORD_INSIDE, 3),
        (damage_check._record_inside_by_colon(), 9),
        (damage_check._record_inside_by_second_colon(), 12),
    ):
        every = list(damage_check._records_inside(doc, inside, back))
        found = map(damage_check._START, inside.finditer(doc))
        first = list(islice(found, 3))
        some = list(damage_check._untagged_records(
            doc, back, damage_check._tagged_at(doc, back), chain((first,), damage_check._chunks(found))
        ))  # fmt: skip
        assert some == [p for p in every if p in set(some)], doc[:200]  # (in text order)
        assert all(_after_tag(doc, p) for p in set(every) - set(some)), doc[:200]
        assert damage_check._any_record_damaged(
            doc, {}, some
        ) == damage_check._any_record_damaged(doc, {}, every), doc[:200]
        left += len(every) - len(some)
    return left


def test_corpus_texts_and_their_damaged_copies_leave_the_records_of_the_long_way() -> None:
    set_aside = 0
    for log in LOGS[::2]:
        tail = logtail.read_tail(log)
        for lines in (tail, *(d.apply(list(tail)) for d in damages.DAMAGES[::2])):
            set_aside += _same(Joined.of(lines).plain)
    assert set_aside > 10000


_PIECES = ("\n", "(EngineCore pid=1) ", "(a)x(b pid=1) ", "(x) ", "(" + "y" * 210 + ") ", " ",
           "INFO 01-02 03:04:05 [a.py:1] m", "ERROR 11-29 16:19:50 [core.py:9] ", "x", "(", ")",
           "WARNING 01-02 03:04:05", "DEBUG 01-02 03:04:05.5 ", "CRITICAL 01-02 03:", "01-",
           "]", ") ", "INFO 01-02 03:04:05 [a.py:1]   File ")  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_spliced_texts_leave_the_records_of_the_long_way(pieces: list[str]) -> None:
    _same("\n" + "".join(pieces))


def test_the_tagged_records_are_the_lines_the_count_counts() -> None:
    for log in LOGS[::3]:
        doc = Joined.of(logtail.read_tail(log)).plain
        for back in (3, 9, 12):
            at = damage_check._tagged_at(doc, back)
            assert len(at) == len(damage_check._TAGGED_RECORD.findall(doc))
            assert all(doc[p] == "-:"[back > 3] for p in at)


def test_more_records_than_one_chunk_are_read_in_order() -> None:
    tag = "(EngineCore pid=1) "
    record = "INFO 01-02 03:04:05 [a.py:1] x"
    rows = [tag + record if k % 3 else "ran on " + record for k in range(3 * 700)]
    assert _same("\n" + "\n".join(rows)) == 3 * 1400  # (by each of the three searches)
