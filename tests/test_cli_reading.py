"""The CLI on the inputs users really give it: pipes, FIFOs, archives, the wrong file,
and mistakes in the arguments. Never a wrong answer, never an internal error."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
UNKNOWN_LOG = CORPUS / "0.10.1.1" / "unknown__smollm135m-eager-transformers5__cpu.log"


def run(*args: str, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode(), r.stderr.decode())


def one_line_usage_error(r: subprocess.CompletedProcess[str], needle: str) -> None:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and needle in r.stderr, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def kind(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode in (0, 1), r.stderr
    k: str = json.loads(r.stdout)["primary"]["kind"]
    return k


# --- not a regular file: read as a stream -----------------------------------------------


def test_dev_stdin_from_a_pipe_is_the_log() -> None:
    r = run("classify", "/dev/stdin", "--json", "--fail-on-failure", stdin=KV_LOG.read_bytes())
    assert kind(r) == "kv_cache_shortfall" and r.returncode == 1


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_process_substitution_is_the_log() -> None:
    cmd = f"{sys.executable} -m vllm_bootdiag classify <(cat '{KV_LOG}') --json"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert kind(r) == "kv_cache_shortfall"


def test_fifo_with_a_writer_is_the_log(tmp_path: Path) -> None:
    fifo = tmp_path / "boot.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as w:
            w.write(KV_LOG.read_bytes())

    t = threading.Thread(target=write, daemon=True)
    t.start()
    r = run("classify", str(fifo), "--json")
    t.join(10)
    assert kind(r) == "kv_cache_shortfall"


def test_gzip_log_is_read(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log.gz"
    p.write_bytes(gzip.compress(KV_LOG.read_bytes()))
    assert kind(run("classify", str(p), "--json")) == "kv_cache_shortfall"
    assert kind(run("classify", "-", "--json", stdin=p.read_bytes())) == "kv_cache_shortfall"


def test_zip_says_it_is_compressed(tmp_path: Path) -> None:
    p = tmp_path / "logs.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.write(KV_LOG, "vllm.log")
    one_line_usage_error(run("classify", str(p)), "zip-compressed")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_endless_device_is_an_input_error_not_a_hang() -> None:
    one_line_usage_error(run("classify", "/dev/zero", "--lines", "100000", timeout=30), "character device")


# --- no vLLM output: a typed answer, and a failure for --fail-on-failure -----------------

_NGINX = '{ip} - - [{day:02d}/Mar/2026:10:{m:02d}:{s:02d} +0000] "GET /v1/models HTTP/1.1" {status} {size} "-" "curl/8.5.0"'
"""nginx's default `combined` log_format, rendered."""


def _foreign_inputs(tmp_path: Path) -> dict[str, Path]:
    rng = random.Random(7)
    made = {
        "empty": b"",
        "random bytes": bytes(rng.randrange(256) for _ in range(200_000)),
        "nginx access log": "".join(
            _NGINX.format(ip=f"10.0.0.{i % 250}", day=1 + i % 28, m=i % 60, s=(7 * i) % 60,
                          status=200, size=512 + i) + "\n"
            for i in range(3000)
        ).encode(),
        "a million junk lines": b"lorem ipsum dolor sit amet\n" * 1_000_000,
    }
    out = {}
    for name, data in made.items():
        p = tmp_path / name.replace(" ", "_")
        p.write_bytes(data)
        out[name] = p
    return out


def test_foreign_input_says_no_vllm_output_found(tmp_path: Path) -> None:
    for name, p in _foreign_inputs(tmp_path).items():
        r = run("classify", str(p))
        assert r.returncode == 0, (name, r.stderr)
        assert r.stdout.startswith("no vLLM output found ("), (name, r.stdout)
        assert "lines examined" in r.stdout
        j = run("classify", str(p), "--json")
        doc = json.loads(j.stdout)
        assert doc["vllm_output_found"] is False and doc["primary"]["kind"] == "unknown", name
        assert run("classify", str(p), "--fail-on-failure").returncode == 1, name


def test_lines_examined_is_reported(tmp_path: Path) -> None:
    p = tmp_path / "junk.log"
    p.write_bytes(b"hello\n" * 50)
    r = run("classify", str(p))
    assert "(50 lines examined)" in r.stdout


def test_unknown_with_an_error_line_fails_and_says_it_once() -> None:
    r = run("classify", str(UNKNOWN_LOG), "--fail-on-failure")
    assert r.returncode == 1
    error = json.loads(run("classify", str(UNKNOWN_LOG), "--json").stdout)["primary"]["last_error_line"]
    assert error and r.stdout.count(error[:40]) == 1, r.stdout


def test_vllm_log_cut_before_any_error_is_not_a_failure(tmp_path: Path) -> None:
    """The first lines of a boot (arguments, config): a boot still going, no failure yet."""
    p = tmp_path / "start.log"
    p.write_text("".join(KV_LOG.read_text().splitlines(keepends=True)[:5]))
    r = run("classify", str(p), "--json", "--fail-on-failure")
    assert json.loads(r.stdout)["vllm_output_found"] is True
    assert r.returncode == 0


# --- user mistakes: one line, exit 2 -------------------------------------------------------


@pytest.mark.parametrize("lines", ["0", "-5", str(10**12), "many"])
@pytest.mark.parametrize("command", ["classify", "timeline", "redact", "watch"])
def test_bad_lines_is_a_usage_error(command: str, lines: str) -> None:
    one_line_usage_error(run(command, str(KV_LOG), "--lines", lines), "--lines")


def test_truncated_wheel_is_a_usage_error(tmp_path: Path) -> None:
    wheel = tmp_path / "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("vllm/__init__.py", "x = 1\n" * 10_000)
    wheel.write_bytes(good.read_bytes()[:-200])
    one_line_usage_error(run("scan-source", str(wheel)), "not a readable wheel")


def test_deeply_nested_args_are_a_usage_error() -> None:
    deep = "[" * 5000 + "]" * 5000
    r = run("plan", str(KV_LOG), "--args", f"vllm serve m --compilation-config {deep}")
    one_line_usage_error(r, "nested too deeply")


def test_unknown_command_and_missing_log_are_one_line() -> None:
    one_line_usage_error(run("bogus"), "invalid choice")
    one_line_usage_error(run("classify"), "required")
