"""A terminal's rows (a log hard-wrapped at 80, 100 or 120 columns) that a tool then
stamped one by one (a CI page's gutter or timestamp, journald, compose, a runtime's
stamp): rejoined with the stamp off, as the same rows with no stamp are.

Every width with every stamp, over the corpus sample of the damage suite (the suite's
DAMAGES hold five of them over every log and rule example); the evidence cites the rows
the plain wrap's does, and the stamp is named among the repairs."""

from __future__ import annotations

import damages
import pytest
from test_damage_corpus import CLEAN, LOGS

from vllm_bootdiag import classify

STAMPS = {
    "ci_gutter": "  | ",
    "bracket_stamp": "[2026-01-02T03:04:05Z] ",
    "actions_stamp": "2026-01-02T03:04:05.1234567Z ",
    "journald": "Jan 02 03:04:05 gpu-node-3 vllm[2811]: ",
    "compose": "vllm-1  | ",
}
NAMES = {
    "ci_gutter": "ci_gutter",
    "bracket_stamp": "bracket_stamp",
    "actions_stamp": "runtime_stamp",
    "journald": "journald_prefix",
    "compose": "compose_prefix",
}
CASES = [(w, s) for w in (80, 100, 120) for s in STAMPS]


@pytest.mark.parametrize(("width", "stamp"), CASES, ids=[f"wrap{w}_{s}" for w, s in CASES])
def test_rows_wrapped_then_stamped_keep_the_answer_and_its_lines(width: int, stamp: str) -> None:
    wrap = damages._hard_wrap(width)
    damage = damages.Damage(
        f"wrap{width}_{stamp}", damages._twice(wrap, damages._prefix(STAMPS[stamp])), rows=True
    )
    wrong, rejoined = [], 0
    for log_id, lines in LOGS.items():
        r = damages.check(lines, damage, CLEAN[log_id])
        if not r.ok:
            wrong.append(f"{log_id}: {r.kind} (want {r.clean_kind}) {r.wrong_numbers}")
            continue
        plain, stamped = classify(wrap(list(lines))), classify(damage.apply(list(lines)))
        assert [e.line for e in stamped.primary.evidence] == [
            e.line for e in plain.primary.evidence
        ], log_id
        if "rejoin_wrapped" in plain.repairs:
            assert {"rejoin_wrapped", NAMES[stamp]} <= set(stamped.repairs), log_id
            rejoined += 1
    assert not wrong, "\n".join(wrong)
    assert rejoined >= 10


MORE = {
    "fold100": damages._fold(100),
    "wrap120_wrap80": damages._twice(damages._hard_wrap(120), damages._hard_wrap(80)),
    "code_block_wrap80": damages._twice(damages._prefix("    "), damages._hard_wrap(80)),
}


@pytest.mark.parametrize("name", list(MORE))
def test_the_stamped_rows_are_read_as_a_tail_of_their_own(name: str) -> None:
    """With the stamp off the rows are read as any tail is: an editor's wrap, a wrap twice,
    an indent put on before the terminal's cut (a code block shown in a terminal, copied
    into a CI page or journald) answer as the same rows with no stamp do."""
    for log_id, lines in LOGS.items():
        rows = MORE[name](list(lines))
        want = damages.answer(rows)
        for stamp in ("ci_gutter", "journald"):
            got = damages.answer(damages._prefix(STAMPS[stamp])(rows))
            assert got[:2] == want[:2], (log_id, stamp)
