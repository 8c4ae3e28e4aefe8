"""The last boot in the tail is the one classified; the log's version beats a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import BootWatcher, boots, classify
from vllm_bootdiag.corpus import entries

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
OLD_KV = CORPUS / "0.14.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
NEW_KV = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"

EARLIER = [
    "0.14.0/kv_cache_shortfall__llama1b-kvspace1__cpu.log",
    "0.14.0/invalid_argument__dtype-float7__cpu.log",
    "0.32.0/engine_died__engine-sigkill__cpu.log",
    "0.8.5/broken_install__llama1b-kvspace1__cpu.log",
    "0.22.0/invalid_argument__dtype-float7__cpu.log",
]
"""Boots that end in a failure, from old and new releases: what a restart leaves above."""


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_an_upgrade_appended_to_one_log_is_classified_by_the_new_boot() -> None:
    old, new = _lines(OLD_KV), _lines(NEW_KV)
    d = classify(old + new)
    assert d.vllm_version == "0.32.0" and d.primary.rule_id == "KV004"
    assert d.boots_in_tail == 2 and d.boot_start_line == len(old) + 1
    assert d.primary.evidence[0].line > len(old)
    assert any("2 boots" in n for n in d.notes)
    # only the end of the old boot survives in the tail: still cut where it ends
    d = classify(old[-60:] + new)
    assert d.vllm_version == "0.32.0" and d.boot_start_line == 61


@pytest.mark.parametrize("earlier", EARLIER)
def test_every_corpus_log_after_an_earlier_failed_boot_reads_as_alone(earlier: str) -> None:
    before = _lines(CORPUS / earlier)
    wrong = []
    for entry in entries(CORPUS):
        lines = _lines(entry.log_path)
        alone = classify(lines)
        text = "\n".join(lines)
        if alone.vllm_version is None and not any(s in text for s in boots._IMPORT_LINES):
            # A boot that died before printing one line of vLLM's own (torch warnings,
            # then a traceback) cannot be told from the end of the boot above it.
            continue
        after = classify(before + lines)
        got = (after.primary.kind, after.primary.rule_id, after.vllm_version)
        if got != (alone.primary.kind, alone.primary.rule_id, alone.vllm_version):
            wrong.append((entry.log_path.name, got))
    assert not wrong


def test_a_single_boot_is_one_boot() -> None:
    for entry in entries(CORPUS):
        d = classify(_lines(entry.log_path))
        assert d.boots_in_tail == 1 and d.boot_start_line is None, entry.log_path


def test_the_log_version_beats_a_stale_hint_and_says_so() -> None:
    d = classify(_lines(NEW_KV), version="0.21.0")
    assert d.vllm_version == "0.32.0" and d.version_source == "log"
    assert d.primary.rule_id == "KV004" and not d.version_out_of_range
    assert any("0.21.0" in n for n in d.notes) and "0.21.0" in d.summary()
    w = BootWatcher(version="0.21.0")
    reported = None
    for line in _lines(NEW_KV):
        reported = reported or w.feed(line)
    assert reported is not None and reported.vllm_version == "0.32.0"
    # a hint is used where the log states no version
    d = classify(_lines(CORPUS / "0.32.0" / "invalid_argument__dtype-float7__cpu.log"), "0.32.0")
    assert d.vllm_version == "0.32.0" and d.version_source == "hint" and d.notes == ()


def test_an_out_of_range_cause_beats_an_echo_in_range() -> None:
    """A 0.32 shortfall in a log whose version lines claim 0.14 (a table lagging a
    release): KV004 (>=0.22) is out of range, the in-range match is the worker-death
    echo, and the cause still wins."""
    lines = [
        ln.replace("version 0.32.0", "version 0.14.0").replace("(v0.32.0)", "(v0.14.0)")
        for ln in _lines(NEW_KV)
    ]
    d = classify(lines)
    assert d.vllm_version == "0.14.0" and d.version_out_of_range
    assert d.primary.rule_id == "KV004"
    in_range = {m.rule_id for m in d.matches} - {"KV004"}
    assert in_range, "the log holds an in-range echo too"
