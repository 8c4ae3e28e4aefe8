"""A marker's start pattern is split at its top-level `|` only: an escaped parenthesis opens
no group. `cpu_kv_set`'s `Explicitly set \\(|Auto set \\(` was read as one alternative, so the
CPU worker's `Auto set (...)` line (vLLM's wording when VLLM_CPU_KVCACHE_SPACE is not set,
which no corpus capture printed: every capture sets it) was never a marker and its KV budget
was lost."""

from __future__ import annotations

from vllm_bootdiag import classify, timeline

AUTO_SET = (
    # rendered from vllm/v1/worker/cpu_worker.py:200's format string (vllm-cpu 0.20.0; the
    # same at :253 in 0.33.0), its numbers ours
    "(Worker pid=879) INFO 11-29 17:07:19 [cpu_worker.py:200] Auto set (4.0/23.54) GiB for "
    "KV cache on node 0, with 6.0 GiB requested memory for the worker. 2.0 GiB memory was "
    "consumed by non-kv usages."
)


def test_an_escaped_character_splits_nothing() -> None:
    assert timeline._alternatives(r"Explicitly set \(|Auto set \(") == [
        r"Explicitly set \(",
        r"Auto set \(",
    ]
    assert timeline._alternatives(r"a\|b|(c|d)") == [r"a\|b", "(c|d)"]
    assert timeline._alternatives(r"a\\|b") == ["a\\\\", "b"]


def test_the_cpu_workers_auto_set_line_gives_the_kv_budget() -> None:
    assert timeline.progress_key(AUTO_SET.split("] ", 1)[1]) == "cpu_kv_set"
    d = classify([AUTO_SET])
    assert d.facts.available_kv_cache_gib == 4.0
    assert d.facts.device == "cpu"
    assert d.phase == "kv_cache_sized"
