"""The CLI as a user runs it: a real subprocess, real exit codes, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_classify_human_output() -> None:
    r = run("classify", str(KV_LOG))
    assert r.returncode == 0, r.stderr
    first = r.stdout.split("\nvLLM ")[0]  # the outcome line, wrapped at 80 columns
    assert first.startswith("kv_cache_shortfall: max_model_len=131072")
    assert "estimated_max_model_len=32640" in first
    assert "next: " in r.stdout
    assert max(map(len, r.stdout.splitlines())) <= 80


def test_classify_json_is_a_diagnosis() -> None:
    r = run("classify", str(KV_LOG), "--json")
    d = json.loads(r.stdout)
    assert d["schema_version"] == 1 and d["vllm_output_found"] is True
    assert d["primary"]["kind"] == "kv_cache_shortfall"
    assert d["primary"]["category"] == "memory"
    assert d["vllm_version"] == "0.32.0"
    assert d["failed"] is True


def test_fail_on_failure_exit_code() -> None:
    assert run("classify", str(KV_LOG), "--fail-on-failure").returncode == 1


def test_stdin() -> None:
    r = run("classify", "-", "--json", stdin=KV_LOG.read_bytes())
    assert json.loads(r.stdout)["primary"]["kind"] == "kv_cache_shortfall"


def test_missing_file_is_exit_2_one_line_no_traceback(tmp_path: Path) -> None:
    r = run("classify", str(tmp_path / "nope.log"))
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and "no such file" in r.stderr
    assert "Traceback" not in r.stderr


def test_binary_garbage_is_unknown(tmp_path: Path) -> None:
    p = tmp_path / "garbage.log"
    p.write_bytes(bytes(range(256)) * 1000)
    r = run("classify", str(p), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["primary"]["kind"] == "unknown"


def test_usage_error_is_exit_2() -> None:
    r = run("classify")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_rules_list_and_explain() -> None:
    r = run("rules")
    assert r.returncode == 0
    groups = r.stdout.split("\nauto_fit_failed\n")[1].split("\n")
    assert any(line.lstrip().startswith("KV009") for line in groups)
    one = run("rules", "kv009")
    assert "Cannot auto-fit max_model_len" in one.stdout and "remediation:" in one.stdout
    assert run("rules", "ZZ999").returncode == 2


def test_timeline_json() -> None:
    r = run("timeline", str(KV_LOG), "--json")
    tl = json.loads(r.stdout)
    assert tl["last_phase"] == "kv_cache_sized"
    assert [e["phase"] for e in tl["events"]][:2] == ["arguments", "engine_init"]


def test_corpus_check_passes_on_the_committed_corpus() -> None:
    r = run("corpus", str(CORPUS), "--fail-on-failure")
    assert r.returncode == 0, r.stdout[-2000:]
    assert r.stdout.rstrip().endswith("logs classify to their label")


def test_redact_scrubs_paths(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("File \"/home/alice/venv/lib/python3.11/site-packages/vllm/engine.py\", line 1\n")
    r = run("redact", str(p))
    assert "/home/alice" not in r.stdout and "vllm/engine.py" in r.stdout
