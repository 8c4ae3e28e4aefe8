"""Redaction of what an earlier pass let through: a user's folder on shared storage
(`/scratch/users/<user>`, `/lustre/<fs>/users/<user>`, `/mnt/home/<user>`), `token=` and
`AccountKey=` values, HTTP Basic credentials. Each case is a vLLM line (its format string,
with the path or value a user's machine puts in it); each stays idempotent and keeps the
numbers and `[file.py:N]` reference a rule reads.
"""

from __future__ import annotations

import pytest

from vllm_bootdiag import classify
from vllm_bootdiag.redact import redact

# vllm/model_executor/model_loader/weight_utils.py: "Using model weights format %s"-style
# INFO records, and the KV check's ValueError, with user paths and secrets in them
CASES = [
    (
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from "
        "/scratch/users/carol/llama-3.2-1b",
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from <storage>/llama-3.2-1b",
    ),
    (
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from "
        "/lustre/fsw/users/frank/ckpt/step-100",
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from <storage>/ckpt/step-100",
    ),
    (
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from /mnt/home/dave/m",
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from <storage>/m",
    ),
    (
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from /mnt/nfs/home/dave/m",
        "INFO 11-29 15:59:58 [weight_utils.py:280] Loading weights from <storage>/m",
    ),
    ("WANDB_BASE_URL=x token=abcd1234efgh", "WANDB_BASE_URL=x token=<token>"),
    (
        "AZURE_CONN=DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=abc123==;",
        "AZURE_CONN=DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=<token>;",
    ),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic <token>"),
]
KEPT = [
    "INFO 11-29 15:59:58 [scheduler.py:1] max_num_batched_tokens=8192, pad_token: <pad>",
    "INFO 11-29 15:59:58 [arg_utils.py:1] non-default args: {'hf_token': None}",
    "saving to /scratch/carol/ckpt/step-100",  # (the earlier form: one folder under the root)
]


@pytest.mark.parametrize(("line", "want"), CASES)
def test_a_user_or_secret_is_redacted_and_stays_so(line: str, want: str) -> None:
    assert redact(line) == want
    assert redact(want) == want


@pytest.mark.parametrize("line", KEPT)
def test_ordinary_words_are_kept(line: str) -> None:
    out = redact(line)
    assert redact(out) == out
    if "scratch" not in line:
        assert out == line
    else:
        assert out == "saving to <storage>/ckpt/step-100"


def test_a_kv_shortfall_under_a_users_storage_path_classifies_as_before() -> None:
    """The KV check's message, rendered from vllm/v1/core/kv_cache_utils.py's format string,
    behind a record whose model path is on shared storage: the numbers survive."""
    lines = [
        "INFO 11-29 15:59:58 [api_server.py:1] vLLM API server version 0.32.0",
        "INFO 11-29 15:59:58 [utils.py:1] non-default args: {'model': "
        "'/lustre/fsw/users/frank/llama'}",
        "ERROR 11-29 16:00:40 [core.py:708] ValueError: To serve at least one request with the "
        "model's max seq len (131072), (4.0 GiB KV cache is needed, which is larger than the "
        "available KV cache memory (1.0 GiB). Based on the available memory, the estimated "
        "maximum model length is 32640. Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine.",
    ]
    before = classify(lines)
    after = classify([redact(x) for x in lines])
    assert "frank" not in "".join(redact(x) for x in lines)
    assert before.primary.kind == after.primary.kind == "kv_cache_shortfall"
    assert before.primary.summary() == after.primary.summary()
    assert after.vllm_version == "0.32.0"
