"""The relaunch loop against real subprocesses: the stand-in `vllm` in tests/fakes/bin
replays boot logs and exits with their codes, or serves /health on 127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vllm_bootdiag.planning import Policy
from vllm_bootdiag.supervisor import LaunchError, RunSummary, Supervisor, health_ok

ROOT = Path(__file__).resolve().parent.parent
FAKES = ROOT / "tests" / "fakes"
CORPUS = ROOT / "corpus"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"

FAST = {"health_interval": 0.1, "drain_seconds": 0.3, "kill_grace": 2.0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class Fake:
    """A scenario for the stand-in vllm, and what it recorded."""

    def __init__(self, tmp: Path, attempts: list[dict[str, Any]]) -> None:
        self.tmp = tmp
        self.scenario = tmp / "scenario.json"
        self.record = tmp / "argv.jsonl"
        self.scenario.write_text(json.dumps({"attempts": attempts}))
        self.port = _free_port()
        self.env = {
            "PATH": f"{FAKES / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            "FAKE_VLLM_SCENARIO": str(self.scenario),
            "FAKE_VLLM_RECORD": str(self.record),
            "PYTHONPATH": str(ROOT),
        }

    def argv(self, *flags: str) -> list[str]:
        return ["vllm", "serve", MODEL, "--port", str(self.port), *flags]

    def launches(self) -> list[list[str]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines()]

    def grandchildren(self) -> list[int]:
        path = Path(str(self.record) + ".pids")
        return [int(x) for x in path.read_text().split()] if path.exists() else []

    def supervisor(self, argv: list[str], policy: Policy, **kw: Any) -> Supervisor:
        return Supervisor(argv, policy, env=self.env, echo=io.StringIO(), **{**FAST, **kw})


@pytest.fixture
def fake_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The supervisor resolves `vllm` through PATH at exec time, in the child's env.
    monkeypatch.setenv("PATH", f"{FAKES / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    yield


def _run(fake: Fake, argv: list[str], policy: Policy, **kw: Any) -> tuple[RunSummary, Supervisor]:
    sup = fake.supervisor(argv, policy, **kw)
    return sup.run(), sup


def test_launch_config_env_is_applied_on_every_attempt(tmp_path: Path, fake_env: None) -> None:
    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__big-gap.log", "exit": 1},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    sup = fake.supervisor(fake.argv(), Policy(max_concurrency=30))
    sup.config = sup.config.model_copy(
        update={"env": (("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "0"),)}
    )
    try:
        summary = sup.run()
        assert summary.booted and len(summary.attempts) == 2
        envs = [json.loads(x) for x in Path(str(fake.record) + ".env").read_text().splitlines()]
        assert [e.get("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS") for e in envs] == ["0", "0"]
    finally:
        sup.stop()


def test_relaunch_order_seqs_and_eager_then_context_then_booted(
    tmp_path: Path, fake_env: None
) -> None:
    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__small-gap.log", "exit": 1},
            {"log": "kv_shortfall__tiny-gap-after-seqs.log", "exit": 1},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    # No context cut preferred over eager: fewer seqs goes with eager, then a cut.
    policy = Policy(
        max_concurrency=30, max_context_cut_before_eager=0, max_gpu_memory_utilization=0.92
    )
    summary, sup = _run(fake, fake.argv("--max-model-len", "131072"), policy)
    try:
        assert summary.result == "booted" and summary.health_confirmed
        assert health_ok(fake.port)
        assert [a.step for a in summary.attempts] == [
            None,
            "lower_max_num_seqs+enforce_eager",
            "lower_max_model_len",
        ]
        assert [a.outcome for a in summary.attempts] == [
            "kv_cache_shortfall",
            "kv_cache_shortfall",
            "booted",
        ]
        assert [a.exit_code for a in summary.attempts[:2]] == [1, 1]
        launched = fake.launches()
        # the first launch is the user's argv exactly as given
        assert launched[0] == fake.argv("--max-model-len", "131072")[1:]
        assert "--max-num-seqs" in launched[1] and launched[1][-1] == "--enforce-eager"
        assert launched[2][-1] == "--enforce-eager" and "32" in launched[2]
        assert "130048" in launched[2]
        assert [d.kind for d in summary.degradations] == ["eager_mode", "shorter_context"]
        assert list(summary.final_argv[1:]) == launched[2]
        line = json.loads(summary.json_line())
        assert line["kind"] == "run_summary" and len(line["attempts"]) == 3
        assert "diagnosis" not in line["attempts"][0]
    finally:
        sup.stop()
    assert not health_ok(fake.port)
    assert sup.process is not None and not _alive(sup.process.pid)


def test_context_lowered_twice_from_each_new_estimate(tmp_path: Path, fake_env: None) -> None:
    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__big-gap.log", "exit": 1},
            {"log": "kv_shortfall__after-shorter-len.log", "exit": 1},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    summary, sup = _run(fake, fake.argv("--max-model-len", "131072"), Policy(max_concurrency=30))
    sup.stop()
    assert summary.booted
    lengths = [a.config.max_model_len for a in summary.attempts]
    assert lengths == [131072, 102400, 97280]
    assert [d.kind for d in summary.degradations] == ["shorter_context"]


def test_budget_in_attempts_is_never_exceeded(tmp_path: Path, fake_env: None) -> None:
    fake = Fake(tmp_path, [{"log": "kv_shortfall__small-gap.log", "exit": 1}])
    policy = Policy(
        max_concurrency=30,
        max_attempts=2,
        max_context_cut_before_eager=0,
        max_gpu_memory_utilization=0.92,
    )
    summary, _ = _run(fake, fake.argv(), policy)
    assert summary.result == "gave_up"
    assert summary.give_up is not None and summary.give_up.cause == "budget"
    assert "lower_max_model_len" in summary.give_up.advice[0]  # what it would have tried next
    assert len(fake.launches()) == 2 == len(summary.attempts)


def test_config_error_gives_up_after_one_launch(tmp_path: Path, fake_env: None) -> None:
    log = CORPUS / "0.32.0" / "invalid_argument__max-num-seqs-abc__cpu.log"
    fake = Fake(tmp_path, [{"log": str(log), "exit": 2}])
    summary, _ = _run(fake, fake.argv(), Policy())
    assert summary.result == "gave_up"
    assert summary.give_up is not None and summary.give_up.cause == "invalid_argument"
    assert len(fake.launches()) == 1
    assert summary.attempts[0].exit_code == 2


def test_failure_line_ends_the_wait_before_the_process_exits(
    tmp_path: Path, fake_env: None
) -> None:
    # The process prints the shortfall, then hangs (as an engine can): no waiting for exit.
    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__big-gap.log", "hang": True, "grandchild": True},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    t0 = time.monotonic()
    summary, sup = _run(fake, fake.argv(), Policy())
    sup.stop()
    assert summary.booted
    assert summary.attempts[0].outcome == "kv_cache_shortfall"
    assert summary.attempts[0].seconds < 10
    assert time.monotonic() - t0 < 20
    (grandchild,) = fake.grandchildren()
    assert not _alive(grandchild), "the first launch's process group was not cleaned up"


def test_sigterm_ignored_escalates_to_sigkill(tmp_path: Path, fake_env: None) -> None:
    fake = Fake(
        tmp_path, [{"log": "kv_shortfall__big-gap.log", "hang": True, "ignore_sigterm": True}]
    )
    summary, sup = _run(fake, fake.argv(), Policy(max_attempts=1), kill_grace=1.0)
    assert summary.result == "gave_up"
    assert sup.process is not None
    assert sup.process.returncode == -signal.SIGKILL


def test_unknown_failure_restarts_once_then_gives_up(tmp_path: Path, fake_env: None) -> None:
    log = tmp_path / "crash.log"
    log.write_text(
        "INFO 11-29 16:18:01 [api_utils.py:347] starting\n"
        "FrobError: the flux capacitor is misaligned\n"
    )
    fake = Fake(tmp_path, [{"log": str(log), "exit": 3}])
    summary, _ = _run(fake, fake.argv(), Policy())
    assert [a.step for a in summary.attempts] == [None, "restart"]
    assert len(fake.launches()) == 2
    assert fake.launches()[0] == fake.launches()[1]
    assert summary.give_up is not None and summary.give_up.cause == "unknown"


def test_a_boot_that_hangs_is_stopped_at_the_time_budget(tmp_path: Path, fake_env: None) -> None:
    log = tmp_path / "stall.log"
    log.write_text("INFO 11-29 16:18:01 [model.py:2152] Using max model len 8192\n")
    fake = Fake(tmp_path, [{"log": str(log), "hang": True}])
    summary, sup = _run(fake, fake.argv(), Policy(), boot_timeout=1.5)
    assert summary.result == "gave_up"
    assert summary.give_up is not None and summary.give_up.cause == "budget"
    assert 1.4 < summary.attempts[0].seconds < 8
    assert sup.process is not None and not _alive(sup.process.pid)


def test_missing_executable_is_a_launch_error(tmp_path: Path) -> None:
    sup = Supervisor(
        [str(tmp_path / "no-such-vllm"), "serve", "m", "--port", str(_free_port())],
        Policy(),
        echo=None,
    )
    with pytest.raises(LaunchError, match="cannot start"):
        sup.run()


# --- the CLI, as a worker's entrypoint would run it -------------------------------------


def _cli(fake: Fake, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, **fake.env}
    return subprocess.Popen(
        [sys.executable, "-m", "vllm_bootdiag.cli.remediation", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=fake.tmp,
    )


def _summary_line(stdout: str) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if '"kind": "run_summary"' in line]
    assert len(lines) == 1, stdout[-2000:]
    data: dict[str, Any] = json.loads(lines[0])
    assert data["schema_version"] == 1
    return data


def test_cli_run_relaunches_until_booted_and_prints_one_summary(tmp_path: Path) -> None:
    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__small-gap.log", "exit": 1},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    proc = _cli(fake, "run", "--max-concurrency", "30", "--stop-after-boot", "--", *fake.argv())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    summary = _summary_line(out)
    assert summary["result"] == "booted"
    step = "lower_max_num_seqs+raise_gpu_memory_utilization"  # the cap allows 0.92 -> 0.95
    assert [a.get("step") for a in summary["attempts"]] == [None, step]
    assert "To serve at least one request" in err  # the child's output is echoed, on stderr
    assert f"relaunching ({step})" in " ".join(err.split())
    assert len(out.splitlines()) == 1  # stdout holds the summary alone: `| jq` works
    assert "above the 30 requests" in summary["attempts"][1]["reason"]
    assert "vllm-bootdiag: booted after 2 launch(es)" in err
    assert not health_ok(fake.port)
    # Our own lines (and their indented continuations) fit 80 columns; the child's are its.
    ours = _own_lines(err)
    assert len(ours) >= 3 and all(len(line) <= 80 for line in ours), ours


def _own_lines(err: str) -> list[str]:
    """The `vllm-bootdiag:` lines on stderr, each with its indented continuations."""
    out: list[str] = []
    inside = False
    for line in err.splitlines():
        inside = line.startswith("vllm-bootdiag:") or (inside and line.startswith("  "))
        if inside:
            out.append(line)
    return out


def test_cli_run_wide_prints_its_lines_whole(tmp_path: Path) -> None:
    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__small-gap.log", "exit": 1},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    proc = _cli(
        fake, "run", "--max-concurrency", "30", "--stop-after-boot", "--wide", "--", *fake.argv()
    )
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    relaunch = [line for line in err.splitlines() if "relaunching (" in line]
    assert len(relaunch) == 1 and len(relaunch[0]) > 80 and "above the 30 requests" in relaunch[0]


def test_cli_run_reads_the_workers_max_concurrency_from_its_environment(
    tmp_path: Path,
) -> None:
    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__small-gap.log", "exit": 1},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    fake.env["MAX_CONCURRENCY"] = "16"
    fake.env["VLLM_BOOTDIAG_MAX_ATTEMPTS"] = "2"
    proc = _cli(fake, "run", "--stop-after-boot", "--", *fake.argv())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    summary = _summary_line(out)
    assert summary["final_config"]["max_num_seqs"] == 16
    assert "above the 16 requests the worker runs" in " ".join(err.split())


def test_cli_run_exits_1_on_give_up_with_advice(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [{"log": "kv_shortfall__negative-available.log", "exit": 1}])
    proc = _cli(fake, "run", "--no-eager", "--", *fake.argv("--max-model-len", "32768"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    summary = _summary_line(out)
    assert summary["result"] == "gave_up"
    assert summary["give_up"]["cause"] == "kv_cache_shortfall"
    assert any("fp8" in a for a in summary["give_up"]["advice"])
    assert "quantized checkpoint" in err


def _wait_for(predicate: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def test_cli_run_forwards_sigterm_to_a_serving_server_and_leaves_nothing(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [{"log": "booted__eager.log", "serve": True, "grandchild": True}])
    proc = _cli(fake, "run", "--", *fake.argv())
    _wait_for(lambda: health_ok(fake.port) and fake.grandchildren(), 30)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert _summary_line(out)["result"] == "booted"
    assert not health_ok(fake.port)
    assert not any(_alive(pid) for pid in fake.grandchildren())


def test_cli_run_sigint_during_boot_stops_and_cleans_up(tmp_path: Path) -> None:
    log = tmp_path / "slow.log"
    log.write_text("INFO 11-29 16:18:01 [model.py:2152] Using max model len 8192\n")
    fake = Fake(tmp_path, [{"log": str(log), "hang": True, "grandchild": True}])
    proc = _cli(fake, "run", "--", *fake.argv())
    _wait_for(lambda: bool(fake.grandchildren()), 30)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert _summary_line(out)["result"] == "stopped"
    assert not any(_alive(pid) for pid in fake.grandchildren())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run"], "give the command after --"),
        (["run", "--", "/nonexistent/vllm", "serve", "m"], "cannot start"),
        (["run", "--", "vllm", "serve", "m", "--max-num-seqs", "x"], "not an integer"),
        (["run", "--budget", "0", "--", "vllm", "serve", "m"], "bad policy: max_attempts"),
    ],
)
def test_cli_run_input_errors_are_one_line_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    fake = Fake(tmp_path, [{"exit": 0}])
    proc = _cli(fake, *args)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_startup_line_without_reachable_health_counts_as_unconfirmed_boot(
    tmp_path: Path, fake_env: None
) -> None:
    # e.g. --host bound to an address 127.0.0.1 does not reach: the log still says it is up.
    fake = Fake(tmp_path, [{"log": "booted__eager.log", "hang": True}])
    summary, sup = _run(fake, fake.argv(), Policy(), unconfirmed_boot_seconds=0.5)
    sup.stop()
    assert summary.booted and not summary.health_confirmed
    assert summary.attempts[0].outcome == "booted"


def test_module_level_run_for_a_workers_main(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vllm_bootdiag import supervisor

    fake = Fake(
        tmp_path,
        [
            {"log": "kv_shortfall__big-gap.log", "exit": 1},
            {"log": "booted__eager.log", "serve": True},
        ],
    )
    for key, value in fake.env.items():
        monkeypatch.setenv(key, value)
    echo = io.StringIO()
    summary = supervisor.run(fake.argv(), Policy(), echo=echo, stop_after_boot=True)
    assert summary.booted
    assert summary.final_config is not None and summary.final_config.max_model_len == 102400
    assert summary.final_config.max_num_seqs == 64  # the fallback: no concurrency given
    assert "relaunching (lower_max_num_seqs+lower_max_model_len)" in " ".join(
        echo.getvalue().split()
    )
    assert not health_ok(fake.port)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored
