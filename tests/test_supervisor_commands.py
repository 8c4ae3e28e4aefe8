"""The supervisor never reorders a user's command: containers, env, taskset, scripts.

Real subprocesses: the stand-in `vllm` (tests/fakes) behind the real `env` and
`taskset`, a stand-in `docker`, and a shell script that reads the worker's env.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_supervisor import MODEL, Fake

from vllm_bootdiag.planning import Policy

SCENARIO = [
    {"log": "kv_shortfall__small-gap.log", "exit": 1},
    {"log": "booted__eager.log", "serve": True},
]


def _outer(fake: Fake) -> list[list[str]]:
    path = Path(str(fake.record) + ".outer")
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_docker_run_options_stay_before_the_image(tmp_path: Path) -> None:
    fake = Fake(tmp_path, SCENARIO)
    head = ["docker", "run", "--rm", "--gpus", "all", "-p", "8000:8000", "-e", "A=1"]
    argv = [*head, "vllm/vllm-openai:fake", "--model", MODEL, "--port", str(fake.port)]
    sup = fake.supervisor(argv, Policy(max_concurrency=30))
    try:
        summary = sup.run()
        assert summary.booted
    finally:
        sup.stop()
    first, second = _outer(fake)
    assert first == argv[1:]  # exactly as given
    assert second[: len(head) - 1] == head[1:]  # the container's options, untouched
    rest = second[len(head) - 1 :]
    assert rest[0] == "vllm/vllm-openai:fake" and "--max-num-seqs" in rest
    assert rest[rest.index("--max-num-seqs") + 1] == "32"


@pytest.mark.parametrize("prefix", [["env", "A=1"], ["taskset", "-c", "0"]])
def test_env_and_taskset_prefixes_are_kept(tmp_path: Path, prefix: list[str]) -> None:
    if shutil.which(prefix[0]) is None:
        pytest.skip(f"{prefix[0]} not installed")
    fake = Fake(tmp_path, SCENARIO)
    argv = [*prefix, "vllm", "serve", MODEL, "--port", str(fake.port)]
    sup = fake.supervisor(argv, Policy(max_concurrency=30))
    try:
        summary = sup.run()
        assert summary.booted
        assert list(summary.attempts[0].argv) == argv
        second = list(summary.attempts[1].argv)
        assert second[: len(prefix) + 3] == argv[: len(prefix) + 3]
        assert second[second.index("--max-num-seqs") + 1] == "32"
    finally:
        sup.stop()
    launched = fake.launches()
    assert launched[0] == ["serve", MODEL, "--port", str(fake.port)]


def test_a_script_is_relaunched_through_its_environment_only(tmp_path: Path) -> None:
    fake = Fake(tmp_path, SCENARIO)
    script = tmp_path / "start.sh"
    script.write_text(
        "#!/bin/sh\n"
        'exec vllm serve "$1" --port "$PORT" ${MAX_NUM_SEQS:+--max-num-seqs "$MAX_NUM_SEQS"}'
        ' ${GPU_MEMORY_UTILIZATION:+--gpu-memory-utilization "$GPU_MEMORY_UTILIZATION"}\n'
    )
    script.chmod(0o755)
    fake.env["PORT"] = str(fake.port)
    argv = [str(script), MODEL]
    sup = fake.supervisor(argv, Policy(max_concurrency=30))
    try:
        summary = sup.run()
        assert summary.booted
        assert [list(a.argv) for a in summary.attempts] == [argv, argv]  # never rewritten
    finally:
        sup.stop()
    first, second = fake.launches()
    assert first == ["serve", MODEL, "--port", str(fake.port)]
    assert second[second.index("--max-num-seqs") + 1] == "32"
    assert second[second.index("--gpu-memory-utilization") + 1] == "0.95"
