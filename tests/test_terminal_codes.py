"""Codes a terminal or a tool put around vLLM's messages: a capture (`script`, tmux, a CI
runner's pty) ends each row in `ESC[K`, and a launcher or viewer may colour whole lines.
vLLM colours only a line's head; rules read the message without any code, so each corpus
tail and each rule example reads as itself (before, a pattern anchored at the message's
end failed behind a trailing code: LC004's empty `Failed core proc(s): {}` answered
`unknown`, and CF002's message kept the code)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.rules import RULES

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

_CORPUS = Path(__file__).resolve().parent.parent / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(_CORPUS)}

WRAPS: dict[str, Callable[[str], str]] = {
    "erase to the row's end": lambda line: line + "\x1b[K",
    "erase, then a carriage return": lambda line: line + "\x1b[K\r",
    "a bold line": lambda line: "\x1b[1m" + line + "\x1b[0m",
    "a 24-bit colour": lambda line: "\x1b[38;2;10;20;30m" + line + "\x1b[39m",
    "cursor moves": lambda line: line + "\x1b[1A\x1b[1B",
}


@pytest.mark.parametrize("wrap", WRAPS.values(), ids=list(WRAPS))
def test_a_corpus_tail_in_codes_reads_as_the_tail(wrap: Callable[[str], str]) -> None:
    wrong = []
    for log_id, tail in TAILS.items():
        if damages.answer([wrap(line) for line in tail]) != damages.answer(tail):
            wrong.append(log_id)
    assert not wrong, wrong


@pytest.mark.parametrize("wrap", WRAPS.values(), ids=list(WRAPS))
def test_a_rule_example_in_codes_reads_its_numbers_and_words(wrap: Callable[[str], str]) -> None:
    wrong = []
    for rule in RULES:
        for ex in rule.examples:
            clean = classify([ex]).primary
            coded = classify([wrap(ex)]).primary
            if coded.model_dump(exclude={"evidence"}) != clean.model_dump(exclude={"evidence"}):
                wrong.append(f"{rule.id}: {coded.kind} (want {clean.kind})")
    assert not wrong, "\n".join(wrong)
