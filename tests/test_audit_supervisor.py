"""Which limit ended a hung boot, and the timeouts `run` accepts.

Why: a boot stopped by `--boot-timeout` was reported as the boot-seconds budget running out
(with "raise --budget-seconds") whenever the budget was within a second of the time spent,
and `--boot-timeout nan` never timed out while `inf` or `0` were taken without a word.
The hung boot is the stand-in vllm (tests/fakes) printing a line vLLM prints, then sleeping.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_supervisor import Fake

from vllm_bootdiag.planning import Policy
from vllm_bootdiag.run_summary import RunSummary
from vllm_bootdiag.supervisor import Supervisor

STALL = "INFO 11-29 16:18:01 [model.py:2152] Using max model len 8192\n"


@pytest.fixture
def hung(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fake:
    fakes = Path(__file__).resolve().parent / "fakes" / "bin"
    monkeypatch.setenv("PATH", f"{fakes}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "stall.log"
    log.write_text(STALL)
    return Fake(tmp_path, [{"log": str(log), "hang": True}])


def _run(hung: Fake, policy: Policy, boot_timeout: float) -> RunSummary:
    """The supervisor's summary of the hung boot under `policy` and `boot_timeout`."""
    sup = hung.supervisor(hung.argv(), policy, boot_timeout=boot_timeout)
    try:
        return sup.run()
    finally:
        sup.stop()


def test_the_boot_timeout_is_named_when_it_ends_the_boot(hung: Fake) -> None:
    # the budget (1.8 s) is later than the boot's own deadline (1 s): the boot timeout ended it
    summary = _run(hung, Policy(max_boot_seconds=1.8), boot_timeout=1.0)
    give_up = summary.give_up
    assert give_up is not None and give_up.cause == "budget"
    assert "--boot-timeout (1 s)" in give_up.reason
    assert give_up.advice[0].startswith("Raise --boot-timeout ")


def test_the_budget_is_named_when_it_ends_the_boot(hung: Fake) -> None:
    summary = _run(hung, Policy(max_boot_seconds=1.0), boot_timeout=30.0)
    give_up = summary.give_up
    assert give_up is not None and "boot-seconds budget (1 s" in give_up.reason
    assert give_up.advice[0].startswith("Raise --budget-seconds ")
    assert summary.attempts[0].seconds < 10


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e300, 0.0, -1.0])
def test_a_boot_timeout_no_clock_can_keep_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="boot_timeout takes seconds above 0"):
        Supervisor(["vllm", "serve", "m"], Policy(), boot_timeout=bad)


@pytest.mark.parametrize("bad", ["nan", "inf", "0", "-1", "1e300"])
def test_run_refuses_such_a_boot_timeout_in_one_line(bad: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", "run", "--boot-timeout", bad, "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("vllm-bootdiag: error: --boot-timeout takes seconds above 0")
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_an_endless_line_is_echoed_whole_and_the_boot_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that prints 6 MB without a newline (junk, or a progress bar redrawn with CR
    for an hour) before its real output: read in 64 KB pieces (the supervisor held the
    whole line), echoed as printed (UTF-8 cut between pieces decoded whole), and the boot
    that follows classified. The log after the junk is the fakes' KV-shortfall boot."""
    import io

    fakes = Path(__file__).resolve().parent / "fakes"
    monkeypatch.setenv("PATH", f"{fakes / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    junk = "aé€" * (6 * 2**20 // 6)  # 1 + 2 + 3 bytes: pieces of 64 KB cut characters
    log = tmp_path / "junk-then-kv.log"
    log.write_text(junk + "\n" + (fakes / "logs" / "kv_shortfall__big-gap.log").read_text())
    fake = Fake(tmp_path, [{"log": str(log), "exit": 1}])
    echo = io.StringIO()
    sup = Supervisor(fake.argv(), Policy(max_attempts=1), env=fake.env, echo=echo,
                     health_interval=0.1, drain_seconds=0.3, kill_grace=2.0)  # fmt: skip
    try:
        summary = sup.run()
    finally:
        sup.stop()
    assert summary.attempts[0].outcome == "kv_cache_shortfall"
    assert echo.getvalue().split("\n", 1)[0] == junk


def test_an_endless_line_is_read_in_bounded_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tracemalloc

    fakes = Path(__file__).resolve().parent / "fakes"
    monkeypatch.setenv("PATH", f"{fakes / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "junk-then-kv.log"
    boot = (fakes / "logs" / "kv_shortfall__big-gap.log").read_text()
    log.write_text("x" * 24 * 2**20 + "\n" + boot)
    fake = Fake(tmp_path, [{"log": str(log), "exit": 1}])
    sup = Supervisor(fake.argv(), Policy(max_attempts=1), env=fake.env, echo=None,
                     health_interval=0.1, drain_seconds=0.3, kill_grace=2.0)  # fmt: skip
    tracemalloc.start()
    try:
        summary = sup.run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        sup.stop()
    assert summary.attempts[0].outcome == "kv_cache_shortfall"
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MiB held for a 24 MiB line"


@pytest.mark.parametrize("where", ["no-such-folder/summary.json", "."])
def test_an_unwritable_summary_file_is_refused_before_any_launch(
    hung: Fake, tmp_path: Path, where: str
) -> None:
    """`run --summary FILE` found FILE unwritable only after the boot (minutes on a GPU),
    and the summary was lost; it is a usage error before anything starts."""
    target = tmp_path / where
    out = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", "run", "--boot-timeout", "5",
         "--summary", str(target), "--", *hung.argv()],
        capture_output=True, text=True, timeout=60, env={**os.environ, **hung.env},
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.startswith(f"vllm-bootdiag: error: --summary {target}: ")
    assert out.stderr.count("\n") == 1
    assert hung.launches() == []  # nothing was started
