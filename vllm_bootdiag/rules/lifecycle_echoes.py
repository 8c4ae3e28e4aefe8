"""Lifecycle echoes: lines that point at a cause printed above them.

An echo (`role="echo"`, ids LC2xx) is what vLLM or Python prints when a cause was
printed above it: `EngineCore failed to start.` (logger.exception, before the
traceback), `See root cause above.`, Python's traceback header. An echo never
becomes an outcome: the diagnosis skips echo lines when it looks for the last
real error of an `unknown`, and falls back on one, with `CAUSE_ABOVE`, when the
tail holds nothing else. They are rules, with ranges and references, so a user
RuleSet can carry its own and scan-source checks their wordings.
"""

from __future__ import annotations

from .schema import Rule

CAUSE_ABOVE = (
    "The boot failed, but its cause was printed above the lines examined (only vLLM's "
    "'see root cause above' echo is here): classify more of the log (a worker should keep "
    "its last 400 lines) before relaunching."
)
"""The remediation of every echo: what an `unknown` that ends on one tells the operator."""

RULES: tuple[Rule, ...] = (
    Rule(
        id="LC201",
        role="echo",
        name="engine-core-init-failed-echo",
        vllm=">=0.8.5",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="Engine core initialization failed",
        source_pattern=r"Engine core initialization failed\. See root cause above\.",
        patterns=(r"Engine core initialization failed\. See root cause above\.",),
        examples=(
            "(APIServer pid=13333) RuntimeError: Engine core initialization failed. See root "
            "cause above. Failed core proc(s): {'EngineCore': 1}",
            "RuntimeError: Engine core initialization failed. See root cause above.",
        ),
        counter_examples=("RuntimeError: Engine core process EngineCore died unexpectedly.",),
        summary="The API server's echo of an engine core that failed to start: the cause "
        "is the engine core's own traceback above it.",
        references=(
            "vllm/v1/engine/core_client.py:430 (0.8.5, no suffix)",
            "vllm/v1/engine/utils.py:484 (0.9.2: '... Failed core proc(s): {finished}')",
            "vllm/v1/engine/utils.py:1431 (0.32.0)",
            "vllm/v1/engine/utils.py:1473 (0.33.0)",
        ),
    ),
    Rule(
        id="LC202",
        role="echo",
        name="engine-core-failed-to-start",
        vllm=">=0.8.5",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="EngineCore failed to start",
        patterns=(r"EngineCore failed to start\.",),
        examples=(
            "(EngineCore pid=10452) ERROR 11-29 16:00:40 [core.py:1510] EngineCore failed to "
            "start.",
        ),
        counter_examples=(
            "(EngineCore pid=10452) ERROR 11-29 16:00:40 [core.py:1512] EngineCore encountered "
            "a fatal error.",
        ),
        summary="logger.exception in the engine core's entry point: the exception it "
        "logs follows (the traceback, then its last line, the cause).",
        references=(
            "vllm/v1/engine/core.py:396 (0.8.5)",
            "vllm/v1/engine/core.py:1510 (0.32.0)",
            "vllm/v1/engine/core.py:1584 (0.33.0)",
        ),
    ),
    Rule(
        id="LC203",
        role="echo",
        status="preview",
        name="engine-core-fatal-error",
        vllm=">=0.8.5",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="EngineCore encountered a fatal error",
        patterns=(r"EngineCore encountered a fatal error\.",),
        examples=(
            "(EngineCore pid=10452) ERROR 11-29 16:00:40 [core.py:1512] EngineCore encountered "
            "a fatal error.",
        ),
        counter_examples=(
            "(EngineCore pid=10452) ERROR 11-29 16:00:40 [core.py:1510] EngineCore failed to "
            "start.",
        ),
        summary="logger.exception in the engine core once it had started: the exception "
        "it logs follows.",
        references=(
            "vllm/v1/engine/core.py:398 (0.8.5)",
            "vllm/v1/engine/core.py:1512 (0.32.0)",
            "vllm/v1/engine/core.py:1586 (0.33.0)",
        ),
    ),
    Rule(
        id="LC204",
        role="echo",
        name="worker-proc-failed-to-start",
        vllm=">=0.8.5",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="WorkerProc failed to start",
        patterns=(r"WorkerProc failed to start\.",),
        examples=(
            "(VllmWorker-0 pid=15843) ERROR 11-29 16:04:39 [multiproc_executor.py:953] "
            "WorkerProc failed to start.",
            "ERROR 11-29 16:29:52 [multiproc_executor.py:870] WorkerProc failed to start.",
        ),
        counter_examples=(
            "(Worker pid=10464) ERROR 11-29 16:29:28 [multiproc_executor.py:962] WorkerProc "
            "hit an exception.",
        ),
        summary="logger.exception in a worker's entry point (device init, model load): "
        "the exception it logs follows.",
        references=(
            "vllm/v1/executor/multiproc_executor.py:435 (0.8.5)",
            "vllm/v1/executor/multiproc_executor.py:953 (0.32.0)",
            "vllm/v1/executor/multiproc_executor.py:1057 (0.33.0)",
        ),
    ),
    Rule(
        id="LC205",
        role="echo",
        name="worker-proc-init-failed",
        vllm=">=0.8.5",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="WorkerProc initialization failed",
        source_pattern=r"WorkerProc initialization failed due to",
        patterns=(r"WorkerProc initialization failed due to an exception in a background",),
        examples=(
            "(EngineCore pid=10912) ERROR 11-29 16:29:54 [core.py:1165] Exception: WorkerProc "
            "initialization failed due to an exception in a background process. See stack "
            "trace for root cause.",
        ),
        counter_examples=("(Worker pid=1) ERROR 11-29 16:29:52 WorkerProc failed.",),
        summary="The engine side of a worker that failed to start: the worker's own "
        "traceback is above it.",
        references=(
            "vllm/v1/executor/multiproc_executor.py:343 (0.8.5)",
            "vllm/v1/executor/multiproc_executor.py:790 (0.32.0)",
            "vllm/v1/executor/multiproc_executor.py:891 (0.33.0)",
        ),
    ),
    Rule(
        id="LC206",
        role="echo",
        name="worker-proc-hit-exception",
        vllm=">=0.8.5",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="WorkerProc hit an exception",
        patterns=(r"WorkerProc hit an exception\.",),
        examples=(
            "(Worker pid=24663) ERROR 11-29 16:53:46 [multiproc_executor.py:962] WorkerProc "
            "hit an exception.",
        ),
        counter_examples=(
            "ERROR 11-29 16:29:52 [multiproc_executor.py:870] WorkerProc failed to start.",
        ),
        summary="logger.exception in a worker's RPC loop (KV sizing, warm-up): the "
        "exception it logs follows.",
        references=(
            "vllm/v1/executor/multiproc_executor.py:470 (0.8.5)",
            "vllm/v1/executor/multiproc_executor.py:1063 (0.32.0)",
            "vllm/v1/executor/multiproc_executor.py:1189 (0.33.0)",
        ),
    ),
    Rule(
        id="LC207",
        role="echo",
        name="worker-failed-see-stack-trace",
        vllm=">=0.8.5",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="Worker failed with error",
        source_pattern=r"Worker failed with error '\{\}', please check the",
        patterns=(r"Worker failed with error '",),
        examples=(
            "(EngineCore pid=24645) RuntimeError: Worker failed with error '[Errno 28] No "
            "space left on device', please check the stack trace above for the root cause",
        ),
        counter_examples=(
            "ERROR 11-29 16:29:52 [multiproc_executor.py:870] WorkerProc failed to start.",
        ),
        summary="The engine's copy of a worker's exception text (a cause rule still reads "
        "the quoted text); the worker's own traceback is above it.",
        references=(
            "vllm/v1/executor/multiproc_executor.py:187 (0.8.5)",
            "vllm/v1/executor/multiproc_executor.py:445 (0.32.0)",
            "vllm/v1/executor/multiproc_executor.py:526 (0.33.0)",
        ),
    ),
    Rule(
        id="LC208",
        role="echo",
        status="preview",
        name="frontend-failed-during-engine-init",
        vllm=">=0.28",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="Frontend process failed during engine core",
        patterns=(r"Frontend process failed during engine core initialization\.",),
        examples=(
            # rendered from vllm/v1/engine/utils.py:1427 (0.32.0)
            "(APIServer pid=1) RuntimeError: Frontend process failed during engine core "
            "initialization. See root cause above. Failed frontend proc(s): "
            "{'ApiServer_1': 1}",
        ),
        counter_examples=(
            "RuntimeError: Engine core initialization failed. See root cause above.",
        ),
        summary="An API server process (of several) failed while the engine core started: "
        "its traceback is above.",
        references=(
            "vllm/v1/engine/utils.py:1282 (0.28.0)",
            "vllm/v1/engine/utils.py:1427 (0.32.0)",
            "vllm/v1/engine/utils.py:1469 (0.33.0)",
        ),
    ),
    Rule(
        id="LC209",
        role="echo",
        name="v0-engine-process-failed-to-start",
        vllm=">=0.8.5,<0.11",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="Engine process failed to start",
        source_pattern=r"Engine process failed to start\. See stack",
        patterns=(r"Engine process failed to start\. See stack trace for the root cause",),
        examples=(
            "RuntimeError: Engine process failed to start. See stack trace for the root cause.",
        ),
        counter_examples=("AssertionError: Engine process failed to start.",),
        summary="V0's API server (MQLLMEngine) echo of an engine process that died: its "
        "traceback is above.",
        references=(
            "vllm/entrypoints/openai/api_server.py:269 (0.8.5)",
            "vllm/entrypoints/openai/api_server.py:319 (0.10.2)",
        ),
    ),
    Rule(
        id="LC210",
        role="echo",
        printed_by="python",
        name="engine-core-process-traceback-header",
        vllm="",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="Process EngineCore",
        patterns=(r"Process EngineCore\w*:",),
        examples=(
            "(EngineCore_DP0 pid=18911) Process EngineCore_DP0:",
            "(EngineCore pid=26788) Process EngineCore:",
        ),
        counter_examples=(
            "(EngineCore pid=1) INFO 11-29 16:00:40 [core.py:1] Process EngineCoreOutputs",
        ),
        summary="multiprocessing's header above the traceback of the engine core "
        "process (named by vLLM): the cause is the traceback's last line.",
        references=("cpython Lib/multiprocessing/process.py BaseProcess._bootstrap",),
    ),
    Rule(
        id="LC211",
        role="echo",
        printed_by="python",
        name="traceback-header",
        vllm="",
        outcome="unknown",
        remediation=CAUSE_ABOVE,
        reports=False,
        terminal=False,
        literal="Traceback (most recent call last)",
        patterns=(r"Traceback \(most recent call last\)",),
        examples=(
            "(EngineCore pid=10452) ERROR 11-29 16:00:40 [core.py:1510] Traceback (most "
            "recent call last):",
            "Traceback (most recent call last):",
        ),
        counter_examples=('  File "/x/core.py", line 1, in run_engine_core',),
        summary="Python's traceback header: the cause is the traceback's last line.",
        references=("cpython Lib/traceback.py",),
    ),
)
