"""Quotes a paste changed are given back: a corpus tail pasted through a chat client or word
processor (curly quotes) or scraped from a page's HTML (escapes) keeps its kind, numbers,
version and phase, and its evidence cites the same lines; a tail's own curly quotes and `&`
(a model's name) leave it as it is, and no corpus tail (nor another damage of one) is
touched by the steps."""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vllm_bootdiag import classify, corpus, logtail
from vllm_bootdiag.text import quotes
from vllm_bootdiag.text.normalize import STEPS, normalize

sys.path.insert(0, str(Path(__file__).resolve().parent / "damage"))
import damages

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
TAILS = {e.id: logtail.read_tail(e.log_path) for e in corpus.entries(CORPUS)}


def _all_closing(lines: list[str]) -> list[str]:
    """Every `'` a right single quote and every `"` a right double one (an apostrophe
    everywhere: what a phone keyboard's or a mail client's conversion gives)."""
    return [line.replace("'", "\u2019").replace('"', "\u201d") for line in lines]


def _decimal_escapes(lines: list[str]) -> list[str]:
    """Escaped as a template engine does: `&#39;` for `'`, `&quot;` for `"`."""
    return [html.escape(line).replace("&#x27;", "&#39;") for line in lines]


PASTES: dict[str, tuple[Callable[[list[str]], list[str]], str, str]] = {
    "typographic": (damages.smart_quotes, quotes.SMART_QUOTES, "'\""),
    "all_closing": (_all_closing, quotes.SMART_QUOTES, "'\""),
    "html_escape": (damages.html_escaped, quotes.HTML_ESCAPES, "'\"<>&"),
    "decimal_escapes": (_decimal_escapes, quotes.HTML_ESCAPES, "'\"<>&"),
}


@pytest.mark.parametrize("paste", PASTES, ids=list(PASTES))
def test_a_pasted_corpus_tail_reads_as_the_tail(paste: str) -> None:
    damage, step, marks = PASTES[paste]
    wrong, repaired = [], 0
    for log_id, tail in TAILS.items():
        pasted = damage(list(tail))
        d = classify(pasted)
        if any(c in line for line in tail for c in marks):
            assert step in d.repairs, log_id
            repaired += 1
        if damages.answer(pasted) != damages.answer(tail):
            wrong.append(f"{log_id}: {d.primary.kind} {d.vllm_version} {d.phase}")
    assert repaired > 200
    assert not wrong, "\n".join(wrong[:10])


@pytest.mark.parametrize("paste", PASTES, ids=list(PASTES))
def test_evidence_cites_the_same_lines_and_text(paste: str) -> None:
    damage = PASTES[paste][0]
    for log_id, tail in list(TAILS.items())[::4]:
        clean, pasted = classify(tail), classify(damage(list(tail)))
        assert [(e.line, e.text) for e in pasted.primary.evidence] == [
            (e.line, e.text) for e in clean.primary.evidence
        ], log_id


_MODEL = re.compile(r"model='([^']{3,200})'")


def test_a_tails_own_curly_quotes_and_ampersands_leave_it_as_it_is() -> None:
    """A model named with an `&`, an escape-like `&amp;` and curly quotes of its own: the
    tail's straight quotes outnumber its curly ones, a bare `&` is no escape."""
    checked = 0
    for log_id, tail in TAILS.items():
        named = next((m[1] for line in tail if (m := _MODEL.search(line))), None)
        if named is None:
            continue
        own = named + "-R&D\u2019s-\u201cdraft\u201d&amp;"
        renamed = [line.replace(named, own) for line in tail]
        assert renamed != tail
        d = classify(renamed)
        assert not {quotes.SMART_QUOTES, quotes.HTML_ESCAPES} & set(d.repairs), log_id
        assert damages.answer(renamed) == damages.answer(tail), log_id
        checked += 1
    assert checked >= 90  # (99 corpus tails print the model's name in a config line)


def test_no_corpus_tail_nor_another_damage_of_one_is_changed() -> None:
    ours = {"smart_quotes", "html_escaped"}
    for log_id, tail in TAILS.items():
        doc = "\n".join(["", *tail])
        assert not quotes.smart_quoted(doc) and not quotes.html_escaped(doc), log_id
        assert not {quotes.SMART_QUOTES, quotes.HTML_ESCAPES} & set(classify(tail).repairs)
    for log_id, tail in list(TAILS.items())[::7]:
        for d in damages.DAMAGES:
            if d.name not in ours:
                doc = "\n".join(d.apply(list(tail)))
                assert not quotes.smart_quoted(doc), (log_id, d.name)
                assert not quotes.html_escaped(doc), (log_id, d.name)


def test_the_steps_and_their_rows() -> None:
    names = [s.name for s in STEPS]
    assert names[1:3] == [quotes.SMART_QUOTES, quotes.HTML_ESCAPES]
    rows = ["a \u2018b\u2019", "plain", "\u201cc\u201d", "x=\u2019y\u2019"]
    lines, ran = normalize(rows, first_line=7)
    assert ran[0] == quotes.SMART_QUOTES
    assert [(ln.text, ln.first, ln.last) for ln in lines] == [
        ("a 'b'", 7, 7),
        ("plain", 8, 8),
        ('"c"', 9, 9),
        ("x='y'", 10, 10),
    ]
    assert [(quotes.SMART_QUOTES in ln.repairs) for ln in lines] == [True, False, True, True]
    lines, ran = normalize(["&lt;class &#x27;a&#39;&gt;", "b", "&quot;c&quot; &amp;&#10;"])
    assert ran[0] == quotes.HTML_ESCAPES
    assert [ln.text for ln in lines] == ["<class 'a'>", "b", '"c" &&#10;']  # a row stays one


def test_a_few_curly_quotes_among_straight_ones_are_the_texts_own() -> None:
    assert quotes.smart_quoted("it\u2019s 'a' \u201cb\u201d")
    assert not quotes.smart_quoted("it\u2019s 'a' 'b'")
    assert not quotes.html_escaped("a=1&b=2 &lt;")  # a bare `&`: not a page's escape
    assert not quotes.html_escaped("&#10;&#0;&bogus;")  # nothing a row can hold
    assert quotes.html_escaped("&#10; &lt;")


_PIECES = ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#x27;", "&#X27;", "&#60;", "&apos;"]
_TEXT = st.lists(st.sampled_from([*_PIECES, "a", " ", "'", "#", ";", "x27", "\xe9"])).map("".join)


@given(_TEXT)
def test_the_unescape_is_htmls_for_what_it_knows(text: str) -> None:
    """Rows of escapes and text without a bare `&`: what `html.unescape` gives them."""
    [out], [changed] = quotes.unescape_rows([text])
    assert out == html.unescape(text)
    assert changed == (out != text)
    assert quotes.html_escaped(text) == any(p in text for p in _PIECES)
