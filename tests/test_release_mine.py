"""`corpus mine`: a fleet's logs classified, the unread ones grouped by masked error line.

The fleet is built from real corpus logs: a real boot cut where its weights start
loading, ended by a traceback whose last line is Python's own `PermissionError`
text (`[Errno 13] Permission denied: '<path>'`) on vLLM's compile-cache layout,
with pids, times, hashes and ranks varied per copy as they vary across a fleet.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from vllm_bootdiag import pipeline
from vllm_bootdiag.release import mine

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
BOOT = CORPUS / "0.32.0" / "booted__smollm135m-eager__cpu.log"
KV = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"

RECORD = "(EngineCore pid={pid}) ERROR 11-29 17:0{m}:28 [core.py:1510] "


def _dies_loading(n: int) -> str:
    """A real boot cut at its weight load, ending on a permission error (copy `n`)."""
    lines = BOOT.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if "Starting to load model" in line)
    pid, digest = 3000 + 17 * n, f"{0x3F2A9C1B7E + 977 * n:x}"
    tail = [
        "Traceback (most recent call last):",
        '  File "<venv>/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 1482, in '
        "run_engine_core",
        f"PermissionError: [Errno 13] Permission denied: '/root/.cache/vllm/torch_compile_cache/"
        f"{digest}/rank_{n % 4}_0/backbone'",
    ]
    rec = RECORD.format(pid=pid, m=n % 10)
    return "\n".join([*lines[: cut + 1], *(rec + t for t in tail)]) + "\n"


def _fleet(root: Path, dying: int = 5, booted: int = 2, shortfall: int = 3) -> None:
    for i in range(dying):
        host = root / f"host{i % 2}"
        host.mkdir(exist_ok=True)
        (host / f"boot-{i}.log").write_text(_dies_loading(i))
    for i in range(booted):
        shutil.copy(BOOT, root / f"ok-{i}.log")
    for i in range(shortfall):
        shutil.copy(KV, root / f"kv-{i}.log")
    (root / "kv-0.json").write_text("{}")  # a label beside a log is not a log


def test_the_fleet_logs_are_what_the_test_says() -> None:
    d = pipeline.classify(_dies_loading(1))
    assert d.primary.kind == "unknown"
    assert "Permission denied" in (getattr(d.primary, "last_error_line", "") or "")


def test_mask_removes_what_varies_across_a_fleet() -> None:
    a = mask_of(1)
    assert a == mask_of(2) == mask_of(7)
    assert a == "PermissionError: [Errno <n>] Permission denied: '<path>'"
    # words with digits in them are words, not numbers
    assert mine.mask("ValueError: fp8 is not supported for Llama3 on sm80") == (
        "ValueError: fp8 is not supported for Llama3 on sm80"
    )
    assert mine.mask("RuntimeError: bad pointer 0x7f3a2c00 in 3f2a9c1b7e, 1.5 GiB") == (
        "RuntimeError: bad pointer <hex> in <hex>, <n> GiB"
    )
    assert mine.mask("id 123e4567-e89b-12d3-a456-426614174000 failed") == "id <id> failed"


def mask_of(n: int) -> str:
    return mine.mask(_dies_loading(n).splitlines()[-1])


@pytest.mark.parametrize("workers", [1, 2])
def test_mine_counts_kinds_and_groups_unread_logs(tmp_path: Path, workers: int) -> None:
    _fleet(tmp_path)
    found = mine.mine([tmp_path], workers=workers, batch=2)
    assert found.files == 10
    assert found.kinds == {"unknown": 5, "kv_cache_shortfall": 3, "booted": 2}
    groups = found.ranked()
    assert [(g.pattern, g.count) for g in groups] == [
        ("PermissionError: [Errno <n>] Permission denied: '<path>'", 5)
    ]
    assert Path(groups[0].example).name.startswith("boot-")
    assert "Permission denied" in groups[0].example_line
    assert found.rules["LC001"] == 2


def test_unreadable_files_are_counted_not_raised(tmp_path: Path) -> None:
    _fleet(tmp_path, dying=1, booted=0, shortfall=0)
    os.symlink(tmp_path / "gone.log", tmp_path / "dangling.log")
    (tmp_path / "binary.log").write_bytes(bytes(range(256)) * 64)
    os.mkfifo(tmp_path / "pipe.log")  # never opened: no writer would ever come
    found = mine.mine([tmp_path], workers=1)
    assert found.kinds["unreadable"] == 1
    assert found.unreadable[0][0].endswith("dangling.log")
    assert found.files == 3


def test_groups_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mine, "MAX_GROUPS", 1)
    m = mine.Mined()
    m.add(mine.One("a", "unknown", None, None, "ZeroDivisionError: division by zero"))
    m.add(mine.One("b", "unknown", None, None, "KeyError: 'x'"))
    m.add(mine.One("c", "kv_cache_shortfall", "KV004", "tolerant", "To serve at least 12"))
    m.add(mine.One("d", "kv_cache_shortfall", "KV004", "exact", "To serve at least 12"))
    assert [(g.pattern, g.count) for g in m.ranked()] == [
        ("(other)", 2),
        ("ZeroDivisionError: division by zero", 1),
    ]
    assert m.groups["(other)"].kinds == {"unknown": 1, "tolerant:kv_cache_shortfall": 1}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "vllm_bootdiag", "corpus", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_cli_mine_json_and_text(tmp_path: Path) -> None:
    _fleet(tmp_path)
    r = _cli("mine", str(tmp_path), "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["schema_version"] == 1 and data["files"] == 10
    assert data["groups"][0]["count"] == 5
    r = _cli("mine", str(tmp_path / "host0"), str(KV), "--jobs", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("4 logs in ")
    assert "      3  PermissionError: [Errno <n>] Permission denied: '<path>'" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    assert r.stderr == ""  # no progress bar when stderr is not a terminal


def test_options_may_come_between_mine_and_its_folders(tmp_path: Path) -> None:
    """`corpus mine --json DIR` and `corpus --jobs 1 mine DIR`, as people type them."""
    _fleet(tmp_path)
    for args in (
        ["mine", "--json", str(tmp_path)],
        ["--json", "--jobs", "1", "mine", str(tmp_path)],
    ):
        r = _cli(*args)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["files"] == 10
    r = _cli("mine", "--json", str(tmp_path), "--bogus")
    assert r.returncode == 2 and "unrecognized arguments: --bogus" in r.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["mine"], "needs a directory"),
        (["mine", "/nonexistent/fleet"], "no such file or directory"),
        (["mine", "EMPTY"], "no files matching"),
        (["mine", "EMPTY", "--write-expected"], "--write-expected"),
        (["mine", "EMPTY", "--jobs", "0"], "--jobs"),
        (["a", "b"], "one directory"),
    ],
)
def test_cli_mine_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    r = _cli(*(str(tmp_path) if a == "EMPTY" else a for a in args))
    assert r.returncode == 2
    assert r.stderr.startswith("vllm-bootdiag: error: ") and r.stderr.count("\n") == 1
    assert message in r.stderr


def test_each_file_gets_the_answer_classify_file_gives() -> None:
    """Mining reads tails without numbering them, on forked workers: the answers are
    still classify_file's, file by file, over the whole corpus."""
    logs = sorted(str(p) for p in CORPUS.glob("*/*.log"))
    expected = []
    for path in logs:
        d = pipeline.classify_file(path)
        one = mine.classify_one(path)
        assert (one.kind, one.rule_id, one.tier) == (d.primary.kind, d.primary.rule_id, d.match)
        expected.append(d.primary.kind)
    pooled = mine.mine(logs, workers=2, batch=16)
    assert pooled.files == len(logs)
    assert pooled.kinds == Counter(expected)
