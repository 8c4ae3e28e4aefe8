"""LaunchConfig: argv, worker env and the log's `non-default args` in; argv and env out."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from vllm_bootdiag import classify
from vllm_bootdiag.launch import LaunchConfig, LaunchConfigError, parse_int

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["vllm", "serve", "m", "--max-model-len", "32768"], {"max_model_len": 32768}),
        (["vllm", "serve", "m", "--max-model-len=32k"], {"max_model_len": 32000}),
        (["vllm", "serve", "m", "--max-model-len", "32K"], {"max_model_len": 32768}),
        (["vllm", "serve", "m", "--max-model-len", "auto"], {"max_model_len": "auto"}),
        (["vllm", "serve", "m", "--max-model-len", "-1"], {"max_model_len": "auto"}),
        (["vllm", "serve", "m", "--max_model_len", "4096"], {"max_model_len": 4096}),
        (
            ["vllm", "serve", "m", "--gpu-memory-utilization", "0.85"],
            {"gpu_memory_utilization": 0.85},
        ),
        (
            ["vllm", "serve", "m", "--max-num-seqs", "32", "--max-num-batched-tokens", "4096"],
            {"max_num_seqs": 32, "max_num_batched_tokens": 4096},
        ),
        (["vllm", "serve", "m", "--enforce-eager"], {"enforce_eager": True}),
        (["vllm", "serve", "m", "--no-enforce-eager"], {"enforce_eager": False}),
        (["vllm", "serve", "m", "--kv-cache-dtype", "fp8"], {"kv_cache_dtype": "fp8"}),
        (["vllm", "serve", "m", "-tp", "4"], {"tensor_parallel_size": 4}),
        (["vllm", "serve", "m", "--tensor-parallel-size=2"], {"tensor_parallel_size": 2}),
        (["vllm", "serve", "m", "--block-size", "32"], {"block_size": 32}),
        (["vllm", "serve", "m", "--port", "8123"], {"port": 8123}),
        (
            [
                "vllm",
                "serve",
                "m",
                "--compilation-config",
                '{"cudagraph_capture_sizes": [1, 2, 4, 8], "max_cudagraph_capture_size": 8}',
            ],
            {"cudagraph_capture_sizes": (1, 2, 4, 8), "max_cudagraph_capture_size": 8},
        ),
        (["vllm", "serve", "m", "-O", '{"level": 3}'], {"compilation_config_other": '{"level":3}'}),
    ],
)
def test_from_argv_reads_memory_flags(argv: list[str], expected: dict[str, object]) -> None:
    config = LaunchConfig.from_argv(argv)
    for field, value in expected.items():
        assert getattr(config, field) == value
    assert config.model == "m"
    assert config.command == ("vllm", "serve")


def test_unknown_arguments_are_carried_through_in_order() -> None:
    argv = [
        "vllm",
        "serve",
        "org/model",
        "--trust-remote-code",
        "--max-num-seqs",
        "64",
        "--host",
        "0.0.0.0",
        "--served-model-name",
        "a",
        "b",
        "-O3",
    ]
    config = LaunchConfig.from_argv(argv)
    assert config.extra_args == (
        "--trust-remote-code",
        "--host",
        "0.0.0.0",
        "--served-model-name",
        "a",
        "b",
        "-O3",
    )
    assert config.to_argv() == [
        "vllm",
        "serve",
        "org/model",
        "--max-num-seqs",
        "64",
        "--trust-remote-code",
        "--host",
        "0.0.0.0",
        "--served-model-name",
        "a",
        "b",
        "-O3",
    ]


def test_python_module_entrypoint_uses_model_flag() -> None:
    argv = [
        "python",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        "m",
        "--max-model-len",
        "8192",
        "--trust-remote-code",
    ]
    config = LaunchConfig.from_argv(argv)
    assert config.command == ("python", "-m", "vllm.entrypoints.openai.api_server")
    assert config.model == "m"
    assert config.extra_args == ("--trust-remote-code",)
    shorter = config.model_copy(update={"max_model_len": 4096})
    assert shorter.to_argv() == [
        "python",
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        "m",
        "--max-model-len",
        "4096",
        "--trust-remote-code",
    ]
    assert LaunchConfig.from_argv(config.to_argv()) == config


def test_canonical_argv_round_trips_byte_for_byte() -> None:
    argv = [
        "vllm",
        "serve",
        "m",
        "--max-model-len",
        "16384",
        "--gpu-memory-utilization",
        "0.9",
        "--max-num-seqs",
        "32",
        "--enforce-eager",
        "--trust-remote-code",
    ]
    assert LaunchConfig.from_argv(argv).to_argv() == argv


def test_compilation_config_keeps_other_keys_when_sizes_change() -> None:
    config = LaunchConfig.from_argv(
        [
            "vllm",
            "serve",
            "m",
            "--compilation-config",
            '{"level": 3, "cudagraph_capture_sizes": [1, 2, 4, 8, 16]}',
        ]
    )
    smaller = config.model_copy(update={"cudagraph_capture_sizes": (1, 2, 4)})
    assert smaller.compilation_config() == {"level": 3, "cudagraph_capture_sizes": [1, 2, 4]}
    argv = smaller.to_argv()
    assert argv[argv.index("--compilation-config") + 1] == (
        '{"level":3,"cudagraph_capture_sizes":[1,2,4]}'
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["vllm", "serve", "m", "--max-num-seqs", "abc"], "max_num_seqs: not an integer"),
        (["vllm", "serve", "m", "--gpu-memory-utilization", "high"], "not a number"),
        (["vllm", "serve", "m", "--max-model-len"], "--max-model-len needs a value"),
        (["vllm", "serve", "m", "--enforce-eager=maybe"], "not a boolean"),
    ],
)
def test_bad_argv_raises_launch_config_error(argv: list[str], message: str) -> None:
    with pytest.raises(LaunchConfigError, match=message):
        LaunchConfig.from_argv(argv)


def test_from_env_reads_worker_variables() -> None:
    env = {
        "MODEL_NAME": "meta-llama/Llama-3.1-8B-Instruct",
        "MAX_MODEL_LEN": "32768",
        "GPU_MEMORY_UTILIZATION": "0.95",
        "MAX_NUM_SEQS": "256",
        "MAX_NUM_BATCHED_TOKENS": "8192",
        "ENFORCE_EAGER": "False",
        "KV_CACHE_DTYPE": "fp8",
        "TENSOR_PARALLEL_SIZE": "2",
        "BLOCK_SIZE": "",
        "UNRELATED": "x",
    }
    config = LaunchConfig.from_env(env)
    assert config.model == "meta-llama/Llama-3.1-8B-Instruct"
    assert config.max_model_len == 32768
    assert config.gpu_memory_utilization == 0.95
    assert config.max_num_seqs == 256
    assert config.max_num_batched_tokens == 8192
    assert config.enforce_eager is False
    assert config.kv_cache_dtype == "fp8"
    assert config.tensor_parallel_size == 2
    assert config.block_size is None
    assert LaunchConfig.from_env(config.to_env()) == config


def test_env_prefix_and_rendering() -> None:
    config = LaunchConfig(max_num_seqs=32, enforce_eager=True, cudagraph_capture_sizes=(1, 2, 4))
    env = config.to_env(prefix="VLLM_")
    assert env == {
        "VLLM_MAX_NUM_SEQS": "32",
        "VLLM_ENFORCE_EAGER": "true",
        "VLLM_CUDAGRAPH_CAPTURE_SIZES": "1,2,4",
    }
    assert LaunchConfig.from_env(env, prefix="VLLM_") == config


def test_env_bad_value_raises() -> None:
    with pytest.raises(LaunchConfigError, match="max_num_seqs: not an integer"):
        LaunchConfig.from_env({"MAX_NUM_SEQS": "lots"})


def test_from_log_args_reads_the_real_corpus_line() -> None:
    log = CORPUS / "0.32.0" / "invalid_argument__gpu-util-over-one__cpu.log"
    text = log.read_text(encoding="utf-8")
    facts_args = classify(text).facts.non_default_args
    assert facts_args is not None
    config = LaunchConfig.from_log_args(facts_args)
    assert config.model == "<models>/smollm2-135m-shape"
    assert config.port == 47541
    assert config.enforce_eager is True
    assert config.gpu_memory_utilization == 1.5
    assert config.extra_args == ("--host", "127.0.0.1", "--load-format", "dummy")
    assert config.problems() == ["gpu_memory_utilization 1.5 is not in (0, 1]"]


def test_from_log_args_skips_values_that_are_not_literals() -> None:
    text = (
        "non-default args: {'model': 'm', 'max_model_len': -1, 'max_num_seqs': 8, "
        "'compilation_config': {'cudagraph_capture_sizes': [1, 2]}, "
        "'kv_transfer_config': KVTransferConfig(kv_role='both'), 'disable_log_stats': False}"
    )
    config = LaunchConfig.from_log_args(text)
    assert config.max_model_len == "auto"
    assert config.max_num_seqs == 8
    assert config.cudagraph_capture_sizes == (1, 2)
    assert config.extra_args == ("--no-disable-log-stats",)


@pytest.mark.parametrize("text", ["", "[1, 2]", "{'a': ", "__import__('os').system('x')"])
def test_from_log_args_rejects_non_dicts_without_evaluating(text: str) -> None:
    with pytest.raises(LaunchConfigError):
        LaunchConfig.from_log_args(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("4096", 4096),
        ("4k", 4000),
        ("4K", 4096),
        ("1.5k", 1500),
        ("2M", 2 * 2**20),
        ("1_000", 1000),
    ],
)
def test_parse_int_reads_vllm_human_ints(text: str, value: int) -> None:
    assert parse_int(text, "x") == value


def test_problems_lists_values_vllm_rejects() -> None:
    assert LaunchConfig(max_num_seqs=0).problems() == ["max_num_seqs 0 is below 1"]
    assert LaunchConfig(max_num_seqs=64, max_num_batched_tokens=32).problems() == [
        "max_num_batched_tokens 32 is below max_num_seqs 64"
    ]
    assert LaunchConfig(gpu_memory_utilization=0.9, max_num_seqs=32).problems() == []


_flags = st.fixed_dictionaries(
    {},
    optional={
        "max_model_len": st.one_of(st.just("auto"), st.integers(1, 2**21)),
        "gpu_memory_utilization": st.floats(0.01, 1.0, allow_nan=False),
        "max_num_seqs": st.integers(1, 4096),
        "max_num_batched_tokens": st.integers(1, 2**20),
        "enforce_eager": st.booleans(),
        "kv_cache_dtype": st.sampled_from(["auto", "fp8", "fp8_e5m2"]),
        "cudagraph_capture_sizes": st.lists(st.integers(1, 1024), max_size=6).map(tuple),
        "max_cudagraph_capture_size": st.integers(1, 1024),
        "tensor_parallel_size": st.integers(1, 8),
        "block_size": st.sampled_from([8, 16, 32]),
        "port": st.integers(1, 65535),
        "model": st.from_regex(r"[a-z][a-z0-9/_.-]{0,20}", fullmatch=True),
    },
)
_extra = st.lists(
    st.sampled_from(
        [
            ["--trust-remote-code"],
            ["--host", "0.0.0.0"],
            ["--seed", "7"],
            ["--served-model-name", "x"],
            ["-O3"],
        ]
    ),
    max_size=4,
).map(lambda parts: tuple(t for p in parts for t in p))


@given(_flags, _extra)
def test_argv_round_trip(fields: dict[str, object], extra: tuple[str, ...]) -> None:
    config = LaunchConfig.model_validate({**fields, "extra_args": extra})
    argv = config.to_argv()
    assert LaunchConfig.from_argv(argv) == config
    assert LaunchConfig.from_argv(argv).to_argv() == argv


@given(_flags)
def test_env_round_trip(fields: dict[str, object]) -> None:
    config = LaunchConfig.model_validate(fields)
    assert LaunchConfig.from_env(config.to_env()) == config


_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
_value = st.one_of(
    _scalar,
    st.lists(_scalar, max_size=3),
    st.dictionaries(st.text(max_size=8), _scalar, max_size=3),
)
_key = st.one_of(
    st.sampled_from(
        [
            "model",
            "model_tag",
            "max_model_len",
            "port",
            "gpu_memory_utilization",
            "max_num_seqs",
            "enforce_eager",
            "compilation_config",
            "kv_cache_dtype",
            "block_size",
        ]
    ),
    st.text(max_size=10),
)


@pytest.mark.parametrize(
    "args",
    [
        {"model": "-", "max_model_len": 0},  # a model that reads as a flag: --model -
        {"0": "-tp"},  # a value that reads as a flag stays attached: --0=-tp
        {"": False, "swap_space": 4},  # not an argument name: skipped, never `--`
    ],
)
def test_from_log_args_round_trips_values_that_look_like_flags(args: dict[str, object]) -> None:
    config = LaunchConfig.from_log_args(repr(args))
    argv = config.to_argv()
    assert "--" not in argv
    assert LaunchConfig.from_argv(argv) == config


@pytest.mark.parametrize(
    ("value", "argv"),
    [
        ('{"level": 3}', ["--compilation-config", '{"level":3}']),
        ("3", ["--compilation-config", "3"]),
        ({"level": 3}, ["--compilation-config", '{"level":3}']),
    ],
)
def test_a_compilation_config_in_the_log_args_is_read_as_the_flag_is(
    value: object, argv: list[str]
) -> None:
    """Text or dict, the value is what `--compilation-config` reads: the launch written from
    it reads back the same (hypothesis found `'{'` kept raw, which the flag refuses)."""
    config = LaunchConfig.from_log_args(repr({"compilation_config": value}))
    assert config.to_argv()[2:] == argv
    assert LaunchConfig.from_argv(config.to_argv()) == config
    with pytest.raises(LaunchConfigError, match="not valid JSON"):
        LaunchConfig.from_log_args(repr({"compilation_config": "{"}))


@given(st.dictionaries(_key, _value, max_size=6))
def test_from_log_args_reads_any_dict_or_says_why(args: dict[str, object]) -> None:
    try:
        config = LaunchConfig.from_log_args(repr(args))
    except LaunchConfigError:
        return
    assert LaunchConfig.from_argv(config.to_argv()).to_argv() == config.to_argv()


@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "--max-model-len",
                    "--port",
                    "-tp",
                    "--enforce-eager",
                    "--compilation-config",
                    "serve",
                    "--",
                    "-O",
                ]
            ),
            st.text(max_size=8),
        ),
        max_size=8,
    )
)
def test_from_argv_parses_any_tokens_or_says_why(tokens: list[str]) -> None:
    try:
        config = LaunchConfig.from_argv(["vllm", "serve", *tokens])
    except LaunchConfigError:
        return
    assert LaunchConfig.from_argv(config.to_argv()).to_argv() == config.to_argv()


def test_env_keeps_vllms_own_variables_and_carries_them() -> None:
    env = {
        "MAX_NUM_SEQS": "64",
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "0",
        "VLLM_CPU_KVCACHE_SPACE": "",
        "HOME": "/root",
    }
    c = LaunchConfig.from_env(env)
    assert c.env == (("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "0"),)
    assert c.to_env()["VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"] == "0"
    assert c.to_env()["MAX_NUM_SEQS"] == "64"
    assert hash(c) == hash(LaunchConfig.from_env(env))  # still usable in a set
    assert LaunchConfig(env={"B": "2", "A": "1"}).env == (("A", "1"), ("B", "2"))


@pytest.mark.parametrize(
    "env",
    [{"1BAD": "x"}, {"A=B": "x"}, {"A": "nul\x00"}, {"A": "x" * 5000}, [("A",)]],
)
def test_env_rejects_what_exec_would(env: object) -> None:
    with pytest.raises(ValidationError):
        LaunchConfig.model_validate({"env": env})
