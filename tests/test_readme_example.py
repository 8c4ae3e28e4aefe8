"""The README's worker example runs as written, on a real corpus log."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from vllm_bootdiag import logtail

ROOT = Path(__file__).resolve().parent.parent
KV_LOG = ROOT / "corpus" / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


def _worker_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Using it in a serving worker"):]
    return section[section.index("```python") + len("```python"): section.index("```\n", section.index("```python") + 9)]


def test_worker_example_relaunches_then_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "environ", {"MODEL_NAME": "meta-llama/Llama-3.2-1B",
                                        "MAX_MODEL_LEN": "131072", "MAX_NUM_SEQS": "256"})
    launches: list[list[str]] = []
    failed: list[Any] = []

    def launch_and_wait(argv: list[str]) -> list[str] | None:
        launches.append(argv)
        return logtail.read_tail(KV_LOG) if len(launches) == 1 else None  # second boot is healthy

    scope: dict[str, Any] = {"launch_and_wait": launch_and_wait,
                             "fail_jobs": lambda *a: failed.append(a)}
    exec(compile(_worker_example(), "README.md", "exec"), scope)
    assert len(launches) == 2 and not failed
    first, second = launches
    assert "--max-num-seqs" in first and first[first.index("--max-num-seqs") + 1] == "256"
    assert second != first
    assert scope["history"][0].outcome == "kv_cache_shortfall"
    assert scope["config"] != scope["history"][0].config


def _first_python_block() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("```python\n") + len("```python\n")
    return text[start : text.index("```\n", start)]


def test_first_python_snippet_runs_as_pasted(tmp_path: Path) -> None:
    """Pasted into a file and run from the repository root, as a new user would."""
    import subprocess
    import sys

    script = tmp_path / "snippet.py"
    script.write_text(_first_python_block())
    r = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert out[0] == "kv_cache_shortfall memory"
    assert out[1].startswith("kv_cache_shortfall: max_model_len=131072")
    assert out[3] == "False"
    assert out[-1] == "boot ended: kv_cache_shortfall"
