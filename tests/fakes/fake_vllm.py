"""Stand-in for the `vllm` command in tests: replays boot logs, or serves /health.

What each launch does comes from the JSON scenario file named by
FAKE_VLLM_SCENARIO, `{"attempts": [{...}, ...]}`: the n-th launch follows
attempts[n] (the last one repeats). Keys of an attempt:

  log             a log file to print (relative to tests/fakes/logs, or absolute)
  exit            the exit code after printing (default 1)
  serve           serve GET /health on 127.0.0.1:<--port> (default 8000) until SIGTERM
  log_first       with serve: print the whole log before /health answers (as vLLM does)
  line_delay      seconds between lines
  hang            print, then sleep for a long time instead of exiting
  ignore_sigterm  ignore SIGTERM (so only SIGKILL ends it)
  grandchild      start a sleeping child process first (it shares the process group)

Every launch appends its argv as a JSON line to FAKE_VLLM_RECORD (its VLLM_*
environment to FAKE_VLLM_RECORD + ".env"), and a
grandchild's pid to FAKE_VLLM_RECORD + ".pids", so a test can check the
relaunch order and that nothing was left behind. Only 127.0.0.1 is ever bound.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

LOGS = Path(__file__).resolve().parent / "logs"


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


def _port(argv: list[str]) -> int:
    for i, token in enumerate(argv):
        if token == "--port" and i + 1 < len(argv):
            return int(argv[i + 1])
        if token.startswith("--port="):
            return int(token.split("=", 1)[1])
    return 8000


def _attempt() -> dict[str, Any]:
    scenario = json.loads(Path(os.environ["FAKE_VLLM_SCENARIO"]).read_text(encoding="utf-8"))
    record = Path(os.environ["FAKE_VLLM_RECORD"])
    n = len(record.read_text(encoding="utf-8").splitlines()) if record.exists() else 0
    with record.open("a", encoding="utf-8") as f:
        f.write(json.dumps(sys.argv[1:]) + "\n")
    with open(str(record) + ".env", "a", encoding="utf-8") as f:
        f.write(json.dumps({k: v for k, v in os.environ.items() if k.startswith("VLLM_")}) + "\n")
    attempts: list[dict[str, Any]] = scenario["attempts"]
    return attempts[min(n, len(attempts) - 1)]


def _print_log(spec: dict[str, Any]) -> None:
    if "log" not in spec:
        return
    path = Path(spec["log"])
    path = path if path.is_absolute() else LOGS / path
    delay = float(spec.get("line_delay", 0))
    for line in path.read_text(encoding="utf-8").splitlines():
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
        if delay:
            time.sleep(delay)


def main() -> int:
    spec = _attempt()
    if spec.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if spec.get("grandchild"):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        with open(os.environ["FAKE_VLLM_RECORD"] + ".pids", "a", encoding="utf-8") as f:
            f.write(f"{child.pid}\n")
    if spec.get("serve"):
        if spec.get("log_first"):
            _print_log(spec)
        server = HTTPServer(("127.0.0.1", _port(sys.argv)), _Health)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        if not spec.get("log_first"):
            _print_log(spec)
        stopped = threading.Event()
        if not spec.get("ignore_sigterm"):
            signal.signal(signal.SIGTERM, lambda *_: stopped.set())
        stopped.wait(600)
        server.shutdown()
        return 0
    _print_log(spec)
    if spec.get("hang"):
        time.sleep(600)
    return int(spec.get("exit", 1))


if __name__ == "__main__":
    sys.exit(main())
