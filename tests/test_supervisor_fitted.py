"""`run` around a server vLLM's auto-fit booted below the policy's minimum context:
a real subprocess (the stand-in vllm replaying the corpus's 0.32.0 auto-fit boot
before /health answers, as vLLM does) is stopped and the run gives up."""

from __future__ import annotations

import time
from pathlib import Path

from test_supervisor import CORPUS, Fake, _alive, _cli, _summary_line

from vllm_bootdiag.planning import Policy
from vllm_bootdiag.supervisor import health_ok

AUTOFIT = CORPUS / "0.32.0" / "booted__llama1b-autofit-kvspace1__cpu.log"


def test_a_boot_fitted_below_the_minimum_is_stopped_and_given_up(tmp_path: Path) -> None:
    fake = Fake(
        tmp_path, [{"log": str(AUTOFIT), "serve": True, "log_first": True, "grandchild": True}]
    )
    sup = fake.supervisor(fake.argv("--max-model-len", "auto"), Policy(min_max_model_len=65536))
    try:
        summary = sup.run()
    finally:
        sup.stop()
    assert summary.result == "gave_up" and len(summary.attempts) == 1
    assert summary.give_up is not None and summary.give_up.cause == "auto_fit_below_minimum"
    assert "fitted 32640 tokens" in summary.give_up.reason
    deadline = time.monotonic() + 10  # a loaded machine; the SIGKILL test keeps 2 s
    while time.monotonic() < deadline and (
        health_ok(fake.port) or any(_alive(p) for p in fake.grandchildren())
    ):
        time.sleep(0.05)
    assert not health_ok(fake.port)
    assert not any(_alive(p) for p in fake.grandchildren())


def test_a_fitted_context_the_policy_accepts_stays_up(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [{"log": str(AUTOFIT), "serve": True, "log_first": True}])
    sup = fake.supervisor(fake.argv("--max-model-len", "auto"), Policy(min_max_model_len=32640))
    try:
        summary = sup.run()
        assert summary.booted and health_ok(fake.port)
    finally:
        sup.stop()


def test_cli_run_exits_1_with_the_give_up_in_its_summary(tmp_path: Path) -> None:
    fake = Fake(tmp_path, [{"log": str(AUTOFIT), "serve": True, "log_first": True}])
    fake.env["VLLM_BOOTDIAG_MIN_MAX_MODEL_LEN"] = "64k"
    proc = _cli(fake, "run", "--", *fake.argv("--max-model-len", "auto"))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    summary = _summary_line(out)
    assert summary["result"] == "gave_up"
    assert summary["give_up"]["cause"] == "auto_fit_below_minimum"
    assert "fitted 32640 tokens, below the 64000" in " ".join(err.split())
    assert not health_ok(fake.port)
