"""Boot phases, their cost, and the numbers printed, on real boots."""

from __future__ import annotations

import re
from pathlib import Path

from vllm_bootdiag import logtail, timeline

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _tl(name: str) -> timeline.Timeline:
    return timeline.build(logtail.read_tail(CORPUS / name))


def test_compiled_cpu_boot_goes_through_every_cpu_phase_in_order() -> None:
    tl = _tl("0.32.0/booted__qwen05b-compiled__cpu.log")
    phases = [e.phase for e in tl.events]
    assert phases == ["arguments", "engine_init", "weight_load", "compile", "profiling",
                      "kv_cache_sized", "engine_ready", "api_server", "ready"]
    assert tl.last_phase == "ready"
    starts = [e.seconds_from_start for e in tl.events if e.seconds_from_start is not None]
    assert starts == sorted(starts) and starts[0] == 0
    compile_ = next(e for e in tl.events if e.phase == "compile")
    assert compile_.seconds is not None and compile_.seconds > 30  # torch.compile on 2 cores
    # The numbers, read again from the raw file with plain searches (a second parser).
    text = (CORPUS / "0.32.0/booted__qwen05b-compiled__cpu.log").read_text()
    f = tl.facts
    assert f.device == "cpu"
    assert f.available_kv_cache_gib == float(re.search(r"Explicitly set \(([\d.]+)/", text)[1])
    assert f.kv_cache_tokens == int(re.search(r"KV cache size: ([\d,]+) tokens", text)[1].replace(",", ""))
    assert f.max_concurrency == float(re.search(r"per request: ([\d.]+)x", text)[1])
    assert f.init_engine_seconds == float(re.search(r"warmup model\) took ([\d.]+) s", text)[1])
    assert f.port == int(re.search(r"Starting vLLM server on http://[\d.]+:(\d+)", text)[1])


def test_failed_boot_stops_at_kv_sizing() -> None:
    tl = _tl("0.32.0/kv_cache_shortfall__llama1b-kvspace1__cpu.log")
    assert tl.last_phase == "kv_cache_sized"
    assert "ready" not in [e.phase for e in tl.events]
    assert tl.facts.available_kv_cache_gib == 1.0


def test_config_failure_never_leaves_arguments() -> None:
    tl = _tl("0.32.0/max_model_len_exceeds_model__maxlen-over-model__cpu.log")
    assert tl.last_phase == "arguments"
    assert tl.facts.non_default_args is not None and "'max_model_len': 16384" in tl.facts.non_default_args


def test_no_progress_lines_is_an_empty_timeline() -> None:
    tl = timeline.build(["Traceback (most recent call last):", "KeyError: 'x'"])
    assert tl.events == () and tl.last_phase is None


def test_phase_lines_under_ansi_and_tags() -> None:
    tl = timeline.build([
        "\x1b[1;36m(EngineCore_DP0 pid=5)\x1b[0;0m INFO 02-29 23:59:58 [gpu_model_runner.py:3334] "
        "Model loading took 2.5 GiB memory and 3.000000 seconds",
        "(EngineCore_DP0 pid=5) INFO 03-01 00:00:03 [gpu_worker.py:359] Available KV cache memory: 6.25 GiB",
    ])
    assert [e.phase for e in tl.events] == ["weights_loaded", "kv_cache_sized"]
    assert tl.events[0].seconds == 5.0  # across a month boundary
    assert tl.facts.model_weights_gib == 2.5 and tl.facts.available_kv_cache_gib == 6.25


def test_events_cite_the_files_line_when_given_the_tails_offset() -> None:
    """A tail of the last 120 lines: each event cites the line of the whole file."""
    lines = (CORPUS / "0.32.0/booted__qwen05b-compiled__cpu.log").read_text().splitlines()
    whole = timeline.build(lines)
    cut = len(lines) - 120
    tail = timeline.build(lines[cut:], first_line=cut + 1)
    late = {e.phase: e.line for e in whole.events if e.line > cut}
    assert late and {e.phase: e.line for e in tail.events} == late


def test_the_timeline_command_numbers_lines_from_the_file(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    log = CORPUS / "0.32.0/booted__qwen05b-compiled__cpu.log"
    n = len(log.read_text().splitlines())
    out = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", "timeline", str(log), "--lines", "120", "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    events = json.loads(out)["events"]
    assert events and all(n - 120 < e["line"] <= n for e in events), (n, events)
