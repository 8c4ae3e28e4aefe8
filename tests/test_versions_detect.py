"""`versions.detect` skips a detector whose literal a line lacks: it must state what
searching every line with every detector states, on the corpus's lines and on generated
banner-like lines; and its `re` detectors read what the `regex` module's did."""

from __future__ import annotations

from pathlib import Path

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import logtail, versions

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))


def _searched(lines: list[str]) -> versions.Detected | None:
    """The detection as it was: every detector searched on every line that may state one."""
    for number, line in enumerate(lines, start=1):
        if "version" not in line and "LLM engine" not in line:
            continue
        for pattern in versions._DETECTORS:
            m = pattern.search(line)
            if m:
                v = versions.parse_version(m["version"])
                if v is not None:
                    return versions.Detected(v, "log", number)
    return None


_OLD_BANNER = regex.compile(
    r"[█▀▄]\s+version\s+v?(?P<version>\d+\.\d+(?:\.\d+)*+(?:(?:rc|a|b|\.post|\.dev)\d+)*+"
    r"(?:\+[\w.]+)?)\s*$"
)
"""The banner's detector as the `regex` module searched it before `re` did (the long way)."""


def _group(m: object) -> str | None:
    return None if m is None else m["version"]  # type: ignore[index]


def test_every_corpus_line_states_what_every_search_states() -> None:
    stated = 0
    for log in LOGS:
        for line in logtail.read_tail(log):
            if "version" in line or "LLM engine" in line:
                assert versions.detect([line]) == _searched([line]), line
                banner = versions._DETECTORS[-1].search(line)
                assert _group(_OLD_BANNER.search(line)) == _group(banner), line
                stated += banner is not None
    assert stated > 100  # (the banner's lines are among them)


_PIECES = st.sampled_from(
    ("█", "▀", "▄", " ", "  ", "\t", "\xa0", "\x1c", "\n", "version", "versio", "v", "0",
     "1.2", ".3", "rc1", "+cpu", "+version", "vLLM ", "server ", ": ", "LLM engine (", ")", "x")
)  # fmt: skip
_BLOCKS = st.text(alphabet="█▀▄ x", min_size=1, max_size=4)
_SPACE = st.text(alphabet=" \t\xa0\x1c", max_size=3)
_STATED = st.sampled_from(("0.11.0", "v0.9.2", "1.2rc1", "0.11.0+cpu", "0.1+version", "x", ""))
_SEGMENT = st.tuples(_BLOCKS, _SPACE, st.sampled_from(("version", "versio")), _SPACE, _STATED)
"""A banner's end, or something near it: block characters, whitespace, `version`, a
version (several in a line: the one that ends it is stated)."""
_SAYS = st.tuples(
    st.sampled_from(("vLLM ", "vLLM server ", "vLLM API server ", "xvLLM ", "Initializing a ")),
    st.sampled_from(("version", "version:", "versio", "V1 LLM engine (", "LLM engine (")),
    st.sampled_from((" ", ": ", "", "  ")),
    _STATED,
    st.sampled_from(("", ")", " ", ") with")),
)
"""The other detectors' wordings, and near misses."""


@settings(max_examples=500, deadline=None)
@given(
    st.lists(_PIECES, max_size=14).map("".join)
    | st.lists(_SEGMENT.map("".join) | _SAYS.map("".join) | _PIECES, min_size=1, max_size=4).map(
        "".join
    )
)
def test_banner_like_lines(line: str) -> None:
    assert _group(_OLD_BANNER.search(line)) == _group(versions._DETECTORS[-1].search(line))
    assert versions.detect([line]) == _searched([line])
