"""Redaction of real-shaped vLLM log lines: identifying parts go, vLLM's structure stays."""

from __future__ import annotations

import pytest

from vllm_bootdiag.redact import redact

VENV = "/work/envs/v0.32.0/lib/python3.11/site-packages"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            f'  File "{VENV}/vllm/v1/engine/core.py", line 1510, in run_engine_core',
            '  File "<venv>/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 1510, '
            "in run_engine_core",
        ),
        (
            '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/multiprocessing/process.py", '
            "line 314, in _bootstrap",
            '  File "<python>/lib/python3.11/multiprocessing/process.py", line 314, in _bootstrap',
        ),
        (
            '  File "/home/alice/venvs/vllm/bin/vllm", line 8, in <module>',
            '  File "<venv>/bin/vllm", line 8, in <module>',
        ),
        (
            "(EngineCore pid=6115) INFO 11-29 15:57:01 [backends.py:61] Using cache directory: "
            "/root/.cache/vllm/torch_compile_cache/3f2a9c/rank_0_0/backbone for vLLM's "
            "torch.compile",
            "(EngineCore pid=6115) INFO 11-29 15:57:01 [backends.py:61] Using cache directory: "
            "<home>/.cache/vllm/torch_compile_cache/3f2a9c/rank_0_0/backbone for vLLM's "
            "torch.compile",
        ),
        (
            "OSError: [Errno 28] No space left on device: '/tmp/torchinductor_bob/ab/cab.py'",
            "OSError: [Errno 28] No space left on device: '<tmp>/torchinductor_bob/ab/cab.py'",
        ),
        (
            "non-default args: {'model_tag': '/work/envs/models/smollm2-135m-shape'}",
            "non-default args: {'model_tag': '<work>/envs/models/smollm2-135m-shape'}",
        ),
        (
            "distributed_init_method=file:///tmp/vllm_dist_4f090f73 backend=gloo",
            "distributed_init_method=file://<tmp>/vllm_dist_4f090f73 backend=gloo",
        ),
        (
            "/home/bob/models/llama is not a local folder",
            "<home>/models/llama is not a local folder",
        ),
    ],
)
def test_paths(line: str, expected: str) -> None:
    assert redact(line) == expected


def test_vllm_file_line_references_are_kept() -> None:
    line = "(EngineCore pid=6115) ERROR 11-29 15:57:09 [core.py:1510] EngineCore failed to start."
    assert redact(line) == line


def test_ansi_crlf_and_box_drawing_are_kept() -> None:
    line = (
        "\x1b[1;36m(APIServer pid=88)\x1b[0;0m \x1b[32mINFO\x1b[0m \x1b[90m11-29 15:55:52\x1b[0m "
        "\x1b[90m[api_utils.py:347]\x1b[0m \u2588\u2584 version 0.32.0\r\n"
    )
    assert redact(line) == line


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "distributed_init_method=tcp://10.128.0.7:43121 backend=gloo",
            "distributed_init_method=tcp://<ip>:43121 backend=gloo",
        ),
        (
            "world_size=1 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:40231",
            "world_size=1 rank=0 local_rank=0 distributed_init_method=tcp://127.0.0.1:40231",
        ),
        ("Starting vLLM API server 0 on http://0.0.0.0:8000", None),
        ("peer fe80::1ff:fe23:4567:890a%eth0 refused", "peer <ip>%eth0 refused"),
        ("bound to [2001:db8:85a3::8a2e:370:7334]:8000", "bound to [<ip>]:8000"),
        ("listening on [::1]:8000 and [::]:8000", None),
        ("vLLM 0.10.1.1 on 192.168.1.20", "vLLM 0.10.1.1 on <ip>"),
    ],
)
def test_addresses(line: str, expected: str | None) -> None:
    assert redact(line) == (line if expected is None else expected)


@pytest.mark.parametrize(
    "line",
    [
        "(APIServer pid=5719) INFO 11-29 15:55:52 [api_utils.py:347] version 0.32.0",
        "torch._C._cuda_init() c10::Error at 12:34:56 in std::vector",
        "Auto-fit max_model_len: reduced from 131072 to 32640 (1.0 GiB) 2.13.0+cpu",
        "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
    ],
)
def test_lookalikes_are_not_touched(line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345 vllm serve",
            "HF_TOKEN=<token> vllm serve",
        ),
        (
            "openai key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234 leaked",
            "openai key <token> leaked",
        ),
        (
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
            "Authorization: Bearer <token>",
        ),
        (
            "non-default args: {'api_key': ['s3cret-value'], 'port': 8000}",
            "non-default args: {'api_key': ['<token>'], 'port': 8000}",
        ),
        (
            "vllm serve m --api-key s3cret-value --port 8000",
            "vllm serve m --api-key <token> --port 8000",
        ),
        ("api_key=None", "api_key=None"),
    ],
)
def test_tokens(line: str, expected: str) -> None:
    assert redact(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Connected to ip-10-0-3-17.ec2.internal:29500", "Connected to <host>:29500"),
        ("node gpu-node-4.cluster.local is down", "node <host> is down"),
        ("host=ip-172-31-9-4", "host=<host>"),
    ],
)
def test_host_names(line: str, expected: str) -> None:
    assert redact(line) == expected


def test_extra_literals_longest_first() -> None:
    text = "runner build-box-7 and build-box-7.lab said hi"
    assert (
        redact(text, ["build-box-7", "build-box-7.lab"])
        == "runner <redacted> and <redacted> said hi"
    )
    assert redact(text, [""]) == text


def test_whole_traceback_block() -> None:
    block = (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/bin/vllm", line 8, in <module>\n'
        "    sys.exit(main())\n"
        f'  File "{VENV}/vllm/entrypoints/cli/main.py", line 120, in main\n'
        "    args.dispatch_function(args)\n"
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
    )
    out = redact(block)
    assert "/work/" not in out and "/opt/venv" not in out
    assert '"<venv>/bin/vllm"' in out
    assert "<venv>/lib/python3.11/site-packages/vllm/entrypoints/cli/main.py" in out
    assert out.count("\n") == block.count("\n")


def test_path_right_after_an_ansi_code() -> None:
    line = "\x1b[90m/root/.cache/vllm/x\x1b[0m \x1b[1m/work/envs/models/m\x1b[0m"
    assert redact(line) == "\x1b[90m<home>/.cache/vllm/x\x1b[0m \x1b[1m<work>/envs/models/m\x1b[0m"


def test_path_glued_to_a_url() -> None:
    line = (
        "See https://nanobind.readthedocs.io/en/latest/refleaks.html/root/.pyenv/versions/3.11.7"
        "/lib/python3.11/multiprocessing/resource_tracker.py:254: UserWarning: x"
    )
    assert redact(line) == (
        "See https://nanobind.readthedocs.io/en/latest/refleaks.html<python>/lib/python3.11"
        "/multiprocessing/resource_tracker.py:254: UserWarning: x"
    )


# --- every leak the issue listed -----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # host names in URLs, public documentation kept
        (
            "Tracking to http://mlflow.acme-research.com:5000/api and see https://docs.vllm.ai/x",
            "Tracking to http://<host>:5000/api and see https://docs.vllm.ai/x",
        ),
        ("GET https://huggingface.co/api/models/m", None),
        # bare fully qualified host names
        (
            "connecting to node-7.us-west-2.compute.amazonaws.com:29500",
            "connecting to <host>:29500",
        ),
        # e-mail addresses
        ("contact: alice.smith+vllm@acme.com for access", "contact: <email> for access"),
        # user names in paths outside /home and /root
        ('  File "/Users/alice/src/app/main.py", line 3', '  File "<home>/src/app/main.py", line 3'),
        ("loading /data/users/bob/models/llama", "loading <home>/models/llama"),
        ("saving to /scratch/carol/ckpt/step-100", "saving to <storage>/ckpt/step-100"),
        ("model at /mnt/dave-team/models/llama-3", "model at <storage>/models/llama-3"),
        ("cache in ~/hf-cache and ~erin/models/x", "cache in <home>/hf-cache and <home>/models/x"),
        (r"C:\Users\frank\models\llama", r"<home>\models\llama"),
        # virtualenvs the old scrubber did not know
        (
            '  File "/srv/envs/venv/lib64/python3.11/site-packages/vllm/engine/arg_utils.py", line 9',
            '  File "<venv>/lib/python3.11/site-packages/vllm/engine/arg_utils.py", line 9',
        ),
        (
            '  File "/usr/local/lib/python3.10/dist-packages/vllm/config.py", line 1',
            '  File "<venv>/lib/python3.10/dist-packages/vllm/config.py", line 1',
        ),
        # AWS keys, passwords
        (
            "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_ACCESS_KEY_ID=<token> AWS_SECRET_ACCESS_KEY=<token>",
        ),
        ("key id AKIAIOSFODNN7EXAMPLE in a message", "key id <token> in a message"),
        ("db password=hunter2 user=x", "db password=<token> user=x"),
        ('{"password": "correct horse", "port": 8000}', '{"password": "<token>", "port": 8000}'),
        ("DB_PASSWORD='p w' WANDB_API_KEY=abc123", "DB_PASSWORD='<token>' WANDB_API_KEY=<token>"),
        # credentials inside URLs
        ("postgres://bob:hunter2@10.1.2.3/db", "postgres://<user>:<token>@<ip>/db"),
        ("redis://:s3cret@cache.prod.acme.io:6379/0", "redis://:<token>@<host>:6379/0"),
        ("https://oauth2:ghtoken@gitlab.acme.com/x.git", "https://<user>:<token>@<host>/x.git"),
        ("https://b.s3.amazonaws.com/k?X-Amz-Signature=abcdef&x=1", "https://<host>/k?X-Amz-Signature=<token>&x=1"),
        # MAC addresses
        ("eth0 ether 00:1a:2b:3c:4d:5e up, 00-1A-2B-3C-4D-5F", "eth0 ether <mac> up, <mac>"),
    ],
)
def test_listed_leaks(line: str, expected: str | None) -> None:
    out = redact(line)
    assert out == (line if expected is None else expected)
    assert redact(out) == out


@pytest.mark.parametrize(
    "line",
    [
        # numbers and names rules read
        "(EngineCore_DP0 pid=12) INFO 11-29 15:57:01 [gpu_worker.py:276] Available KV cache memory: 1.0 GiB",
        "non-default args: {'max_num_batched_tokens': 8192, 'max_num_seqs': 256, 'gpu_memory_utilization': 0.9}",
        "max_num_batched_tokens=8192, HF_TOKEN=None, password=None",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.19 GiB",
        "Loading safetensors checkpoint shards: model-00001-of-00004.safetensors config.json libcudart.so.12",
        "Your GPU has compute capability 7.0 and driver 535.104.05 with CUDA 12.4",
        "Maximum concurrency for 131072 tokens per request: 1.25x at 10:23:45",
        "approx ~ 4 GiB, ~4.0 GiB",
        "vllm.v1.engine.core.EngineCore raised transformers.models.llama.modeling_llama error",
    ],
)
def test_rule_inputs_are_kept(line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(
    "literals",
    [["ted"], ["redac", "ted"], ["<red"], ["acted>"], ["d> x"], ["<", ">"], ["host", "o"], ["home"]],
)
def test_literals_overlapping_markers_are_idempotent(literals: list[str]) -> None:
    text = "node host1 at /home/alice/x and <redacted> x, ted redacted"
    once = redact(text, literals)
    assert redact(once, literals) == once
    assert "<redac<" not in once and "alice" not in once
