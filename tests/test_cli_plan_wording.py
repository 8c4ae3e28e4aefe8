"""`plan`'s human output says what a step does to memory in the step's own terms."""

from __future__ import annotations

from pathlib import Path

from test_cli import run

from vllm_bootdiag.rules import BY_ID

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_a_larger_reservation_adds_memory_and_a_cut_frees_it(tmp_path: Path) -> None:
    log = tmp_path / "hm008.log"
    log.write_text(BY_ID["HM008"].examples[0] + "\n")  # the 0.33 CPU worker over its reservation
    out = run("plan", str(log)).stdout
    assert "raise_gpu_memory_utilization" in out
    assert "  adds about " in out and "frees about" not in out
    kv = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
    out = run("plan", str(kv)).stdout
    assert "relaunch (" in out and "adds about" not in out
