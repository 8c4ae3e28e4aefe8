"""The triage scan leaves out a progress record whose message `timeline.MESSAGE_STARTS`
does not match (a marker branch's literal head, a banner's word, a `[tag] ` before one),
and reads a progress record it keeps
whole from the text without colour codes: each shortcut against the long way (every line
sorted, `progress_key` on every message), on the corpus's progress messages, messages that
share a head's first characters, and records whose tag, level or timestamp `_record_end`
reads, plain, coloured, with their tag taken off or not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail, timeline
from vllm_bootdiag.rules import markers
from vllm_bootdiag.text import damage_check, triage
from vllm_bootdiag.text.joined import Joined
from vllm_bootdiag.text.triage import _SOURCE_MAX, Tail

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _same(lines: list[str]) -> None:
    every = Tail(lines, timeline.progress_key)
    for joined in (None, Joined.of(lines)):
        if joined is not None:
            damage_check.damaged(joined)  # as the pipeline runs it (tags taken off)
        some = Tail(lines, timeline.progress_key, None, timeline.MESSAGE_STARTS, joined=joined)
        assert (some.other, some.markers, some.other_text) == (
            every.other,
            every.markers,
            every.other_text,
        )


def _parsed_head(branch: str) -> str:
    """The literal prefix `re`'s own parser reads in a branch (the long way)."""
    from re import _parser  # type: ignore[attr-defined]

    head = ""
    for op, arg in _parser.parse(branch):
        if op is not _parser.LITERAL:
            break
        head += chr(arg)
    return head


def test_each_branch_and_its_head_are_what_re_parses() -> None:
    from re import _parser  # type: ignore[attr-defined]

    for m in markers.MARKERS:
        if m.key in ("banner_version", "banner_model"):
            continue
        branches = timeline._branches(m.start)
        assert "|".join(branches) == m.start
        parsed = _parser.parse(m.start)
        if len(parsed) == 1 and parsed[0][0] is _parser.BRANCH:
            assert len(branches) == len(parsed[0][1][1]), m.key
        for branch in branches:
            head = timeline._literal_head(branch)
            # `re` folds a literal the next item repeats into the repeat: ours stops there
            assert _parsed_head(branch).startswith(head), (m.key, branch, head)
            assert len(head) >= 2 and head in timeline.MESSAGE_HEADS


@pytest.mark.parametrize(
    ("branch", "head"),
    [
        (r"Initializing an? (?:V\d )?LLM engine", "Initializing a"),
        (r"torch\.compile t", "torch.compile t"),
        (r"Explicitly set \(", "Explicitly set ("),
        (r"# \w+ blocks:", "# "),
        (r"ab+c", "a"),
        (r"ab{2}c", "a"),
        (r"ab*", "a"),
        (r"a[bc]", "a"),
        (r"a.b", "a"),
        (r"\d1", ""),
        (r"a\sb", "a"),
    ],
)
def test_a_head_stops_where_a_match_may_differ(branch: str, head: str) -> None:
    assert timeline._literal_head(branch) == head
    assert _parsed_head(branch).startswith(head)


def test_branches_split_as_re_splits() -> None:
    assert timeline._branches(r"Explicitly set \(|Auto set \(") == [
        r"Explicitly set \(",
        r"Auto set \(",
    ]
    assert timeline._branches(r"a[|(]b|c(d|e)|f\|g") == ["a[|(]b", "c(d|e)", r"f\|g"]
    assert timeline._branches(r"[]|]x|y") == ["[]|]x", "y"]


def _messages() -> list[str]:
    """Every INFO/DEBUG message of the corpus, once."""
    seen: dict[str, None] = {}
    for log in sorted(CORPUS.glob("*/*.log")):
        for line in logtail.read_tail(log):
            kind, text, start, _ts = triage.sort_line(line)
            if kind == triage.PROGRESS:
                seen[text[start:]] = None
    return list(seen)


_STARTS = re.compile(timeline.MESSAGE_STARTS)


def test_a_message_the_starts_leave_out_is_no_marker_on_the_corpus() -> None:
    left_out = 0
    for message in _messages():
        if _STARTS.match(message) is None:
            assert timeline.progress_key(message) is None, message
            left_out += 1
    assert left_out > 100  # the shortcut leaves out real lines, not none


_PIECES = ("[", "]", "] ", "[tag] ", " ", "█", "▀", "▄", "version", "version ", "model ",
           "model\t", "x", "Mo", "Model loading took", "Using cache directory", "\t", "(", ")")  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=8),
    st.integers(0, 3),
    st.sampled_from(("", " ", "█", "a")),
)
def test_every_message_a_marker_reads_is_one_the_starts_keep(
    pieces: list[str], runs: int, run: str
) -> None:
    # runs of block characters or tag characters around `_RUN` (64), and short ones
    for message in (
        "".join(pieces),
        run * (62 + runs) + "".join(pieces),
        "[" + run * (62 + runs) + "] " + "".join(pieces),
    ):
        if timeline.progress_key(message) is not None:
            assert _STARTS.match(message) is not None, message


@pytest.mark.parametrize(
    "message",
    [
        "[Ex] Using x",
        "[a]b] Model loading took 1 GiB",
        "[" + "a" * 70 + "] Model loading took 1 GiB",
        "       █     █     █▄   ▄█",
        " ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.30.0",
        "█" * 70 + " version 1.0",
        " " * 70 + "█ model x",
        "[x] [y] Model loading took 1 GiB",
        "[x]",
        "[x] ",
        "[x] █ version 1",
    ],
)
def test_bracket_and_banner_messages_sort_as_every_line_sorts(message: str) -> None:
    rec = "INFO 01-02 03:04:05 [x.py:1] "
    _same([rec + message, "(APIServer pid=1) " + rec + message])


# messages that share a head's first characters, or are a head cut short
_NEAR = sorted(
    {h[:k] + tail for h in timeline.MESSAGE_HEADS for k in (2, len(h) - 1, len(h))
     for tail in ("", " 1.5 GiB", "x")}
)  # fmt: skip


@pytest.mark.parametrize("message", _NEAR)
def test_near_misses_of_a_head_sort_as_every_line_sorts(message: str) -> None:
    rec = "INFO 01-02 03:04:05 [x.py:1] "
    tag = "(APIServer pid=1) "
    _same(
        [rec + message, tag + rec + message, "\x1b[0;36m" + tag[:-1] + "\x1b[0;0m " + rec + message]
    )


_TAGS = ("", "(APIServer pid=1) ", "(APIServer pid=1)", "(EngineCore_DP0 pid=12) ",
         "\x1b[0;36m(APIServer pid=1)\x1b[0;0m ", "(Worker[0] pid=3) ", "(x) ", "((a) ")  # fmt: skip
_HEADS = ("INFO 01-02 03:04:05 [a.py:1] ", "DEBUG 01-02 03:04:05,123 [a.py:1]",
          "INFO 01-02 03:04:05.5 [a] b] ", "INFO 01-02 03:04:05 [" + "a" * 300 + "] ",
          "INFO 1-02 03:04:05 [a.py:1] ", "WARNING 01-02 03:04:05 [a.py:1] ",
          "2026-01-02T03:04:05Z INFO 01-02 03:04:05 [a.py:1] ")  # fmt: skip
_BODIES = ("Model loading took 1.5 GiB", "[tag] Model loading took 1 GiB", "Using max model len 1",
           ") Starting to load model (x)", "Starting to load model ] x", "", " █ version 1.0 ")  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_TAGS), st.sampled_from(_HEADS), st.sampled_from(_BODIES)),
        min_size=1,
        max_size=6,
    )
)
def test_records_read_whole_sort_as_every_line_sorts(parts: list[tuple[str, str, str]]) -> None:
    _same([tag + head + body for tag, head, body in parts])


def test_record_end_reads_the_codes_the_scan_captures() -> None:
    assert triage._record_end("\x01INFO 01-02 03:04:05 [a.py:1] x") == len(
        "\x01INFO 01-02 03:04:05"
    )
    assert triage._record_end("(t) DEBUG 01-02 03:04:05.1 [a]") == len("(t) DEBUG 01-02 03:04:05")
    assert triage._record_end("(t)INFO 01-02 03:04:05 [a]") == len("(t)INFO 01-02 03:04:05")
    for code in ("2026-", "(t) INFO ", "\x01DEBUG ", "INFO ", "x", "", "(t) WARNING "):
        assert triage._record_end(code) == 0, code
    pattern = re.compile(triage._SORT_ME)
    m = pattern.match("(t) INFO 01-02 03:04:05 [a.py:1] Model loading took 1 GiB")
    assert m is not None and m[0].endswith("took 1 GiB")


# --- record sources -------------------------------------------------------------------
# The scan reads a record's source up to `_SOURCE_MAX` characters and sorts a line whose
# source runs longer (or never closes): on lines around that length, with and without a
# process tag, a frame after the record or none, it finds what sorting every line finds
# (bench/bench_classify.py shows what it saves on 16 KB lines with no `]`).

_SOURCE_LEVELS = ("INFO", "DEBUG", "WARNING", "WARN", "ERROR", "CRITICAL")
_SOURCE_MESSAGES = ("Starting to load model x", '  File "a.py", line 1', "    raise X", "boom", "")


def _line(tag: bool, level: str, source: int, close: bool, message: str) -> str:
    head = "(APIServer pid=1) " if tag else ""
    src = "[" + "a" * source + ("]" if close else "")
    return f"{head}{level} 01-02 03:04:05 {src} {message}"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.sampled_from(_SOURCE_LEVELS),
            st.integers(_SOURCE_MAX - 3, _SOURCE_MAX + 3) | st.integers(0, 20),
            st.booleans(),
            st.sampled_from(_SOURCE_MESSAGES),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_sources_around_the_longest_read_sort_as_every_line_sorts(
    parts: list[tuple[bool, str, int, bool, str]],
) -> None:
    _same([_line(*p) for p in parts])
