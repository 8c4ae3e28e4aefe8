"""`looks_like_error` is ERROR_LOOKING's search, told without trying every position (the
unknown fallback reads every line of a tail; a 16 KB message must not cost a search)."""

from __future__ import annotations

from pathlib import Path

from vllm_bootdiag.outcomes.lifecycle import ERROR_LOOKING, looks_like_error
from vllm_bootdiag.rules.ruleset import default_rules
from vllm_bootdiag.text import logline

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _messages() -> list[str]:
    out: list[str] = []
    for log in sorted(CORPUS.glob("*/*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            out.append(logline.parse(line).message)
    for rule in default_rules():
        out.extend(logline.parse(x).message for x in (*rule.examples, *rule.counter_examples))
    return out


def test_it_agrees_with_the_search_on_every_corpus_line_and_rule_example() -> None:
    messages = _messages()
    found = [m for m in messages if ERROR_LOOKING.search(m)]
    assert len(found) > 500  # the corpus has error lines of every shape
    assert [looks_like_error(m) for m in messages] == [bool(ERROR_LOOKING.search(m)) for m in messages]


def test_it_agrees_on_error_words_anywhere_in_a_line() -> None:
    cases = [
        "error: argument --dtype: invalid choice",
        "vllm serve: error: unrecognized arguments",
        "x: error: y",
        "ImportError: libcudart.so.12: cannot open shared object file: No such file",
        "OSError: foo.so: undefined symbol: _ZN3c10",
        "Segmentation fault (core dumped)",
        "Segmentation faulty",
        "terminate called after throwing an instance of 'c10::Error'",
        "Error: no such file",
        "the error: is here",
        "torch._dynamo.exc.Unsupported: call_function",
        "KeyboardInterrupt",
        "",
        "9" * 16384,
        "`" * 16384 + ": error: ",
    ]
    assert [looks_like_error(c) for c in cases] == [bool(ERROR_LOOKING.search(c)) for c in cases]


def test_a_long_text_is_read_as_a_short_one_is() -> None:
    """Past 1 KB the three wordings are one `re` search: the same answer, padded either side."""
    cases = [
        "x: error: y", "foo.so: undefined symbol: _Z", "a: cannot open shared object file",
        "the error: is here", "shared", "undefined symbol", ": error:", "ValueError: x",
    ]  # fmt: skip
    for case in cases:
        for pad in ("(" * 2000, "`" * 2000, " " * 2000):
            for text in (pad + case, case + pad, pad + case + pad):
                assert looks_like_error(text) == bool(ERROR_LOOKING.search(text)), text[:40]


def test_a_long_text_is_searched_from_its_first_colon() -> None:
    """Past 1 KB the wordings are searched from the first colon (each starts with one): the
    same answer with no colon at all, with colons only before the wording, with one right
    at the start, and with a run of them."""
    cases = [
        "x: error: y", "foo.so: undefined symbol: _Z", "a: cannot open shared object file",
        ": error: at the start", "ValueError: x", "no colon here", "::: error: ", ":",
    ]  # fmt: skip
    pads = ("█ " * 1000, "a:" * 1000, ":" * 2000, ": " * 1000, "x" * 2000, ":" + "y" * 2000)
    for case in cases:
        for pad in pads:
            for text in (pad + case, case + pad, pad + case + pad):
                assert looks_like_error(text) == bool(ERROR_LOOKING.search(text)), text[:40]
