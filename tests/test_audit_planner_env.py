"""The planner fed a worker's environment as it may really be: a typo, a negative or
absurd number, digits of another script. Each is a typed answer or one error naming the
variable, never a traceback or a relaunch built on a value vLLM would refuse. The boot is
a real corpus log (0.32.0's KV shortfall).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vllm_bootdiag import (
    GiveUp,
    LaunchConfig,
    LaunchConfigError,
    Policy,
    Relaunch,
    classify_file,
    plan,
)

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


@pytest.mark.parametrize("value", ["-5", "0"])
def test_a_value_vllm_refuses_gives_up_as_an_invalid_launch(value: str) -> None:
    config = LaunchConfig.from_env({"MODEL_NAME": "m", "MAX_NUM_SEQS": value})
    step = plan(classify_file(KV_LOG), config, Policy())
    assert isinstance(step, GiveUp) and step.cause == "invalid_launch"
    assert f"max_num_seqs {value}" in step.reason


@pytest.mark.parametrize(("value", "read"), [("３２", 32), ("٣٢", 32), ("9" * 30, 10**30 - 1)])
def test_digits_read_as_python_and_vllm_read_them(value: str, read: int) -> None:
    config = LaunchConfig.from_env({"MODEL_NAME": "m", "MAX_NUM_SEQS": value})
    assert config.max_num_seqs == read
    step = plan(classify_file(KV_LOG), config, Policy())
    assert isinstance(step, Relaunch)
    assert step.config.max_num_seqs is not None and step.config.max_num_seqs <= min(read, 64)
    assert step.argv()[step.argv().index("--max-num-seqs") + 1].isascii()


@pytest.mark.parametrize("value", ["abc", "1e3", "3.0", "\x00", "9" * 5000])
def test_a_value_that_is_no_integer_names_its_variable(value: str) -> None:
    with pytest.raises(LaunchConfigError, match="max_num_seqs: not an integer"):
        LaunchConfig.from_env({"MODEL_NAME": "m", "MAX_NUM_SEQS": value})


def test_plan_env_file_with_a_typo_is_one_line(tmp_path: Path) -> None:
    env = tmp_path / "worker.env"
    env.write_text("MODEL_NAME=m\nMAX_NUM_SEQS=abc\n")
    out = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", "plan", str(KV_LOG), "--env-file", str(env)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr == "vllm-bootdiag: error: max_num_seqs: not an integer: 'abc'\n"
