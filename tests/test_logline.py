"""Line parsing: every wrapping vLLM and container runtimes put around a message."""

from __future__ import annotations

import pytest

from vllm_bootdiag.text import logline

MSG = "Available KV cache memory: 1.0 GiB"


@pytest.mark.parametrize(
    ("raw", "process", "level", "source"),
    [
        # 0.31+: the tag is part of the logging format
        (
            f"(EngineCore pid=2210) INFO 11-29 16:20:31 [gpu_worker.py:759] {MSG}",
            "EngineCore",
            "INFO",
            "gpu_worker.py:759",
        ),
        # 0.10.1.1-0.11.2: ANSI-wrapped tag even in files
        (
            f"\x1b[1;36m(EngineCore_DP0 pid=3862035)\x1b[0;0m INFO 11-25 18:39:23 [gpu_worker.py:298]"
            f" {MSG}",
            "EngineCore_DP0",
            "INFO",
            "gpu_worker.py:298",
        ),
        # 0.10.1.1: a space in the process name
        (
            f"(VllmWorker TP0 pid=12) INFO 08-01 10:00:00 [gpu_worker.py:276] {MSG}",
            "VllmWorker TP0",
            "INFO",
            "gpu_worker.py:276",
        ),
        # <=0.10.0 single process: no tag
        (f"INFO 05-02 10:11:12 [gpu_worker.py:227] {MSG}", None, "INFO", "gpu_worker.py:227"),
        # ColoredFormatter: grey timestamp and source
        (
            f"(APIServer pid=1) \x1b[32mINFO\x1b[0m \x1b[90m11-29 16:20:31\x1b[0m "
            f"\x1b[90m[gpu_worker.py:759]\x1b[0m {MSG}",
            "APIServer",
            "INFO",
            "gpu_worker.py:759",
        ),
        # DEBUG fileinfo is a relative path
        (
            f"(EngineCore pid=5) DEBUG 11-29 16:20:31 [v1/worker/gpu_worker.py:759] {MSG}",
            "EngineCore",
            "DEBUG",
            "v1/worker/gpu_worker.py:759",
        ),
        # Docker `logs -t` prefix
        (
            f"2026-11-29T16:20:31.123456789Z (EngineCore pid=2210) INFO 11-29 16:20:31 "
            f"[gpu_worker.py:759] {MSG}",
            "EngineCore",
            "INFO",
            "gpu_worker.py:759",
        ),
        # Kubernetes CRI prefix
        (
            f"2026-11-29T16:20:31.123456789+00:00 stdout F (EngineCore pid=2210) INFO 11-29 16:20:31"
            f" [gpu_worker.py:759] {MSG}",
            "EngineCore",
            "INFO",
            "gpu_worker.py:759",
        ),
        # logger.exception continuation ends in CR
        (
            f"(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] {MSG}\r",
            "EngineCore",
            "ERROR",
            "core.py:1510",
        ),
    ],
)
def test_wrappings_reduce_to_the_message(
    raw: str, process: str | None, level: str, source: str
) -> None:
    line = logline.parse(raw, 7)
    assert line.message == MSG
    assert line.process == process
    assert line.level == level
    assert line.source == source
    assert line.number == 7


def test_raw_traceback_line_keeps_its_text() -> None:
    line = logline.parse("ValueError: To serve at least one request with the model's max seq len")
    assert line.level is None and line.process is None
    assert line.message.startswith("ValueError: To serve")


def test_raw_stderr_with_tag_and_no_record() -> None:
    line = logline.parse("(APIServer pid=9) RuntimeError: Engine core initialization failed.")
    assert line.process == "APIServer" and line.pid == 9
    assert line.message == "RuntimeError: Engine core initialization failed."


def test_message_that_looks_like_a_level_is_not_misparsed() -> None:
    line = logline.parse("INFO: Application startup complete.")
    assert line.level is None
    assert line.message == "INFO: Application startup complete."


def test_is_error() -> None:
    assert logline.parse("ERROR 11-29 16:20:31 [core.py:1] x").is_error
    assert not logline.parse("WARNING 11-29 16:20:31 [core.py:1] x").is_error
