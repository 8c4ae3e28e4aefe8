"""Redaction of what a hostile (or careless) bug report carries, checked on corpus logs
with the secrets put where vLLM and its libraries print them."""

from __future__ import annotations

from pathlib import Path

import pytest

from vllm_bootdiag import classify
from vllm_bootdiag.redact import redact

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


@pytest.mark.parametrize(
    ("secret", "kept"),
    [
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = ",
        ),
        ("aws_session_token='IQoJb3JpZ2luX2VjEXAMPLE'", "aws_session_token='"),
        ("--password hunter2x", "--password "),
        ("--hf-token hf-not-prefixed-secret", "--hf-token "),
        ("--token=abcdef123456", "--token="),
    ],
)
def test_secrets_in_a_real_boot_line_are_gone(secret: str, kept: str) -> None:
    lines = KV.read_text().splitlines()
    # the API server's own argument dump, with the secret appended as a shell would echo it
    k = next(i for i, line in enumerate(lines) if "non-default args:" in line)
    lines.insert(k + 1, lines[k].split(" non-default args:")[0] + " launched with " + secret)
    text = "\n".join(lines) + "\n"
    out = redact(text)
    value = secret[len(kept) :].strip("'\"")
    assert value not in out
    assert kept + "<token>" in out
    assert redact(out) == out
    a, b = classify(text), classify(out)
    assert (a.primary.kind, a.primary.rule_id, a.vllm_version, a.phase) == (
        b.primary.kind, b.primary.rule_id, b.vllm_version, b.phase,
    )  # fmt: skip


def test_a_literal_never_changes_a_file_line_reference() -> None:
    text = KV.read_text()
    refs = {w for w in text.split() if w.startswith("[") and ".py:" in w and w.endswith("]")}
    assert len(refs) > 5
    modules = sorted({r[1:].split(".py:")[0] for r in refs})
    out = redact(text, modules)
    for ref in refs:
        assert ref in out, ref
    assert classify(out).phase == classify(text).phase  # the markers still read
    assert redact(out, modules) == out
