"""The error-looking tests are their patterns, told in linear time.

`(?:[\\w.]+\\.)?<name>\\b` at a line's start (ERROR_LOOKING's, `_ERROR_AT_START`'s,
DETERMINISTIC's) makes the `regex` module backtrack quadratically through a 16 KB run of
`a.`, `_.`, `0.`, `.a` (20-80 ms a line: seconds a tail). `looks_like_error`,
`error_looking_at_start` and `is_deterministic` read the dotted run the line starts with
instead, its first NAME_MAX characters: each is held to its pattern (the long way) on every
corpus message, on generated text rich in what the patterns read (Unicode word characters
included, whose `\\w` differs between `re` and `regex`), and timed on the runs that were
slow; past the bound, a name that ends on a dot inside it is still read.
"""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.outcomes import lifecycle
from vllm_bootdiag.outcomes.lifecycle import (
    DETERMINISTIC,
    ERROR_LOOKING,
    error_looking_at_start,
    is_deterministic,
    looks_like_error,
)
from vllm_bootdiag.text import logline

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _same(text: str) -> None:
    assert looks_like_error(text) == bool(ERROR_LOOKING.search(text)), text[:80]
    assert error_looking_at_start(text) == bool(ERROR_LOOKING.match(text)), text[:80]
    assert lifecycle._starts_like_error(text) == bool(lifecycle._ERROR_AT_START.match(text))
    assert is_deterministic(text) == bool(DETERMINISTIC.search(text)), text[:80]


def test_each_is_its_pattern_on_every_corpus_message() -> None:
    seen = 0
    for log in sorted(CORPUS.glob("*/*.log")):
        for line in set(log.read_text(encoding="utf-8", errors="replace").splitlines()):
            _same(logline.parse(line).message)
            _same(line)
            seen += 1
    assert seen > 10_000


CASES = [
    "ValueError: x",
    "torch.OutOfMemoryError: CUDA out of memory",
    "torch._dynamo.exc.Unsupported: call_function",
    "a.b.ImportError",
    ".ImportError",
    "..ImportError",
    "x.ImportError: no module",
    "ImportErrors",
    "KeyboardInterrupt",
    "SystemExit: 1",
    "aError: x",
    "AError",
    "A.aError",
    "a.AError.",
    "Error",
    "Error.",
    ".Error",
    "_.Error",
    "Ünicode.Error",
    "ÉtrangeError: x",
    "é\u0301Error",
    "x\u0301.Error",
    "x\u00b7Error",
    "Ⅸ.Error",
    "Killed",
    "Killedx",
    "Killed\u0301",
    "Segmentation fault (core dumped)",
    "error: argument",
    ": error: here",
    ": undefined symbol: _Z",
    ": cannot open shared object file",
    "terminate called after throwing",
    "",
    ".",
    "a.",
]


def test_each_is_its_pattern_on_hand_cases() -> None:
    for case in CASES:
        for text in (case, case + " tail", "x" + case, "a." * 50 + case, case + ".x"):
            _same(text)


_PIECES = st.sampled_from(
    [
        "a", "A", "Z", "_", "0", "٣", "é", "\u0301", "\u00b7", "Ⅸ", "ǅ", "\u200c", "\x1c",
        ".", "..", " ", ":", ": ", "-", "(", "Error", "Exception", "Exit", "Interrupt",
        "Unsupported", "ImportError", "ModuleNotFoundError", "TabError", "Killed",
        "Aborted", "error: ", "Error: ", "terminate called after throwing",
        ": undefined symbol: ", ": cannot open shared object file",
    ]
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES, max_size=12))
def test_each_is_its_pattern_on_generated_text(pieces: list[str]) -> None:
    _same("".join(pieces))


SIZE = 16_384
BOUND_S = 0.02
"""Per 16 KB line: the patterns took 20-80 ms; linear reading is well under 1 ms."""


def test_a_long_dotted_run_is_read_in_linear_time() -> None:
    looks_like_error("warm up"), is_deterministic("a"), error_looking_at_start("a")
    slow = {}
    for unit in ("a.", "A.", "_.", "0.", "v0.", "A1.", ".a", ".é", "aError.", "AError", "a"):
        text = unit * (SIZE // len(unit))
        for fn in (looks_like_error, error_looking_at_start, is_deterministic):
            t0 = time.perf_counter()
            fn(text)
            spent = time.perf_counter() - t0
            if spent > BOUND_S:
                slow[(unit, fn.__name__)] = round(spent, 4)
    assert not slow, slow


def test_past_the_bound_a_name_ending_on_a_dot_inside_it_is_read() -> None:
    bound = lifecycle.NAME_MAX
    for name in ("ValueError", "torch.OutOfMemoryError", "ImportError"):
        assert looks_like_error(name + "." + "a" * 600)
        assert looks_like_error(name + "." + "a." * 600)
    assert is_deterministic("ImportError." + "a" * 600)
    at_bound = "a" * (bound - len(".ValueError")) + ".ValueError"
    assert len(at_bound) == bound
    _same(at_bound)
    assert looks_like_error(at_bound)
    past = "a" + at_bound  # the name ends at the run's end, past the bound: not read
    assert not looks_like_error(past) and ERROR_LOOKING.search(past)
    assert not is_deterministic("a" * bound + ".ImportError")
