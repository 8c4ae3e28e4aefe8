"""Nothing outlives the supervisor: a real SIGKILL of `vllm-bootdiag run`, and a
reader that goes away (`run ... | head -1`), with the stand-in vllm of tests/fakes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_supervisor import MODEL, Fake, health_ok


def _descendants(pid: int) -> set[int]:
    """Every live process below `pid` (from /proc's parent links)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    out: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - out
        out |= frontier
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_healthy(port: int, proc: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not health_ok(port):
        assert proc.poll() is None, "the supervisor exited before the server was up"
        assert time.monotonic() < deadline, "the server never came up"
        time.sleep(0.1)


def _run_cli(fake: Fake, *args: str, **kw: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "vllm_bootdiag.cli.remediation", "run", *args],
        env={**os.environ, **fake.env},
        cwd=fake.tmp,
        **kw,  # type: ignore[arg-type]
    )


def test_sigkill_of_the_supervisor_leaves_no_child(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [{"log": "booted__eager.log", "serve": True, "grandchild": True}])
    argv = ["vllm", "serve", MODEL, "--port", str(fake.port)]
    sup = _run_cli(fake, "--", *argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_healthy(fake.port, sup)
        tree = _descendants(sup.pid)
        assert len(tree) >= 2  # (the launcher,) the stand-in vllm, its grandchild
        os.kill(sup.pid, signal.SIGKILL)
        sup.wait(timeout=5)
        deadline = time.monotonic() + 2.0
        while any(_alive(p) for p in tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in tree if _alive(p)], "a process of the child's tree survived"
        assert not health_ok(fake.port)
    finally:
        for p in _descendants(sup.pid) | set(fake.grandchildren()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


def test_a_reader_that_goes_away_does_not_orphan_the_server(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [{"log": "booted__eager.log", "serve": True, "grandchild": True}])
    argv = ["vllm", "serve", MODEL, "--port", str(fake.port)]
    r, w = os.pipe()
    sup = _run_cli(fake, "--", *argv, stdout=w, stderr=subprocess.DEVNULL)
    os.close(w)
    try:
        _wait_healthy(fake.port, sup)
        tree = _descendants(sup.pid)
        with os.fdopen(r, "rb") as reader:
            first = reader.readline()  # `| head -1`: one line, then the reader is gone
        assert first.startswith(b'{"schema_version": 1, "kind": "run_summary"')
        # Nothing more is written while it serves; a stop now must still clean up.
        sup.send_signal(signal.SIGTERM)
        assert sup.wait(timeout=30) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 2.0
        while any(_alive(p) for p in tree) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in tree if _alive(p)]
    finally:
        for p in _descendants(sup.pid) | set(fake.grandchildren()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)


def test_a_closed_stdout_before_the_summary_stops_the_server(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [{"log": "booted__eager.log", "serve": True}])
    argv = ["vllm", "serve", MODEL, "--port", str(fake.port)]
    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    sup = _run_cli(fake, "--", *argv, stdout=w, stderr=subprocess.PIPE)
    os.close(w)
    _, err = sup.communicate(timeout=60)
    assert sup.returncode == 141, err
    assert b"Traceback" not in err
    time.sleep(0.5)
    assert not health_ok(fake.port)
