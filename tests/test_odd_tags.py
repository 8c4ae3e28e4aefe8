"""A record behind a process tag a paste garbled starts a line of its own.

The clean-tail check takes any group in parentheses at a line's start for a process tag
(Ray's `(RayWorkerWrapper pid=3, ip=...)` is one), so the rejoin that runs after it must
not put such a row on the error line above it: that made a tail whose first error is a
corrupt checkpoint answer no_kv_cache_memory (the record's message glued onto the
checkpoint's line), where the long way (every per-line step run) answers
model_files_unreadable. Built from the rules' own example lines, the tag damaged as a
paste damages it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vllm_bootdiag import classify, logtail
from vllm_bootdiag.rules import BY_ID
from vllm_bootdiag.text import normalize as norm

_GARBLES = {
    "no-break space": lambda tag: tag.replace(" pid=", "\xa0pid="),
    "narrow no-break space": lambda tag: tag.replace(" pid=", "\u202fpid="),
    "no pid": lambda tag: tag.split(" pid=")[0] + ")",
    "ray's": lambda tag: tag[:-1] + ", ip=10.0.0.1)",
    "a name over 80 characters": lambda tag: tag.replace("(", "(" + "W" * 90, 1),
}
_ABOVE = ("MF001", "KV001", "CM001")
"""Error lines the garbled row follows (an exception behind a tag, an ERROR record, a
tagged ERROR record), each a rule's first example."""


def _long_way(lines: list[str]) -> object:
    """classify with the clean-tail check made to say "damaged": every per-line step runs."""
    keep = norm._check
    norm._check = lambda joined: (True, None)
    try:
        return classify(lines)
    finally:
        norm._check = keep


@pytest.mark.parametrize("garble", sorted(_GARBLES))
@pytest.mark.parametrize("above", _ABOVE)
def test_a_record_behind_a_garbled_tag_is_not_glued_on_the_error_above(
    garble: str, above: str
) -> None:
    record = BY_ID["KV008"].examples[0]
    tag, rest = record.split(") ", 1)
    lines = [
        BY_ID[above].examples[0],
        _GARBLES[garble](tag + ")") + " " + rest,
        "ERROR 04-01 12:00:00 [core_client.py:564] Engine core proc EngineCore_0 died "
        "unexpectedly, shutting down client.",
    ]
    d = classify(lines)
    assert "rejoin_reflowed" not in d.repairs
    kv = [m for m in d.matches if m.rule_id == "KV008"]
    assert kv and kv[0].evidence[0].line == 2  # its own line, not the one above
    first = [m for m in d.matches if m.rule_id == above]
    assert first and first[0].evidence[0].line == 1
    slow = _long_way(lines)
    assert d.primary.kind == slow.primary.kind  # type: ignore[attr-defined]
    assert [(m.rule_id, m.evidence) for m in d.matches] == [
        (m.rule_id, m.evidence)
        for m in slow.matches  # type: ignore[attr-defined]
    ]


_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
_SERVED = [p for p in sorted(_CORPUS.glob("*/*.log")) if "(APIServer pid=" in p.read_text()]


@pytest.mark.parametrize("log", _SERVED[::5], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_pid_a_paste_garbled_starts_no_boot(log: Path) -> None:
    """An API server's tag whose pid a paste garbled (`pid=2865··0`) names no other server:
    the tail is still one boot, with its version, as the long way reads it too."""
    tail = logtail.read_tail(log)
    rows = [i for i, line in enumerate(tail) if "(APIServer pid=" in line[:40]]
    garbled = list(tail)
    for i in rows[len(rows) // 2 :: 7]:  # a few rows past the banner
        garbled[i] = re.sub(r"pid=(\d)(\d*)", "pid=\\1\xb7\xb7\\2", garbled[i], count=1)
    assert garbled != tail
    clean, got = classify(tail), classify(garbled)
    assert (got.primary.kind, got.vllm_version, got.boots_in_tail) == (
        clean.primary.kind,
        clean.vllm_version,
        clean.boots_in_tail,
    )
    slow = _long_way(garbled)
    assert (slow.vllm_version, slow.boots_in_tail) == (got.vllm_version, got.boots_in_tail)  # type: ignore[attr-defined]
