"""The supervisor's launcher: runs one command and takes its process group down with
the supervisor, even when the supervisor is SIGKILLed.

Run as `python _launcher.py SUPERVISOR_PID -- ARGV...` in a new session (it leads
the process group). It asks the kernel for a signal when its parent dies
(PR_SET_PDEATHSIG, through ctypes prctl: no preexec_fn, so safe with the
supervisor's threads), then starts the command in its own group and waits. When
the parent dies it SIGKILLs the whole group: vLLM's API server, its engine core
and every worker, which a death signal on the leader alone would leave running.
A poll of getppid() backs the signal up (and stands in for it off Linux). It
exits with the command's status, re-raising a signal the command died of, so
the supervisor sees what vLLM's own exit was. Imports only the standard library.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading

PR_SET_PDEATHSIG = 1
DEATH_SIGNAL = signal.SIGUSR2
"""The launcher's own signal for its parent's death: vLLM never receives it."""


def _kill_group(*_: object) -> None:
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            _kill_group()
        threading.Event().wait(0.2)


def _ask_for_death_signal() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(DEATH_SIGNAL), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the getppid() poll covers it


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: _launcher.py SUPERVISOR_PID -- COMMAND...\n")
        return 2
    parent = int(argv[0])
    signal.signal(DEATH_SIGNAL, _kill_group)
    _ask_for_death_signal()
    if os.getppid() != parent:  # the supervisor died before the signal was armed
        _kill_group()
    # The supervisor stops the command by signalling the whole group; the launcher
    # itself waits for the command instead of dying first.
    # (A handler, not SIG_IGN: an ignored signal would stay ignored in the command.)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda *_: None)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    try:
        child = subprocess.Popen(argv[2:], restore_signals=True)
    except OSError as e:
        sys.stderr.write(f"vllm-bootdiag: cannot start {argv[2]!r}: {e}\n")
        return 127
    code = child.wait()
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
