"""Properties: classify never raises, and numbers printed by vLLM come back exactly."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from vllm_bootdiag import Diagnosis, classify, logtail
from vllm_bootdiag.rules import BY_ID

REAL = [ex for r in BY_ID.values() if r.role == "cause" for ex in r.examples]
"""Lines of cause rules (an echo alone is an unknown pointing above it)."""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=50))
def test_arbitrary_text_lines(lines: list[str]) -> None:
    assert isinstance(classify(lines), Diagnosis)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=5000))
def test_arbitrary_bytes(data: bytes) -> None:
    d = classify(logtail.decode(data))
    assert isinstance(d, Diagnosis)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(REAL), min_size=1, max_size=30), st.randoms())
def test_interleaved_process_output(lines: list[str], rnd) -> None:  # type: ignore[no-untyped-def]
    """Real rule lines shuffled with tags of several processes: still a Diagnosis, and a
    failure whenever a failure line is present."""
    tags = ["(EngineCore pid=1) ", "(APIServer pid=2) ", "(Worker_TP1 pid=3) ", ""]
    mixed = [rnd.choice(tags) + line for line in lines]
    rnd.shuffle(mixed)
    d = classify(mixed)
    assert d.matches
    if any("Application startup complete" not in line for line in lines):
        assert d.primary.kind != "unknown"


def test_huge_lines() -> None:
    d = classify(["x" * 5_000_000, "ValueError: " + "y" * 100_000])
    assert d.primary.kind == "unknown"


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=1, max_value=10_000_000),
    st.floats(min_value=-64, max_value=2048, allow_nan=False).map(lambda x: round(x, 2)),
    st.floats(min_value=-64, max_value=2048, allow_nan=False).map(lambda x: round(x, 2)),
    st.integers(min_value=-10_000_000, max_value=10_000_000),
)
def test_kv_numbers_round_trip(max_len: int, needed: float, avail: float, est: int) -> None:
    """Format numbers as each release does (format_gib from 0.14, %.2f before) into the
    rule's own example and read them back."""
    for rule_id, version, fmt in (("KV004", "0.32.0", repr), ("KV003", "0.20.0", repr),
                                  ("KV002", "0.11.0", lambda x: f"{x:.2f}")):
        example = BY_ID[rule_id].examples[0]
        line = regex.sub(r"max seq len \(\d+\)", f"max seq len ({max_len})", example)
        need_text, avail_text = fmt(needed), fmt(avail)
        line = regex.sub(r"\(-?[\d.]+ GiB KV cache is needed",
                         f"({need_text} GiB KV cache is needed", line)
        line = regex.sub(r"memory \(-?[\d.]+ GiB\)", f"memory ({avail_text} GiB)", line)
        line = regex.sub(r"length is -?\d+\.", f"length is {est}.", line)
        d = classify([line], version=version)
        got = d.primary.model_dump()
        assert d.primary.rule_id == rule_id, line
        assert (got["max_model_len"], got["needed_gib"], got["available_gib"],
                got["estimated_max_model_len"]) == (max_len, needed, avail, est)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["GiB", "MiB"]), st.floats(min_value=0, max_value=4000,
                                                   allow_nan=False).map(lambda x: round(x, 2)))
def test_oom_sizes_round_trip(unit: str, size: float) -> None:
    line = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
            f"{size:.2f} {unit}. GPU 3 has a total capacity of 79.19 GiB of which 6.56 MiB is free.")
    got = classify([line]).primary.model_dump()
    want = size if unit == "GiB" else round(size / 1024, 6)
    assert got["tried_to_allocate_gib"] == want and got["gpu_index"] == 3
