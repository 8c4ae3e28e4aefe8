"""Lifecycle: the server came up, or a process vanished without a cause.

The echoes of a cause printed above (LC2xx) are in `lifecycle_echoes.py`. LC004
reads the same line as the echo LC201 but is a cause: with no process's own
failure line in the tail (its `unless`: the echoes vLLM logs with a traceback),
the silence is the evidence of a kill from outside.
"""

from __future__ import annotations

from .schema import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="LC001",
        printed_by="uvicorn",
        name="api-server-started",
        vllm="",
        outcome="booted",
        literal="Application startup complete",
        patterns=(r"Application startup complete\.?",),
        examples=("(APIServer pid=2210) INFO:     Application startup complete.",),
        summary="The API server finished starting: the boot succeeded.",
        remediation="Nothing to do.",
        references=("uvicorn (logged through vLLM's API server process)",),
    ),
    Rule(
        id="LC002",
        source_pattern=r"Engine core initialization failed\. See root cause above\. Failed core",
        name="engine-core-killed",
        vllm=">=0.9.0.1",
        outcome="engine_died",
        literal="Engine core initialization failed",
        patterns=(
            r"Engine core initialization failed\. See root cause above\. Failed core proc\(s\): "
            r"\{'(?P<process>[\w ]+)': (?P<exit_code>-\d+)\}",
        ),
        examples=(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
            "proc(s): {'EngineCore': -9}",
        ),
        counter_examples=(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
            "proc(s): {'EngineCore': 1}",
        ),
        summary="The engine core was killed by a signal during boot (-9: often the kernel's "
        "OOM killer) and printed no cause.",
        remediation="Check host memory (dmesg for the OOM killer) or the container's memory "
        "limit; lower what the boot needs in host RAM, or give it more.",
        references=("vllm/v1/engine/utils.py wait_for_engine_startup (0.9.2+)",),
    ),
    Rule(
        id="LC003",
        name="worker-died",
        vllm="",
        outcome="engine_died",
        literal="died unexpectedly",
        patterns=(
            r"Worker proc (?P<process>\S+) died unexpectedly(?:\s*\(exit code: "
            r"(?P<exit_code>-?\d+)\))?",
            r"Engine core proc(?:ess)? (?P<process>\S+?)\.? died unexpectedly",
        ),
        examples=(
            "ERROR 11-29 17:00:00 [multiproc_executor.py:150] Worker proc VllmWorker-1 died "
            "unexpectedly (exit code: -9), shutting down executor.",
            "ERROR 04-01 12:00:00 [core_client.py:564] Engine core proc EngineCore_0 died "
            "unexpectedly, shutting down client.",
            "RuntimeError: Engine core process EngineCore died unexpectedly.",
        ),
        summary="A worker or engine process vanished; vLLM shut the rest down.",
        remediation="Look for the kernel's OOM killer or a crash above; a restart may succeed "
        "if the pressure was transient.",
        references=(
            "vllm/v1/executor/multiproc_executor.py monitor_workers",
            "vllm/v1/engine/core_client.py monitor_engine_cores (0.10.1.1-0.19.0)",
            "vllm/v1/utils.py wait_for_completion_or_failure (0.20.0+)",
        ),
    ),
    Rule(
        id="LC004",
        name="engine-core-vanished-silently",
        vllm="",
        outcome="engine_died",
        rank=20,
        literal="Engine core initialization failed",
        source_pattern=r"Engine core initialization failed\. See root cause above\.",
        patterns=(
            r"Engine core initialization failed\. See root cause above\."
            r"(?: Failed core proc\(s\): \{\})?(?:, failed frontend proc\(s\): \{[^}]*\})?\s*$",
        ),
        unless=(
            "EngineCore failed to start",
            "EngineCore encountered a fatal error",
            "WorkerProc failed to start",
            "WorkerProc hit an exception",
        ),
        examples=(
            "(APIServer pid=11007) RuntimeError: Engine core initialization failed. See root cause "
            "above. Failed core proc(s): {}",
        ),
        counter_examples=(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core "
            "proc(s): {'EngineCore': 1}",
        ),
        summary="The engine core died during boot and printed nothing (no `EngineCore failed to "
        "start`): a kill from outside, most often the kernel's OOM killer. 0.22 reports it as "
        "an empty `Failed core proc(s): {}`.",
        remediation="Check host memory (dmesg for the OOM killer) or the container's memory "
        "limit; lower what the boot needs in host RAM, or give it more.",
        references=(
            "vllm/v1/engine/utils.py wait_for_engine_startup (0.9.2+)",
            "vllm/v1/engine/core_client.py:430 (0.8.5, no suffix)",
        ),
    ),
    Rule(
        id="LC005",
        name="api-server-listening",
        outcome="booted",
        literal="Starting vLLM ",
        source_pattern=r"Starting vLLM (?:API )?server",
        patterns=(
            r"Starting vLLM (?:API )?server(?: \d+)? on (?:https?://\S*?:(?P<port>\d+)|\S+)",
        ),
        examples=(
            "(APIServer pid=32002) INFO 11-29 17:02:32 [entry.py:140] Starting vLLM server on "
            "http://127.0.0.1:48971",
            "(APIServer pid=6575) INFO 11-29 17:32:33 [api_server.py:1346] Starting vLLM API "
            "server 0 on http://127.0.0.1:54503",
            "INFO 05-02 10:11:12 [api_server.py:1090] Starting vLLM API server on "
            "http://0.0.0.0:8000",
        ),
        counter_examples=("INFO 11-29 17:02:32 [launcher.py:186] Available routes are:",),
        summary="The API server is listening: with no failure after it, the boot is up "
        "(a tail cut before `Application startup complete` is still a healthy boot).",
        remediation="Nothing to do.",
        references=(
            "vllm/entrypoints/openai/api_server.py:1090 (0.8.5: 'Starting vLLM API server on')",
            "vllm/entrypoints/openai/api_server.py:1912 (0.11.0: 'Starting vLLM API server %d')",
            "vllm/entrypoints/openai/api_server.py:580 (0.18.0: 'Starting vLLM server on')",
            "vllm/entrypoints/launchers/api_server/entry.py:140 (0.32.0)",
        ),
    ),
    Rule(
        id="LC006",
        status="preview",
        printed_by="uvicorn",
        name="uvicorn-running",
        outcome="booted",
        literal="Uvicorn running on ",
        patterns=(r"Uvicorn running on (?:https?://\S*?:(?P<port>\d+)|\S+)",),
        examples=(
            "(APIServer pid=2210) INFO:     Uvicorn running on http://0.0.0.0:8000 (Press "
            "CTRL+C to quit)",
            "INFO:     Uvicorn running on unix socket /tmp/vllm.sock (Press CTRL+C to quit)",
        ),
        summary="uvicorn is serving: with no failure after it, the boot is up.",
        remediation="Nothing to do.",
        references=("uvicorn/server.py: 'Uvicorn running on %s://%s:%d (Press CTRL+C to quit)'",),
    ),
    Rule(
        id="LC007",
        name="api-routes-listed",
        outcome="booted",
        literal="Available routes are",
        patterns=(r"Available routes are:",),
        examples=("(APIServer pid=7) INFO 11-29 17:02:32 [launcher.py:186] Available routes are:",),
        counter_examples=("ValueError: no available routes are configured",),
        summary="The API server listed its routes: with no failure after it, the boot is up.",
        remediation="Nothing to do.",
        references=(
            "vllm/entrypoints/launcher.py:37 (0.18.0)",
            "vllm/entrypoints/launchers/launcher.py:186 (0.32.0)",
        ),
    ),
)
