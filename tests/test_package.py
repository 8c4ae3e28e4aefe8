"""The package as a worker imports it: beside vLLM, never inside it."""

from __future__ import annotations

import subprocess
import sys

import vllm_bootdiag


def test_import_pulls_in_neither_vllm_nor_torch() -> None:
    code = (
        "import sys, vllm_bootdiag, vllm_bootdiag.cli; "
        "bad = [m for m in sys.modules if m in ('vllm', 'torch') "
        "or m.startswith(('vllm.', 'torch.'))]; print(bad)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_public_api_is_exported() -> None:
    for name in vllm_bootdiag.__all__:
        assert hasattr(vllm_bootdiag, name), name
    assert callable(vllm_bootdiag.classify) and callable(vllm_bootdiag.plan)
