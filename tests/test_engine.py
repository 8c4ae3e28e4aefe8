"""classify() and BootWatcher on vLLM's real line shapes."""

from __future__ import annotations

from vllm_bootdiag import BootWatcher, Diagnosis, classify

KV_032 = (
    "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] ValueError: To serve at least one "
    "request with the model's max seq len (131072), (4.0 GiB KV cache is needed, which is larger "
    "than the available KV cache memory (1.0 GiB). Based on the available memory, the estimated "
    "maximum model length is 32640. Try increasing `gpu_memory_utilization` (which also controls "
    "CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. "
    "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
)
ECHO = (
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): "
    "{'EngineCore': 1}"
)
HEAD = [
    "(APIServer pid=2100) INFO 11-29 16:19:50 [api_server.py:1800] vLLM API server version 0.32.0",
    "(EngineCore pid=2210) INFO 11-29 16:19:58 [core.py:100] Initializing a V1 LLM engine "
    "(v0.32.0) with config: model='m'",
    "(EngineCore pid=2210) INFO 11-29 16:20:10 [gpu_model_runner.py:5149] Model loading took "
    "2.3 GiB memory and 3.100000 seconds",
]


def test_root_cause_beats_the_api_server_echo() -> None:
    lines = [
        *HEAD,
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] EngineCore failed to start.",
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] Traceback (most recent call last):",
        KV_032,
        "Process EngineCore:",
        KV_032.split("] ", 1)[1],
        ECHO,
    ]
    d = classify(lines)
    assert d.primary.kind == "kv_cache_shortfall"
    assert d.primary.rule_id == "KV004"
    assert d.primary.model_dump()["estimated_max_model_len"] == 32640
    assert [e.line for e in d.primary.evidence] == [6, 8]
    assert d.vllm_version == "0.32.0" and d.version_source == "log"
    assert d.failed and d.primary.category.value == "memory"
    assert not d.primary.retry_same_config_can_succeed


def test_signal_killed_engine_is_engine_died_with_exit_code() -> None:
    d = classify([*HEAD, ECHO.replace("': 1}", "': -9}")])
    assert d.primary.kind == "engine_died"
    assert d.primary.model_dump()["exit_code"] == -9
    assert d.primary.retry_same_config_can_succeed


def test_echo_alone_is_unknown_pointing_at_the_last_real_error() -> None:
    lines = [
        *HEAD,
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] EngineCore failed to start.",
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] KeyError: 'rope_theta'",
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] Traceback (most recent call last):",
        ECHO,
    ]
    d = classify(lines)
    assert d.primary.kind == "unknown"
    dump = d.primary.model_dump()
    assert dump["last_error_line"] == "KeyError: 'rope_theta'"
    assert dump["last_error_line_number"] == 5
    assert d.failed


def test_booted_after_a_recovered_error_is_booted() -> None:
    lines = [
        *HEAD,
        "(APIServer pid=2100) ERROR 11-29 16:20:00 [x.py:1] OSError: [Errno 28] No space left on "
        "device: 'cache'",
        "(APIServer pid=2100) INFO 11-29 16:21:00 [launcher.py:40] Starting vLLM server on "
        "http://0.0.0.0:8011",
        "(APIServer pid=2100) INFO:     Application startup complete.",
    ]
    d = classify(lines)
    assert d.primary.kind == "booted"
    assert d.primary.model_dump()["port"] == 8011
    assert not d.failed
    assert {m.kind for m in d.matches} == {"booted", "disk_full"}


def test_failure_after_boot_wins() -> None:
    lines = [
        *HEAD,
        "(APIServer pid=2100) INFO:     Application startup complete.",
        "RuntimeError: Engine core process EngineCore died unexpectedly.",
    ]
    assert classify(lines).primary.kind == "engine_died"


def test_empty_log_is_unknown_and_not_a_failure() -> None:
    d = classify([])
    assert d.primary.kind == "unknown" and not d.failed
    assert d.primary.model_dump()["last_error_line"] is None


def test_wording_outside_the_detected_range_still_classifies_and_says_so() -> None:
    old = KV_032.replace("model's", "models's").replace(
        " (which also controls CPU memory on the CPU backend)", ""
    )
    d = classify([HEAD[0], old])
    assert d.primary.kind == "kv_cache_shortfall"
    assert d.primary.rule_id == "KV003"
    assert d.version_out_of_range


def test_unknown_version_matches_every_wording() -> None:
    old = (
        "ValueError: To serve at least one request with the models's max seq len (4096), "
        "(0.50 GiB KV cache is needed, which is larger than the available KV cache memory "
        "(0.25 GiB). Based on the available memory, the estimated maximum model length is "
        "2048. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine."
    )
    d = classify([old])
    assert d.vllm_version is None
    assert d.primary.rule_id == "KV002"
    assert d.primary.model_dump()["needed_gib"] == 0.5


def test_version_hint_selects_the_range() -> None:
    d = classify([KV_032], version="0.32.0+cpu")
    assert d.vllm_version == "0.32.0" and d.version_source == "hint"


OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a "
    "total capacity of 23.53 GiB of which 100.25 MiB is free. Of the allocated memory 22.1 GiB "
    "is allocated by PyTorch, with 1.50 GiB allocated in private pools (e.g., CUDA Graphs), and "
    "10.00 MiB is reserved by PyTorch but unallocated."
)


def _tb(*frames: str) -> list[str]:
    return ["Traceback (most recent call last):", *(f'  File "{f}"' for f in frames), OOM]


def test_oom_in_capture_frames_is_graph_capture_oom() -> None:
    d = classify(
        [
            *HEAD,
            *_tb(
                'vllm/v1/worker/gpu_worker.py", line 600, in compile_or_warm_up_model',
                'vllm/v1/worker/gpu_model_runner.py", line 6654, in capture_model',
            ),
        ]
    )
    assert d.primary.kind == "cuda_graph_capture_oom"
    dump = d.primary.model_dump()
    assert dump["tried_to_allocate_gib"] == 0.5
    assert dump["free_gib"] == round(100.25 / 1024, 6)
    assert dump["private_pools_gib"] == 1.5
    assert dump["total_capacity_gib"] == 23.53


def test_oom_in_weight_frames_is_weight_load_oom() -> None:
    d = classify(
        _tb('vllm/model_executor/model_loader/default_loader.py", line 300, in load_weights')
    )
    assert d.primary.kind == "weight_load_oom"


def test_oom_without_frames_takes_the_last_phase() -> None:
    capture = [
        *HEAD,
        "(EngineCore pid=2210) INFO 11-29 16:20:40 [gpu_worker.py:759] Available KV "
        "cache memory: 5.2 GiB",
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):"
        "  40%|####      | 27/67 [00:05<00:08,  4.97it/s]",
        OOM,
    ]
    assert classify(capture).primary.kind == "cuda_graph_capture_oom"
    assert classify([*HEAD, OOM]).primary.kind == "profiling_oom"
    assert classify([HEAD[0], HEAD[1], "Starting to load model m...", OOM]).primary.kind == (
        "weight_load_oom"
    )


def test_diagnosis_round_trips_through_json() -> None:
    d = classify([*HEAD, KV_032, ECHO])
    again = Diagnosis.model_validate_json(d.model_dump_json())
    assert again == d
    assert again.primary.kind == "kv_cache_shortfall"


def test_facts_carry_the_numbers_the_planner_needs() -> None:
    d = classify(
        [
            *HEAD,
            "(EngineCore pid=1) INFO 11-29 16:20:40 [gpu_model_runner.py:6474] Estimated CUDA graph "
            "memory: 1.25 GiB total",
            "(EngineCore pid=1) INFO 11-29 16:20:41 [gpu_worker.py:759] Available KV cache memory: "
            "1.0 GiB",
            KV_032,
        ]
    )
    assert d.facts.model_weights_gib == 2.3
    assert d.facts.cuda_graph_estimate_gib == 1.25
    assert d.facts.available_kv_cache_gib == 1.0
    assert d.phase == "kv_cache_sized"


def test_watcher_reports_at_the_terminal_line_and_once() -> None:
    w = BootWatcher()
    for line in HEAD:
        assert w.feed(line) is None
    d = w.feed(KV_032)
    assert d is not None and d.primary.kind == "kv_cache_shortfall"
    assert w.feed(ECHO) is None
    assert w.reported is d
    assert w.diagnosis().primary.kind == "kv_cache_shortfall"


def test_watcher_reports_boot() -> None:
    w = BootWatcher(version="0.32.0")
    assert w.feed("(APIServer pid=1) INFO:     Started server process [1]") is None
    d = w.feed("(APIServer pid=1) INFO:     Application startup complete.\r\n")
    assert d is not None and d.primary.kind == "booted"


def test_watcher_keeps_only_the_tail() -> None:
    w = BootWatcher(lines=10)
    for i in range(100):
        w.feed(f"INFO 11-29 16:20:31 [x.py:1] line {i}")
    assert w.diagnosis().lines_examined == 10


def test_unknown_skips_every_echo_of_a_cause() -> None:
    lines = [
        "(Worker_TP1 pid=7) ERROR 11-29 16:20:31 [multiproc_executor.py:800] WorkerProc hit an exception.",
        "(Worker_TP1 pid=7) ERROR 11-29 16:20:31 [multiproc_executor.py:800] NotImplementedError: no kernel for sm_61",
        "RuntimeError: Worker failed with error 'no kernel for sm_61', please check the stack trace above for the root cause",
        "Exception: WorkerProc initialization failed due to an exception in a background process. See stack trace for root cause.",
        ECHO,
    ]
    d = classify(lines)
    assert d.primary.kind == "unknown"
    assert d.primary.model_dump()["last_error_line"] == "NotImplementedError: no kernel for sm_61"


def test_watcher_waits_for_the_details_under_a_validation_error() -> None:
    w = BootWatcher(version="0.32.0")
    assert (
        w.feed("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig")
        is None
    )
    d = w.feed(
        "  Value error, User-specified max_model_len (16384) is greater than the derived "
        "max_model_len (max_position_embeddings=8192.0 or model_max_length=None in model's "
        "config.json). [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]"
    )
    assert d is not None and d.primary.kind == "max_model_len_exceeds_model"


def test_watcher_reports_a_bare_validation_error_after_settling() -> None:
    w = BootWatcher()
    assert (
        w.feed("pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig")
        is None
    )
    assert w.feed("gpu_memory_utilization") is None
    assert (
        w.feed(
            "  Input should be less than or equal to 1 [type=less_than_equal, input_value=1.5, input_type=float]"
        )
        is None
    )
    d = w.feed(
        "    For further information visit https://errors.pydantic.dev/2.14/v/less_than_equal"
    )
    assert d is not None and d.primary.kind == "invalid_argument"
    assert d.primary.model_dump()["argument"] == "gpu_memory_utilization"
    assert d.primary.model_dump()["config"] == "CacheConfig"


def test_warnings_are_not_causes() -> None:
    """A WARNING record never ends a boot, whatever words it contains."""
    d = classify(
        [
            *HEAD,
            "(APIServer pid=2100) WARNING 11-29 16:20:00 [x.py:1] retrying after "
            "OSError: [Errno 28] No space left on device",
        ]
    )
    assert d.primary.kind == "unknown" and not d.matches


def test_silent_engine_death_is_engine_died_only_when_nothing_was_printed() -> None:
    silent = [
        *HEAD[:2],
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See "
        "root cause above. Failed core proc(s): {}",
    ]
    assert classify(silent).primary.kind == "engine_died"
    printed = [
        *HEAD[:2],
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] EngineCore failed to start.",
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] KeyError: 'rope_theta'",
        silent[-1],
    ]
    d = classify(printed)
    assert d.primary.kind == "unknown"
    assert d.primary.model_dump()["last_error_line"] == "KeyError: 'rope_theta'"


def test_version_from_every_line_that_states_it() -> None:
    shapes = {
        "(APIServer pid=1) INFO 01-02 03:04:05 [api_server.py:1044] vLLM API server version 0.14.0": "0.14.0",
        "(APIServer pid=1) INFO 01-02 03:04:05 [utils.py:305] vLLM server version 0.15.0, serving model m": "0.15.0",
        "(APIServer pid=1) INFO 01-02 03:04:05 [utils.py:344]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.22.0": "0.22.0",
        "INFO 01-02 03:04:05 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: model='m'": "0.8.5",
        "(EngineCore pid=2) INFO 01-02 03:04:05 [core.py:133] Initializing a V1 LLM engine (v0.32.0+cpu) with config: x": "0.32.0",
    }
    for line, want in shapes.items():
        d = classify([line])
        assert d.vllm_version == want and d.version_source == "log", line


def test_torch_warnings_are_not_causes() -> None:
    """torch's compile-cache write failures are warnings; the boot may go on."""
    lines = [
        *HEAD,
        "[rank0]:W1129 16:51:14.768000 23872 torch/_functorch/_aot_autograd/autograd_cache.py:1342] "
        "AOTAutograd cache unable to serialize compiled graph: [Errno 28] No space left on device",
        "(Worker pid=5) [W1129 16:00:21.336081597 utils.cpp:68] Warning: No space left on device",
    ]
    assert classify(lines).primary.kind == "unknown"
    w = BootWatcher()
    assert all(w.feed(line) is None for line in lines)


def test_echoes_are_rules_a_caller_can_replace() -> None:
    """Echoes come from the RuleSet: without them an echo line is the last error an
    unknown names; a user's own echo rule makes it skip that line."""
    from vllm_bootdiag.rules import RULES, Rule, RuleSet

    lines = [
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] KeyError: 'rope_theta'",
        "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] MyLauncherError: engine gone, "
        "see above",
    ]
    assert classify(lines).primary.model_dump()["last_error_line"].startswith("MyLauncherError")
    mine = Rule(
        id="LC299",
        role="echo",
        name="my-launcher-echo",
        outcome="unknown",
        literal="MyLauncherError: engine gone",
        patterns=(r"MyLauncherError: engine gone",),
        examples=("MyLauncherError: engine gone, see above",),
        summary="A launcher's echo of the engine's failure.",
        remediation="Read above.",
        reports=False,
        terminal=False,
    )
    d = classify(lines, extra_rules=[mine])
    assert d.primary.model_dump()["last_error_line"] == "KeyError: 'rope_theta'"
    # Only the launcher's echo left: the unknown ends on it, with the echo's remediation.
    d = classify(lines[1:], extra_rules=[mine])
    assert d.failed and d.remediation == "Read above."
    no_echoes = RuleSet(r for r in RULES if r.role != "echo")
    d = classify(
        [
            *HEAD,
            "(EngineCore pid=2210) ERROR 11-29 16:20:31 [core.py:1510] KeyError: 'rope_theta'",
            ECHO,
        ],
        rules=no_echoes,
    )
    assert d.primary.model_dump()["last_error_line"].startswith("RuntimeError: Engine core")


def test_the_silent_death_rule_stands_down_on_the_echoes_of_a_printed_cause() -> None:
    """LC004 (a cause: the core died and printed nothing) reads the line the echo LC201
    reads; its `unless` is the echoes a process logs with its own traceback."""
    from vllm_bootdiag.rules import BY_ID, RULES

    echo_literals = {r.literal for r in RULES if r.role == "echo"}
    assert BY_ID["LC004"].role == "cause" and BY_ID["LC201"].role == "echo"
    assert set(BY_ID["LC004"].unless) <= echo_literals
    assert BY_ID["LC004"].match(BY_ID["LC201"].examples[1]) is not None


def test_an_echo_out_of_range_is_no_reason_to_widen_the_version() -> None:
    d = classify(
        [
            *HEAD,
            "(APIServer pid=1) RuntimeError: Engine process failed to start. See "
            "stack trace for the root cause.",
        ]
    )
    assert d.vllm_version == "0.32.0" and not d.version_out_of_range
    assert d.primary.kind == "unknown" and d.failed
