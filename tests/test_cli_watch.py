"""`watch` / `classify --follow`: the answer comes when the boot ends, not when the input does."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
BOOTED_LOG = CORPUS / "0.32.0" / "booted__llama1b-autofit-kvspace1__cpu.log"


def _cli(*args: str, stdin: int | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "vllm_bootdiag", *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_pipe_answers_while_the_writer_is_still_open() -> None:
    """`kubectl logs -f | vllm-bootdiag watch -`: the pipe never closes; the boot ends."""
    proc = _cli("watch", "-", "--json", stdin=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(KV_LOG.read_bytes())
    proc.stdin.flush()
    watchdog = threading.Timer(30, proc.kill)  # a regression must fail, not hang the suite
    watchdog.start()
    try:
        assert proc.stdout is not None
        out = proc.stdout.readline()  # one JSON line, printed before stdin closes
        assert json.loads(out)["primary"]["kind"] == "kv_cache_shortfall"
        assert proc.wait(timeout=30) == 1  # the boot failed; stdin still open
    finally:
        watchdog.cancel()
        proc.stdin.close()
        proc.kill()
        proc.wait()


def test_booted_log_exits_0() -> None:
    proc = _cli("watch", str(BOOTED_LOG), "--json")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["primary"]["kind"] == "booted"


def test_growing_file_is_followed(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    lines = KV_LOG.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:20]))
    proc = _cli("classify", "--follow", str(log), "--json")

    def append() -> None:
        time.sleep(1.0)
        with log.open("ab") as f:
            for line in lines[20:]:
                f.write(line)
                f.flush()

    t = threading.Thread(target=append)
    t.start()
    out, err = proc.communicate(timeout=60)
    t.join()
    assert proc.returncode == 1, err
    assert json.loads(out)["primary"]["kind"] == "kv_cache_shortfall"


def test_timeout_reports_what_was_seen(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"".join(KV_LOG.read_bytes().splitlines(keepends=True)[:20]))
    started = time.monotonic()
    proc = _cli("watch", str(log), "--timeout", "1", "--json")
    out, _ = proc.communicate(timeout=60)
    assert time.monotonic() - started < 30
    assert proc.returncode == 1  # the boot did not come up
    doc = json.loads(out)
    assert doc["primary"]["kind"] == "unknown" and doc["vllm_output_found"] is True


def test_bad_timeout_and_missing_file_are_usage_errors(tmp_path: Path) -> None:
    for args in (("watch", str(KV_LOG), "--timeout", "0"), ("watch", str(tmp_path / "no.log"))):
        proc = _cli(*args)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2 and out == b"" and err.count(b"\n") == 1, err
