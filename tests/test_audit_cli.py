"""The CLI as a hostile user drives it: out-of-range timeouts, and the notes that say how
an answer was reached (an earlier boot left out, a version hint the log contradicts, a
watch that stopped before the boot ended). Built from real corpus logs.

Why: `watch --timeout inf` was "internal error: OverflowError"; the human output of
`classify` dropped the notes the JSON carries, so a log appended across an upgrade, or a
`--vllm-version` the log contradicts, was answered without a word about it; a watch whose
input ended early printed a bare `unknown`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
OLD_BOOT = CORPUS / "0.14.0" / "booted__smollm135m-eager__cpu.log"


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=60,
    )
    return subprocess.CompletedProcess(
        out.args, out.returncode, out.stdout.decode(), out.stderr.decode()
    )


@pytest.mark.parametrize("bad", ["inf", "1e300", "nan", "0", "-1"])
def test_watch_refuses_a_timeout_no_clock_can_keep(bad: str) -> None:
    out = _cli("watch", "-", "--timeout", bad, stdin=KV_LOG.read_bytes())
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("vllm-bootdiag: error: --timeout takes a number of seconds")
    assert out.stderr.count("\n") == 1 and out.stdout == ""


def test_watch_says_the_input_ended_before_the_boot() -> None:
    head = b"".join(KV_LOG.read_bytes().splitlines(keepends=True)[:30])
    out = _cli("watch", "-", stdin=head)
    assert out.returncode == 1
    assert out.stdout.splitlines()[0] == "unknown"
    assert "note: the input ended before the boot did" in out.stdout


def test_classify_prints_the_notes_of_an_appended_log(tmp_path: Path) -> None:
    log = tmp_path / "appended.log"
    old = OLD_BOOT.read_bytes()
    log.write_bytes(old + KV_LOG.read_bytes())
    out = _cli("classify", str(log))
    assert out.returncode == 0
    notes = [ln for ln in out.stdout.splitlines() if ln.startswith("note: ")]
    assert notes and "the tail holds 2 boots" in notes[0]
    assert "vLLM 0.32.0;" in out.stdout and max(map(len, out.stdout.splitlines())) <= 80


def test_classify_says_the_version_hint_was_overruled() -> None:
    out = _cli("classify", str(KV_LOG), "--vllm-version", "0.21.0")
    assert out.returncode == 0
    assert "vLLM 0.32.0;" in out.stdout
    assert "the version given, 0.21.0, was not used" in out.stdout


@pytest.mark.parametrize("ext", ["gz", "bz2", "xz"])
def test_watch_decompresses_as_classify_does(tmp_path: Path, ext: str) -> None:
    """A compressed log read raw held "no vLLM output" (and exit 1 for that): a wrong answer."""
    import bz2
    import gzip
    import lzma

    pack = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[ext]
    path = tmp_path / f"vllm.log.{ext}"
    path.write_bytes(pack(KV_LOG.read_bytes()))
    for args, stdin in (((str(path),), None), (("-",), path.read_bytes())):
        out = _cli("watch", *args, "--timeout", "5", stdin=stdin)
        assert out.returncode == 1, out.stderr
        assert out.stdout.startswith("kv_cache_shortfall: max_model_len=131072"), out.stdout


def test_watch_of_a_zstd_log_says_so(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 64)
    out = _cli("watch", str(path), "--timeout", "5")
    assert out.returncode == 2
    assert out.stderr == f"vllm-bootdiag: error: {path} is zstd-compressed: decompress it first\n"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="no /proc here")
def test_proc_self_status_is_no_vllm_output() -> None:
    """`classify /proc/self/status` reads the process's own status, `Name: vllm-bootdiag`
    in it: our name is not vLLM's output (it was `unknown`, exit 0 under --fail-on-failure)."""
    script = Path(sys.executable).with_name("vllm-bootdiag")  # its process is named so
    if not script.exists():
        pytest.skip("no vllm-bootdiag script beside this Python")
    out = subprocess.run(
        [str(script), "classify", "/proc/self/status", "--fail-on-failure"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1, out.stdout
    assert out.stdout.startswith("no vLLM output found (")


def test_a_line_naming_vllm_is_still_vllm_output() -> None:
    from vllm_bootdiag.text.recognize import is_vllm_output

    assert not is_vllm_output(["Name:\tvllm-bootdiag", "bash: vllm_bootdiag: not found"])
    assert is_vllm_output(["Name:\tvllm-bootdiag", "$ vllm serve meta-llama/Llama-3.2-1B"])
    assert is_vllm_output(['  File "/x/site-packages/vllm/v1/engine/core.py", line 9, in run'])


@pytest.mark.parametrize("content", [b"", bytes(range(256)) * 40, b"GET / HTTP/1.1 200\n" * 50])
def test_plan_of_input_with_no_vllm_output_is_an_input_error(
    tmp_path: Path, content: bytes
) -> None:
    """An empty file, binary data, another program's log: `plan` relaunched `vllm serve`
    with no model ("relaunch (restart)"); there is no boot to plan from."""
    path = tmp_path / "not-vllm.log"
    path.write_bytes(content)
    out = _cli("plan", str(path))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"vllm-bootdiag: error: no vLLM output found in {path} (")
    assert out.stderr.endswith("examined): nothing to plan\n")


def test_redact_json_has_a_schema_and_validates() -> None:
    """Every `--json` document has its schema: `redact --json` printed one that `schema`
    did not describe."""
    import json

    import jsonschema

    doc = json.loads(_cli("redact", str(KV_LOG), "--json").stdout)
    schema = json.loads(_cli("schema", "redact").stdout)
    jsonschema.Draft202012Validator(schema).validate(doc)
    assert list(doc) == ["schema_version", "text"]


def test_watch_of_a_log_appended_across_restarts_watches_the_last_boot(tmp_path: Path) -> None:
    """A worker's log appended across restarts: 0.14's KV shortfall, then a 0.32 boot still
    starting. `watch` read from the top and answered the old boot's failure at once (exit
    1) while the new one was booting; it watches the last boot, and cites file lines."""
    import threading
    import time

    old = (CORPUS / "0.14.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log").read_bytes()
    new = (CORPUS / "0.32.0" / "booted__smollm135m-eager__cpu.log").read_bytes()
    rows = new.splitlines(keepends=True)
    path = tmp_path / "vllm.log"
    path.write_bytes(old + b"".join(rows[:30]))

    def append() -> None:
        time.sleep(1.5)
        with path.open("ab") as f:
            f.write(b"".join(rows[30:]))

    t = threading.Thread(target=append)
    t.start()
    out = _cli("watch", str(path), "--timeout", "30")
    t.join()
    assert out.returncode == 0, out.stdout
    assert out.stdout.startswith("booted: port=")
    start = old.count(b"\n") + 1
    assert f"note: the log holds an earlier boot; the one from line {start}" in out.stdout
    evidence = next(x for x in out.stdout.splitlines() if x.startswith("line "))
    number = int(evidence.split(":")[0].split()[1])
    assert rows[number - start].decode().rstrip("\n").endswith(evidence.split(": ", 1)[1])
