"""The relaunch loop around a real `vllm serve` process.

Launch, echo the output while keeping its tail, poll `/health`, and on failure
classify, plan and relaunch until the server is up or the planner gives up.
The output goes through a BootWatcher, so the first line that ends the boot
(a KV shortfall, an OOM) ends the wait at once instead of a health timeout.

The child runs in its own process group: vLLM starts an engine core and
workers, and stopping only the leader would leave them holding the GPU. Every
stop sends SIGTERM to the group, waits, then SIGKILLs it. The group is led by
`_launcher.py`, which SIGKILLs it when this process dies, even by SIGKILL. Health checks go to
127.0.0.1 only, with proxies disabled. Every wait is bounded.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Literal

from .child_process import Boot, LaunchError, group_alive, health_ok, killpg, output_pieces
from .diagnosis import Diagnosis
from .engine import BootWatcher
from .launch import LaunchConfig
from .planning import Attempt, Degradation, GiveUp, Policy, plan
from .planning.fitted import fitted_below_minimum
from .run_summary import AttemptSummary, RunSummary

__all__ = ["AttemptSummary", "LaunchError", "RunSummary", "Supervisor", "health_ok", "run"]

_LAUNCHER = str(Path(__file__).resolve().parent / "_launcher.py")
_MAX_SECONDS = 1e9
"""The longest boot timeout taken (about 31 years): a larger one is a typo or `inf`."""
"""Runs the command and SIGKILLs its process group if this process dies (see it)."""


class Supervisor:
    """Boot `argv` under `policy`, relaunching as the planner says.

    `run()` returns once the server is up (the child keeps running: `wait()`
    for it, `stop()` to end it) or the planner gives up. `request_stop()` is
    safe to call from a signal handler; `signal_handlers()` installs it for
    SIGTERM and SIGINT.
    """

    def __init__(
        self,
        argv: Sequence[str],
        policy: Policy | None = None,
        *,
        env: Mapping[str, str] | None = None,
        echo: IO[str] | None = None,
        version: str | None = None,
        boot_timeout: float = 1800.0,
        health_interval: float = 1.0,
        drain_seconds: float = 3.0,
        kill_grace: float = 10.0,
        unconfirmed_boot_seconds: float = 15.0,
        say_width: int | None = 80,
    ) -> None:
        if not (isinstance(boot_timeout, (int, float)) and 0 < boot_timeout < _MAX_SECONDS):
            # nan and inf compare false: a boot that never timed out, or a deadline
            # no clock can hold (OverflowError deep in a wait)
            raise ValueError(
                f"boot_timeout takes seconds above 0 (below {_MAX_SECONDS:.0e}), "
                f"not {boot_timeout!r}"
            )
        self.argv = list(argv)
        config = LaunchConfig.from_argv(argv)
        if config.passthrough:
            # A script or wrapper: its settings come from the environment it reads.
            base = LaunchConfig.from_env({**os.environ, **(env or {})})
            config = base.model_copy(update={"command": config.command, "passthrough": True})
        self.config = config
        self.policy = policy or Policy()
        self.env = dict(env) if env is not None else None
        self.echo = echo
        self.version = version
        self.boot_timeout = boot_timeout
        self.health_interval = health_interval
        self.drain_seconds = drain_seconds
        self.kill_grace = kill_grace
        self.unconfirmed_boot_seconds = unconfirmed_boot_seconds
        self.say_width = say_width
        """Our own lines in `echo` are wrapped to this many columns (None: whole)."""
        self.process: subprocess.Popen[bytes] | None = None
        self.watcher: BootWatcher | None = None
        self._pump: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stop_signal: int | None = None

    # --- stopping ------------------------------------------------------------

    def request_stop(self, signum: int = signal.SIGTERM) -> None:
        """Forward `signum` to the child's group and make the loop stop (signal-safe)."""
        self._stop_signal = signum
        proc = self.process
        if proc is not None and proc.poll() is None:
            killpg(proc.pid, signum)

    @contextmanager
    def signal_handlers(self) -> Iterator[None]:
        """Forward SIGTERM and SIGINT to the child while the block runs (main thread only)."""
        old = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}

        def handler(signum: int, frame: object) -> None:
            self.request_stop(signum)

        for s in old:
            signal.signal(s, handler)
        try:
            yield
        finally:
            for s, h in old.items():
                signal.signal(s, h)

    @property
    def stop_signal(self) -> int | None:
        return self._stop_signal

    def stop(self) -> None:
        """SIGTERM the child's process group, wait `kill_grace`, then SIGKILL it."""
        proc = self.process
        if proc is None:
            return
        killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.kill_grace
        while time.monotonic() < deadline:
            if proc.poll() is not None and not group_alive(proc.pid):
                break
            time.sleep(0.05)
        killpg(proc.pid, signal.SIGKILL)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        if self._pump is not None:
            self._pump.join(timeout=5)

    def wait(self) -> int:
        """Wait for a booted server to exit, forwarding stops; its exit code (128+N for
        a signal)."""
        proc = self.process
        if proc is None:
            return 0
        while proc.poll() is None:
            if self._stop_signal is not None:
                self.stop()
                return 128 + self._stop_signal
            time.sleep(0.1)
        self.stop()  # the group may outlive its leader
        if self._stop_signal is not None:  # the child exited on the stop we forwarded
            return 128 + self._stop_signal
        code = proc.returncode
        return 128 - code if code < 0 else code

    # --- the loop --------------------------------------------------------------

    def run(self) -> RunSummary:
        """Boot, relaunching per the planner, until up, given up, or stopped."""
        started = time.monotonic()
        config, step, reason = self.config, None, None
        degradations: tuple[Degradation, ...] = ()
        history: list[Attempt] = []
        attempts: list[AttemptSummary] = []

        def summary(result: Literal["booted", "gave_up", "stopped"], **kw: object) -> RunSummary:
            return RunSummary.model_validate(
                {
                    "result": result,
                    "attempts": attempts,
                    "final_config": config,
                    "final_argv": self.argv_for(config),
                    "degradations": degradations,
                    "seconds": round(time.monotonic() - started, 3),
                    "signal": self._stop_signal,
                    **kw,
                }
            )

        while True:
            deadline = time.monotonic() + self.boot_timeout
            by_budget = False  # which limit the deadline is: it names the flag to raise
            if self.policy.max_boot_seconds is not None:
                budget_end = started + self.policy.max_boot_seconds
                by_budget = budget_end < deadline
                deadline = min(deadline, budget_end)
            boot = self._boot_once(config, deadline)
            diag = boot.diagnosis
            outcome = boot.kind if diag is None or boot.kind != "failed" else diag.primary.kind
            attempts.append(
                AttemptSummary(
                    number=len(attempts) + 1,
                    argv=tuple(self.argv_for(config)),
                    config=config,
                    step=step,
                    reason=reason,
                    outcome=outcome,
                    summary=diag.primary.summary() if diag is not None else outcome,
                    seconds=round(boot.seconds, 3),
                    exit_code=boot.exit_code,
                    diagnosis=diag,
                )
            )
            history.append(
                Attempt(
                    config=config,
                    outcome=outcome,
                    seconds=boot.seconds,
                    step=step,
                    exit_code=boot.exit_code,
                )
            )
            if boot.kind == "booted":
                short = self._fitted_short(config)
                if short is not None:  # up, on a context the policy refuses: stop it
                    self.stop()
                    return summary("gave_up", give_up=short)
                return summary("booted", health_confirmed=boot.health)
            if self._stop_signal is not None or boot.kind == "stopped":
                return summary("stopped")
            if boot.kind == "timeout" or diag is None:
                return summary("gave_up", give_up=self._timed_out(boot, by_budget))
            decision = plan(diag, config, self.policy, history)
            if isinstance(decision, GiveUp):
                return summary("gave_up", give_up=decision)
            self._say(
                f"vllm-bootdiag: {diag.primary.summary()}; relaunching "
                f"({decision.step}): {decision.reason}"
            )
            config, step, reason = decision.config, decision.step, decision.reason
            degradations = decision.degradations

    def _fitted_short(self, config: LaunchConfig) -> GiveUp | None:
        """The give-up for a server vLLM's auto-fit booted below the policy's minimum
        context (planning/fitted.py), read from everything printed so far."""
        watcher = self.watcher
        if watcher is None:
            return None
        with self._lock:
            diagnosis = watcher.diagnosis()
        return fitted_below_minimum(diagnosis, config, self.policy)

    def _timed_out(self, boot: Boot, by_budget: bool) -> GiveUp:
        """Which limit ended the boot (the earlier of the two deadlines), and the flag
        that raises it."""
        budget = self.policy.max_boot_seconds
        if by_budget and budget is not None:
            reason = f"the boot-seconds budget ({budget:.0f} s across launches) ran out"
            flag = "--budget-seconds (VLLM_BOOTDIAG_MAX_BOOT_SECONDS)"
        else:
            reason = f"one boot took longer than --boot-timeout ({self.boot_timeout:.0f} s)"
            flag = "--boot-timeout"
        return GiveUp(
            cause="budget",
            reason=f"{reason}; the last phase reached: "
            f"{boot.diagnosis.phase if boot.diagnosis and boot.diagnosis.phase else 'none'}",
            advice=(
                f"Raise {flag} if the model is large (weight download and graph capture can "
                "take many minutes), or look at the last lines of the log for a stall.",
            ),
        )

    def _say(self, text: str) -> None:
        """One line of ours among the child's output, wrapped under a hanging indent."""
        if self.say_width is not None:
            text = "\n".join(textwrap.wrap(text, self.say_width, subsequent_indent="  "))
        if self.echo is not None:
            with self._lock:
                self.echo.write(text + "\n")
                self.echo.flush()

    def argv_for(self, config: LaunchConfig) -> list[str]:
        """The argv that launches `config`: the user's own argv, untouched, for the
        first config (and for a passthrough command always); else the rendered one."""
        if config == self.config or config.passthrough:
            return list(self.argv)
        return config.to_argv()

    def env_for(self, config: LaunchConfig) -> dict[str, str] | None:
        """The child's environment: ours, the caller's `env`, then the config's own
        overrides; a passthrough relaunch also gets every setting as a variable."""
        extra = dict(config.env)
        if config.passthrough and config != self.config:
            extra = config.to_env()
        if self.env is None and not extra:
            return None
        return {**os.environ, **(self.env or {}), **extra}

    def _start(self, config: LaunchConfig) -> subprocess.Popen[bytes]:
        env = self.env_for(config)
        argv = self.argv_for(config)
        path = (env if env is not None else os.environ).get("PATH", os.defpath)
        if shutil.which(argv[0], path=path) is None:
            raise FileNotFoundError(2, "not found or not executable", argv[0])
        proc = subprocess.Popen(
            [sys.executable, _LAUNCHER, str(os.getpid()), "--", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
        self.process = proc
        self.watcher = watcher = BootWatcher(version=self.version)
        self._pump = threading.Thread(
            target=self._pump_lines, args=(proc, watcher), daemon=True, name="vllm-bootdiag-pump"
        )
        self._pump.start()
        return proc

    def _pump_lines(self, proc: subprocess.Popen[bytes], watcher: BootWatcher) -> None:
        """Echo the child's output and feed the watcher; runs until the pipe closes."""
        assert proc.stdout is not None
        fed = True  # the watcher has seen the start of the current line
        for text, whole in output_pieces(proc.stdout):
            with self._lock:
                if self.echo is not None:  # echoed as printed, a long line's pieces too
                    try:
                        self.echo.write(text + "\n" if whole else text)
                        self.echo.flush()
                    except (OSError, ValueError):
                        self.echo = None
                if fed:  # a line's start (past 64 KB the reader cuts it anyway)
                    watcher.feed(text)
            fed = whole

    def _diagnosis(self, watcher: BootWatcher) -> Diagnosis:
        if self._pump is not None:
            self._pump.join(timeout=5)
        with self._lock:
            return watcher.diagnosis()

    def _boot_once(self, config: LaunchConfig, deadline: float) -> Boot:
        t0 = time.monotonic()
        if health_ok(config.health_port):
            raise LaunchError(
                f"127.0.0.1:{config.health_port} already answers /health: "
                f"another server holds the port"
            )
        try:
            proc = self._start(config)
        except OSError as e:
            raise LaunchError(f"cannot start {self.argv_for(config)[0]!r}: {e}") from None
        watcher = self.watcher
        assert watcher is not None
        port = config.health_port
        next_health = t0
        booted_line_at: float | None = None
        failed_at: float | None = None
        while True:
            now = time.monotonic()
            if self._stop_signal is not None:
                self.stop()
                return Boot("stopped", self._diagnosis(watcher), proc.returncode, now - t0)
            if now >= next_health:
                next_health = now + self.health_interval
                if health_ok(port):
                    return Boot("booted", watcher.reported, None, now - t0, health=True)
            reported = watcher.reported
            if reported is not None and booted_line_at is None and failed_at is None:
                if reported.primary.kind == "booted":
                    booted_line_at = now
                    next_health = now
                else:
                    failed_at = now
            if booted_line_at is not None and now - booted_line_at > self.unconfirmed_boot_seconds:
                return Boot("booted", reported, None, now - t0, health=False)
            exited = proc.poll() is not None
            if exited or (failed_at is not None and now - failed_at > self.drain_seconds):
                self.stop()
                return Boot("failed", self._diagnosis(watcher), proc.returncode, now - t0)
            if now >= deadline:
                self.stop()
                return Boot("timeout", self._diagnosis(watcher), proc.returncode, now - t0)
            time.sleep(0.05)


def run(
    argv: Sequence[str],
    policy: Policy | None = None,
    *,
    echo: IO[str] | None = None,
    stop_after_boot: bool = False,
    boot_timeout: float = 1800.0,
) -> RunSummary:
    """One call for a worker's main: boot `argv`, relaunching as needed.

    Installs SIGTERM/SIGINT forwarding while it boots (call it from the main
    thread). The server is left running unless `stop_after_boot`; use
    `Supervisor` directly to wait for it or stop it later.
    """
    sup = Supervisor(
        argv, policy, echo=echo if echo is not None else sys.stdout, boot_timeout=boot_timeout
    )
    with sup.signal_handlers():
        summary = sup.run()
    if stop_after_boot or not summary.booted:
        sup.stop()
    return summary
