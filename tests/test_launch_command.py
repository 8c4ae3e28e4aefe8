"""Where vLLM's arguments start in a user's command, and argv that is not one."""

from __future__ import annotations

import pytest

from vllm_bootdiag.command import vllm_args_start
from vllm_bootdiag.launch import LaunchConfig, LaunchConfigError

IMG = "vllm/vllm-openai:v0.32.0"


@pytest.mark.parametrize(
    ("argv", "command", "model"),
    [
        ("vllm serve M --max-model-len 4096", "vllm serve", "M"),
        ("/opt/venv/bin/vllm serve M", "/opt/venv/bin/vllm serve", "M"),
        ("uv run vllm serve M", "uv run vllm serve", "M"),
        ("env A=1 B=2 vllm serve M", "env A=1 B=2 vllm serve", "M"),
        ("numactl --cpunodebind=0 --membind 0 vllm serve M", None, "M"),
        ("taskset -c 0-3 vllm serve M", "taskset -c 0-3 vllm serve", "M"),
        (
            "env A=1 python3 -m vllm.entrypoints.openai.api_server --model M",
            "env A=1 python3 -m vllm.entrypoints.openai.api_server",
            "M",
        ),
        ("python -m vllm.entrypoints.cli.main serve M", None, "M"),
        (
            f"docker run --rm --gpus all -p 8000:8000 -e HF_TOKEN=x -v /c:/root {IMG} --model M",
            f"docker run --rm --gpus all -p 8000:8000 -e HF_TOKEN=x -v /c:/root {IMG}",
            "M",
        ),
        (f"podman run -it --ipc=host -p8000:8000 {IMG} --model M", None, "M"),
        (f"docker container run --name x {IMG} --model M", None, "M"),
    ],
)
def test_the_users_part_is_kept_as_given(argv: str, command: str | None, model: str) -> None:
    tokens = argv.split()
    c = LaunchConfig.from_argv([*tokens, "--max-num-seqs", "32"])
    assert not c.passthrough
    assert c.model == model and c.max_num_seqs == 32
    start = vllm_args_start(tokens)
    assert start is not None
    assert " ".join(c.command) == (command or " ".join(tokens[:start]))
    relaunch = c.model_copy(update={"max_num_seqs": 16}).to_argv()
    assert relaunch[: len(c.command)] == list(c.command)  # never reordered or moved
    assert "16" in relaunch[len(c.command) :]


@pytest.mark.parametrize("argv", ["./start.sh M", "sleep 5", "docker ps", "my-server --model M"])
def test_a_command_without_a_vllm_part_is_kept_whole(argv: str) -> None:
    tokens = argv.split()
    c = LaunchConfig.from_argv(tokens)
    assert c.passthrough and c.command == tuple(tokens)
    assert c.to_argv() == tokens
    assert c.model_copy(update={"max_num_seqs": 8}).to_argv() == tokens  # only env changes
    assert c.model_copy(update={"max_num_seqs": 8}).to_env()["MAX_NUM_SEQS"] == "8"


@pytest.mark.parametrize(
    "argv",
    [
        ["vllm", "serve", "m", "--max-model-len", "9" * 400 + ".5k"],
        ["vllm", "serve", "m", "--max-num-seqs", "9" * 5000],
        ["vllm", "serve", "m", "--compilation-config", '{"cudagraph_capture_sizes": [1e999]}'],
        ["vllm", "serve", "m", "--compilation-config", '{"max_cudagraph_capture_size": 1e400}'],
    ],
)
def test_hostile_values_are_one_line_errors(argv: list[str]) -> None:
    with pytest.raises(LaunchConfigError) as e:
        LaunchConfig.from_argv(argv)
    assert "\n" not in str(e.value) and len(str(e.value)) < 400


def test_deeply_nested_compilation_config_is_refused() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(LaunchConfigError, match="too long"):
        LaunchConfig.from_argv(["vllm", "serve", "m", "--compilation-config", deep])
    nested = "[" * 20_000 + "]" * 20_000
    with pytest.raises(LaunchConfigError, match="nested too deeply"):
        LaunchConfig.from_argv(["vllm", "serve", "m", "--compilation-config", nested])


@pytest.mark.parametrize("value", ['{"level": 3', '{"cudagraph_mode": "PIECEWISE",}', " {'a': 1}"])
def test_a_compilation_config_vllm_would_refuse_is_refused(value: str) -> None:
    """vLLM reads a value in braces as JSON (engine/arg_utils.py:181, 0.32.0): a broken one is
    a usage error here, not a relaunch that fails the same way."""
    with pytest.raises(LaunchConfigError, match="not valid JSON"):
        LaunchConfig.from_argv(["vllm", "serve", "m", "--compilation-config", value])


def test_a_compilation_level_passes_through() -> None:
    c = LaunchConfig.from_argv(["vllm", "serve", "m", "--compilation-config", "3"])
    assert c.to_argv()[-2:] == ["--compilation-config", "3"]


def test_nested_log_args_are_not_a_dict_not_a_crash() -> None:
    with pytest.raises(LaunchConfigError):
        LaunchConfig.from_log_args("{'a': " + "(" * 5000 + ")" * 5000 + "}")


@pytest.mark.parametrize("argv", ["vllm serve m", b"vllm serve m"])
def test_a_string_is_not_an_argv(argv: object) -> None:
    with pytest.raises(LaunchConfigError, match="not one string"):
        LaunchConfig.from_argv(argv)  # type: ignore[arg-type]


def test_non_string_tokens_are_refused() -> None:
    with pytest.raises(LaunchConfigError, match="string"):
        LaunchConfig.from_argv(["vllm", "serve", 3])  # type: ignore[list-item]
