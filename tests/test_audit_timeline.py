"""`timeline` reads a log behind the wrappers `classify` undoes.

Why: `vllm-bootdiag timeline` on a journald, docker json-file or stern copy of a boot
printed no phase at all ("last phase: none") while `classify` of the same file said
kv_cache_sized: the timeline read the raw lines. The wrapped logs are real corpus logs
with each wrapper's prefix added as that tool writes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from vllm_bootdiag import classify_file, timeline

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = [
    CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log",
    CORPUS / "0.22.0" / "engine_died__engine-sigkill__cpu.log",
    CORPUS / "0.32.0" / "booted__smollm135m-eager__cpu.log",
]


def _journald(line: str) -> str:
    return f"Nov 29 15:59:58 gpu-node-7 vllm-serve[12345]: {line}"


def _docker(line: str) -> str:
    return json.dumps({"log": line + "\n", "stream": "stderr", "time": "2026-11-29T15:59:58Z"})


def _stern(line: str) -> str:
    return f"vllm-7f9c-abcde vllm {line}"


WRAPPERS: dict[str, Callable[[str], str]] = {
    "journald": _journald,
    "docker-json-file": _docker,
    "stern": _stern,
}


def _lines(path: Path) -> list[str]:
    rows = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    return rows[:-1] if rows[-1] == "" else rows


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_a_wrapped_log_has_the_phases_of_the_clean_one(log: Path, wrapper: str) -> None:
    clean = timeline.build(_lines(log))
    assert clean.events and clean.last_phase is not None
    wrapped = timeline.build([WRAPPERS[wrapper](x) for x in _lines(log)])
    assert [(e.line, e.phase, e.timestamp) for e in wrapped.events] == [
        (e.line, e.phase, e.timestamp) for e in clean.events
    ]
    assert wrapped.last_phase == clean.last_phase
    assert wrapped.facts == clean.facts


def test_the_timeline_and_classify_agree_on_a_wrapped_file(tmp_path: Path) -> None:
    log = LOGS[0]
    path = tmp_path / "journald.log"
    path.write_text("\n".join(_journald(x) for x in _lines(log)) + "\n")
    tl = timeline.build(_lines(path))
    assert tl.last_phase == classify_file(path).phase == "kv_cache_sized"
