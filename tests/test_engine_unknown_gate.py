"""The unknown's cheap pre-test never skips a line the full reading would take.

`_unknown` looks for the last error-looking line from the end; a raw line whose words
cannot make an error is passed over before it is parsed. Hypothesis builds lines from
the pieces that matter (record prefixes, process tags, colour codes, every wording
`looks_like_error` reads, and near misses) and checks the test against the parse.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag.outcomes.lifecycle import looks_like_error, may_look_like_error
from vllm_bootdiag.text import logline

PIECES = (
    "INFO 11-29 16:19:50 [core.py:1] ", "ERROR 11-29 16:19:50 [core.py:1] ",
    "CRITICAL 11-29 16:19:50 [x.py:2] ", "WARNING 11-29 16:19:50 [x.py:2] ",
    "(EngineCore pid=2) ", "2026-11-29T16:20:31Z ", "\x1b[0;36m", "\x1b[0m", "  ",
    "ValueError: ", "Error: ", "error: ", "RuntimeError", "KeyboardInterrupt", "SystemExit",
    "Exception", "Unsupported", "Segmentation fault", "Bus error", "Aborted", "Killed",
    "terminate called after throwing", ": undefined symbol: ", ": cannot open shared object file",
    "torch.", "Err", "or", "x", "Exi", "t", ": ", "fault", "loading weights", " ",
)  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8))
def test_a_line_passed_over_is_neither_an_error_record_nor_error_looking(parts: list[str]) -> None:
    raw = "".join(parts)
    if may_look_like_error(raw):
        return
    line = logline.parse(raw, 1)
    assert not line.is_error
    assert not looks_like_error(line.message)


def test_every_error_looking_example_passes_the_test() -> None:
    for text in ("ValueError: x", "Killed", "error: argument", "terminate called after throwing"):
        assert may_look_like_error(text)
    assert not may_look_like_error("INFO 11-29 16:19:50 [x.py:1] Route: /v1/models")
    assert may_look_like_error("INFO 11-29 16:19:50 [x.py:1] " + "x" * 2000)  # long: parsed
