"""`error_rows._has_error_word` is its plain statement: any of the error words is in the text."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from vllm_bootdiag.text import error_rows

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _plain(text: str) -> bool:
    return any(word in text for word in error_rows._ERROR_WORDS)


def test_it_answers_as_the_words_do_on_every_corpus_line() -> None:
    seen = 0
    for log in sorted(CORPUS.glob("*/*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            assert error_rows._has_error_word(line) == _plain(line), line
            seen += _plain(line)
    assert seen > 1000


_PIECES = st.sampled_from(
    [*error_rows._ERROR_WORDS, "E", "C", "I", "Err", "CRITICA", "Interrup", "INFO", "Exi", "a", " "]
)


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_it_answers_as_the_words_do_on_pieces_of_them(text: str) -> None:
    assert error_rows._has_error_word(text) == _plain(text)
