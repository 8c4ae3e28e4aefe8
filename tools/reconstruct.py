#!/usr/bin/env python3
"""Reconstruct GPU-only boot failures on top of real CPU captures (``provenance.kind:
"reconstructed"``).

Why: CUDA out-of-memory outcomes (weight load, sampler warm-up, CUDA-graph capture), the GPU
``Free memory on device`` check and the GPU wording around the KV check cannot be provoked on a
machine without a GPU. Each reconstruction takes a real CPU capture of the same vLLM version as
its frame (its process tags, timestamps, prefixes, banner, argument lines and traceback shape
are kept), drops the lines only the CPU backend prints, moves the worker's lines into the
EngineCore process (a single GPU runs the uniproc executor inside EngineCore), and builds the
GPU lines from that release's own source: every ``[file:line]``, format string and traceback
frame below is read from the installed vLLM/torch source of that version by ``tbframes``. Every
built or changed line is listed in the label with its source and template.

Usage::

    python tools/reconstruct.py [--version 0.32.0] [--env-root DIR] [--list]

Stdlib only; not imported by the library.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tbframes import Frame, LogSite, decorators, frame, log_site

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"

RECORD = re.compile(
    r"^(?P<tag>\([^)]*? pid=\d+\) )?(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) "
    r"(?P<ts>\d\d-\d\d \d\d:\d\d:\d\d) \[(?P<src>[^\]]+)\] (?P<msg>.*?)(?P<eol>\r?\n)?$",
    re.S,
)
# Lines only the CPU backend (or its multiprocessing executor) prints.
CPU_ONLY = re.compile(
    r"Triton is installed, but doesn't include CPU backend|\[cpu\.py:|ompmultiprocessing\.py"
    r"|cpu_worker\.py|cpu_model_runner\.py|NUMA binding|dispatcher\.py:\d+: FutureWarning"
    r"|^  if hasattr\(value|^  wrapper = lookup|\(VllmWorker-\d|multiproc_executor\.py"
    r"|Using LBHNC KV cache layout|torch_utils\.py:\d+\] Reducing Torch threads"
    r"|Model Runner V2 requires Triton|Reset SSM cache type|cpu_attn\.py|Triton is not installed"
    r"|libtcmalloc|libiomp|intel_extension|VLLM_CPU_|cpu_worker|\[W\d{4} "
    r"|Final IR op priority|Enabled custom fusions|shm_broadcast\.py"
    r"|active driver\(s\) found|Triton not installed or not compatible|No CUDA runtime is found"
    r"|CPU_ATTN"
)

OTEL = ("vllm/tracing/otel.py", "sync_wrapper", "func(")
TORCH_CTX = ("torch/utils/_contextlib.py", "decorate_context", "func(")
MOD_WRAP = ("torch/nn/modules/module.py", "Module._wrapped_call_impl", "self._call_impl(")
MOD_CALL = ("torch/nn/modules/module.py", "Module._call_impl", "forward_call(")
DEVICE_CTX = ("torch/utils/_device.py", "DeviceContext.__torch_function__", "func(")

# torch's CUDA OOM text, as in libc10_cuda.so of torch 2.11.0+cu130 (the newest CUDA build of
# torch on this machine; its pieces were read with `strings`).
TORCH_OOM = (
    "CUDA out of memory. Tried to allocate {alloc}. GPU 0 has a total capacity of {total} of "
    "which {free} is free. {procs}Including non-PyTorch memory, this process has {mine} memory "
    "in use. Of the allocated memory {by_torch} is allocated by PyTorch, {pools}and {reserved} "
    "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
    "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
    "documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html"
    "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)"
)


@dataclass
class Doc:
    """The new log: lines (with their endings) and, per built line, where it came from."""

    lines: list[str] = field(default_factory=list)
    built: list[dict[str, object]] = field(default_factory=list)

    def keep(self, line: str) -> None:
        self.lines.append(line)

    def add(self, line: str, source: str, template: str) -> None:
        self.lines.append(line)
        self.built.append({"line": len(self.lines), "source": source, "template": template})


@dataclass(frozen=True)
class Ctx:
    """One version's source tree and the frame's process facts."""

    version: str
    sp: Path
    engine_tag: str  # "(EngineCore pid=10452) "
    raw_tag: str  # prefix on raw stderr lines ("" from 0.31 on)
    ts: str
    model: str = ""  # the frame's model directory name


def chain(ctx: Ctx, specs: Sequence[tuple[str, ...]]) -> list[Frame]:
    """Frames for (file, function, call-needle[, within]) specs."""
    out = []
    for spec in specs:
        rel, func, needle, *rest = spec
        within = rest[0] if rest else ""
        out.append(frame(ctx.sp, rel, func, needle, within=within))
    return out


def tb_lines(frames: Sequence[Frame], exc: str) -> list[str]:
    """A ``Traceback (most recent call last):`` block ending with the exception line."""
    out = ["Traceback (most recent call last):"]
    for f in frames:
        out.extend(f.lines)
    out.append(exc)
    return out


FRAME_LINE = re.compile(
    r'^  File "(?:<venv>/lib/python3\.\d+/site-packages/)?([^"]+)", line (\d+), in (\S+)'
)


def describe(line: str, what: str) -> str:
    """Template text for a built traceback line: the frame it shows, else ``what``."""
    m = FRAME_LINE.match(line)
    return f"{what}: frame {m[1]}:{m[2]} in {m[3]}" if m else what


def emit_record(
    doc: Doc, tag: str, level: str, ts: str, site: LogSite, msgs: Sequence[str], what: str
) -> None:
    """One logging record; extra lines carry the full prefix and all but the last end in CRLF."""
    prefix = f"{tag}{level} {ts} [{site.basename}:{site.lineno}] "
    for i, m in enumerate(msgs):
        end = "\r\n" if i < len(msgs) - 1 else "\n"
        template = site.template if i == 0 else describe(m, f"{what} (line {i + 1} of the record)")
        doc.add(prefix + m + end, site.source, template)


def emit_raw(doc: Doc, tag: str, msgs: Sequence[str], source: str, what: str) -> None:
    """Lines written straight to stderr (multiprocessing's own traceback print)."""
    for m in msgs:
        doc.add(f"{tag}{m}\n", source, describe(m, what))


def oom_text(
    alloc: str,
    total: str,
    free: str,
    mine: str,
    by_torch: str,
    reserved: str,
    others: Sequence[tuple[int, str]] = (),
    pools: str = "",
) -> str:
    """torch's OOM message with the given sizes."""
    procs = "".join(f"Process {pid} has {size} memory in use. " for pid, size in others)
    pools_txt = f"with {pools} allocated in private pools (e.g., CUDA Graphs), " if pools else ""
    return TORCH_OOM.format(
        alloc=alloc,
        total=total,
        free=free,
        procs=procs,
        mine=mine,
        by_torch=by_torch,
        pools=pools_txt,
        reserved=reserved,
    )


# ------------------------------------------------------------------------------ frames


def read_frame(stem: str) -> tuple[str, list[str], str]:
    """Relative name, lines (keepends) and sha256 of a captured frame log."""
    path = CORPUS / stem
    data = path.read_bytes()
    return stem, data.decode("utf-8").splitlines(keepends=True), hashlib.sha256(data).hexdigest()


def model_loading(doc: Doc, ctx: Ctx, ts: str) -> None:
    """The V1 runner's 'Model loading took' record (SmolLM2-135M shape: 0.26 GiB)."""
    site = log_site(ctx.sp, GMR, "Model loading took")
    mem = " memory" if "GiB memory and" in site.template else ""
    big = ctx.model == "llama-3.2-1b-shape"
    value = (
        ("2.32" if big else "0.26")
        if "%s GiB" in site.template
        else ("2.3185" if big else "0.2563")
    )
    emit_record(
        doc,
        ctx.engine_tag,
        "INFO",
        ts,
        site,
        [f"Model loading took {value} GiB{mem} and 0.731406 seconds"],
        "",
    )


GPU_REWRITES: tuple[tuple[str, str], ...] = (
    ("device_config=cpu", "device_config=cuda"),
    ("backend=gloo", "backend=nccl"),
)


def head_until(
    doc: Doc, ctx: Ctx, lines: Sequence[str], stop: Callable[[str], bool], loading: bool = False
) -> int:
    """Copy the frame up to the first line where ``stop`` holds, minus CPU-only lines; worker
    records move into the EngineCore process and CPU values become their GPU counterparts.
    Returns the index of the stop line."""
    for i, line in enumerate(lines):
        if stop(line):
            return i
        m0 = RECORD.match(line)
        if loading and m0 and "Starting to load model" in line:
            site = log_site(ctx.sp, GMR, "Starting to load model")
            emit_record(doc, ctx.engine_tag, "INFO", m0["ts"], site, [m0["msg"].rstrip("\r\n")], "")
            if not any("Initializing model took" in x for x in lines):
                model_loading(doc, ctx, m0["ts"])
            continue
        if CPU_ONLY.search(line):
            continue
        if loading and m0 and "Initializing model took" in line:
            doc.keep(ctx.engine_tag + line[len(m0["tag"] or "") :])
            doc.built.append(
                {
                    "line": len(doc.lines),
                    "source": f"frame line {i + 1}",
                    "template": "frame record; process tag set to EngineCore",
                }
            )
            model_loading(doc, ctx, m0["ts"])
            continue
        new, changes = line, []
        m = RECORD.match(line)
        if m and m["tag"] and m["tag"].startswith("(Worker"):
            new = ctx.engine_tag + line[len(m["tag"]) :]
            changes.append(
                "process tag set to the EngineCore process (the uniproc executor "
                "runs the GPU worker inside EngineCore)"
            )
        for old, repl in GPU_REWRITES:
            if old in new:
                new = new.replace(old, repl)
                changes.append(f"{old!r} -> {repl!r}")
        if changes:
            doc.add(new, f"frame line {i + 1}", "frame record; " + "; ".join(changes))
        else:
            doc.keep(line)
    raise LookupError("stop line not found in frame")


def api_tail(lines: Sequence[str]) -> list[str]:
    """The frame's API-server traceback after the EngineCore one (same code path on GPU)."""
    proc = next(
        i
        for i, line in enumerate(lines)
        if line.startswith(("Process EngineCore",))
        or re.match(r"^\([^)]*\) Process EngineCore", line)
    )
    tbs = [
        i
        for i in range(proc + 2, len(lines))
        if lines[i].rstrip("\r\n").endswith("Traceback (most recent call last):")
    ]
    return list(lines[tbs[0] :])


def raw_head(lines: Sequence[str]) -> list[str]:
    """``Process EngineCore:`` and the frames above ``EngineCoreProc(`` in the frame's raw print."""
    proc = next(
        i for i, line in enumerate(lines) if "Process EngineCore" in line and not RECORD.match(line)
    )
    end = next(
        i
        for i in range(proc, len(lines))
        if "in run_engine_core" in lines[i] and "raise e" in lines[i + 1]
    )
    tag = lines[proc][: lines[proc].index("Process EngineCore")]
    return [line.rstrip("\r\n")[len(tag) :] for line in lines[proc : end + 2]]


# ------------------------------------------------------------------------------ chains


def with_wrappers(ctx: Ctx, specs: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Insert decorator frames (OpenTelemetry ``instrument``, ``torch.inference_mode``) before
    each decorated vLLM function's own frame, as CPython prints them."""
    out: list[tuple[str, ...]] = []
    for spec in specs:
        rel, func = spec[0], spec[1]
        if rel.startswith("vllm/") and spec[:3] not in (OTEL,):
            decos = " ".join(decorators(ctx.sp, rel, func))
            if "instrument" in decos and (ctx.sp / OTEL[0]).exists():
                out.append(OTEL)
            if "inference_mode" in decos or "no_grad" in decos:
                out.append(TORCH_CTX)
        out.append(spec)
    return out


def frames_for(ctx: Ctx, specs: Sequence[tuple[str, ...]]) -> list[Frame]:
    """Frames for (file, function, needle[, contains]) specs, decorator frames included."""
    out = []
    for spec in with_wrappers(ctx, specs):
        rel, func, needle, *rest = spec
        contains = rest[0] if rest else ""
        nth = int(rest[1]) if len(rest) > 1 else 0
        out.append(frame(ctx.sp, rel, func, needle, nth=nth, contains=contains))
    return out


CORE = "vllm/v1/engine/core.py"
ENGINE_INIT: tuple[tuple[str, ...], ...] = (
    (CORE, "run_engine_core", "EngineCoreProc("),
    (CORE, "EngineCoreProc.__init__", "super().__init__("),
)
TO_KV_INIT: tuple[tuple[str, ...], ...] = (
    *ENGINE_INIT,
    (CORE, "EngineCore.__init__", "self._initialize_kv_caches("),
)


def fail_engine(
    doc: Doc,
    ctx: Ctx,
    frame_lines: Sequence[str],
    outer: Sequence[Frame],
    exc: str,
    inner: Sequence[Frame] = (),
    inner_exc: str = "",
) -> None:
    """EngineCore's ``EngineCore failed to start.`` record, multiprocessing's raw print of the
    same exception, then the frame's own API-server traceback."""
    site = log_site(ctx.sp, CORE, "EngineCore failed to start")
    sep = ["", "The above exception was the direct cause of the following exception:", ""]
    body = (tb_lines(inner, inner_exc) + sep if inner else []) + tb_lines(outer, exc)
    emit_record(
        doc,
        ctx.engine_tag,
        "ERROR",
        ctx.ts,
        site,
        ["EngineCore failed to start.", *body],
        "logger.exception traceback",
    )
    head = raw_head(frame_lines)  # "Process EngineCore:", "Traceback ...", ... "raise e"
    raw = [head[0]]
    if inner:
        raw += tb_lines(inner, inner_exc) + sep
    raw += head[1:] + [line for f in outer for line in f.lines] + [exc]
    emit_raw(
        doc,
        ctx.raw_tag,
        raw,
        "multiprocessing/process.py:_bootstrap (traceback.print_exc)",
        "CPython traceback of the same exception, printed by multiprocessing",
    )
    for line in api_tail(frame_lines):
        doc.keep(line)


# ------------------------------------------------------------------------------ recipes

GW = "vllm/v1/worker/gpu_worker.py"
GMR = "vllm/v1/worker/gpu_model_runner.py"
MR2 = "vllm/v1/worker/gpu/model_runner.py"
UNI = "vllm/v1/executor/uniproc_executor.py"
ABS = "vllm/v1/executor/abstract.py"
KVU = "vllm/v1/core/kv_cache_utils.py"
LLAMA = "vllm/model_executor/models/llama.py"
VPE = "vllm/model_executor/layers/vocab_parallel_embedding.py"
BASE_LOADER = "vllm/model_executor/model_loader/base_loader.py"
LOADER_UTILS = "vllm/model_executor/model_loader/utils.py"


@dataclass(frozen=True)
class Recipe:
    """One reconstruction: outcome, scenario, frame and the builder."""

    version: str
    outcome: str
    scenario: str
    frame: str
    build: Callable[[Ctx, Doc, list[str]], str]  # returns the label notes


def executor_rpc(ctx: Ctx, abs_func: str) -> list[tuple[str, ...]]:
    """``Executor.<abs_func>`` -> ``collective_rpc`` -> ``run_method`` -> the worker method."""
    return [
        (ABS, f"Executor.{abs_func}", "self.collective_rpc("),
        (UNI, "UniProcExecutor.collective_rpc", "run_method("),
        (run_method_file(ctx), "run_method", "func("),
    ]


def run_method_file(ctx: Ctx) -> str:
    """Where ``run_method`` lives in this release."""
    for rel in ("vllm/v1/serial_utils.py", "vllm/utils/__init__.py", "vllm/utils.py"):
        path = ctx.sp / rel
        if path.exists() and "def run_method(" in path.read_text():
            return rel
    raise LookupError("run_method not found")


def rec(doc: Doc, ctx: Ctx, level: str, rel: str, fragment: str, msg: str, nth: int = 0) -> None:
    """A one-line record of the EngineCore process, from the template at ``rel``."""
    emit_record(doc, ctx.engine_tag, level, ctx.ts, log_site(ctx.sp, rel, fragment, nth), [msg], "")


def stop_at(*needles: str) -> Callable[[str], bool]:
    """Stop predicate for ``head_until``."""
    return lambda line: any(n in line for n in needles)


def oom_exc(**kw: object) -> str:
    """The torch exception line."""
    return "torch.OutOfMemoryError: " + oom_text(**kw)  # type: ignore[arg-type]


def model_init_chain(ctx: Ctx) -> list[tuple[str, ...]]:
    """base_loader.load_model -> initialize_model -> LlamaForCausalLM -> ... -> torch.empty."""
    loader = (ctx.sp / BASE_LOADER).read_text()
    llama = (ctx.sp / LLAMA).read_text()
    specs: list[tuple[str, ...]] = (
        [
            (BASE_LOADER, "BaseModelLoader.load_model", "self.create_model("),
            (BASE_LOADER, "BaseModelLoader.create_model", "initialize_model("),
        ]
        if "def create_model" in loader
        else [(BASE_LOADER, "BaseModelLoader.load_model", "initialize_model(")]
    )
    specs.append((LOADER_UTILS, "initialize_model", "model_class("))
    if "def _init_model" in llama:
        specs += [
            (LLAMA, "LlamaForCausalLM.__init__", "self._init_model("),
            (LLAMA, "LlamaForCausalLM._init_model", "LlamaModel("),
        ]
    else:
        specs.append((LLAMA, "LlamaForCausalLM.__init__", "LlamaModel("))
    specs += [
        ("vllm/compilation/decorators.py", "_support_torch_compile.__init__", "old_init("),
        (LLAMA, "LlamaModel.__init__", "VocabParallelEmbedding("),
        (VPE, "VocabParallelEmbedding.__init__", "self.quant_method.create_weights("),
        (VPE, "UnquantizedEmbeddingMethod.create_weights", "torch.empty("),
        DEVICE_CTX,
    ]
    return specs


def weight_oom_v2(ctx: Ctx, doc: Doc, lines: list[str]) -> str:
    """0.32 default Model Runner V2: the OOM escapes load_model with no vLLM wrapper."""
    head_until(doc, ctx, lines, stop_at("Starting to load model"))
    rec(doc, ctx, "INFO", MR2, "Loading model from scratch", "Loading model from scratch...")
    outer = frames_for(
        ctx,
        [
            *ENGINE_INIT,
            (CORE, "EngineCore.__init__", "executor_class("),
            (ABS, "Executor.__init__", "self._init_executor("),
            (UNI, "UniProcExecutor._init_executor", "self.driver_worker.load_model("),
            (GW, "Worker.load_model", "self.model_runner.load_model("),
            (MR2, "GPUModelRunner.load_model", "model_loader.load_model("),
            *model_init_chain(ctx),
        ],
    )
    exc = oom_exc(
        alloc="501.00 MiB",
        total="22.05 GiB",
        free="309.12 MiB",
        mine="282.00 MiB",
        by_torch="0 bytes",
        reserved="0 bytes",
        others=[(2211, "21.45 GiB")],
    )
    fail_engine(doc, ctx, lines, outer, exc)
    return (
        "GPU weight-load OOM under Model Runner V2 (the 0.32 default): another process "
        "holds 21.45 GiB of a 22.05 GiB card, so the 501 MiB embedding of the Llama-3.2-1B "
        "shape does not fit. V2's load_model has no 'Failed to load model' wrapper, so only "
        "the torch OOM shows. The OOM is raised while the embedding is created under "
        "`with torch.device(...)` (torch/utils/_device.py)."
    )


def free_memory(ctx: Ctx, doc: Doc, lines: list[str]) -> str:
    """The GPU worker's startup check (request_memory) fails before any weights load."""
    head_until(doc, ctx, lines, stop_at("Starting to load model"))
    worker_init = [
        (UNI, "UniProcExecutor._init_executor", "self.driver_worker.init_device("),
        (
            "vllm/v1/worker/worker_base.py",
            "WorkerWrapperBase.init_device",
            "self.worker.init_device(",
        ),
        (GW, "Worker.init_device", "request_memory("),
    ]
    if (ctx.sp / "vllm/v1/worker/utils.py").read_text().count("def request_memory("):
        tail: list[tuple[str, ...]] = [
            (
                "vllm/v1/worker/utils.py",
                "request_memory",
                "raise ValueError(",
                "is less than desired GPU",
            )
        ]
    else:
        worker_init[-1] = (GW, "Worker.init_device", "raise ValueError(", "is less than desired")
        tail = []
    outer = frames_for(
        ctx,
        [
            *ENGINE_INIT,
            (CORE, "EngineCore.__init__", "executor_class("),
            (ABS, "Executor.__init__", "self._init_executor("),
            *worker_init,
            *tail,
        ],
    )
    exc = (
        "ValueError: Free memory on device cuda:0 (13.87/22.05 GiB) on startup is less than "
        "desired GPU memory utilization (0.92, 20.29 GiB). Decrease GPU memory utilization "
        "or reduce GPU memory used by other processes."
    )
    fail_engine(doc, ctx, lines, outer, exc)
    return (
        "GPU startup memory check: another process holds about 8 GiB of a 22.05 GiB card, "
        "so 13.87 GiB free is below 0.92 x 22.05 = 20.29 GiB requested."
    )


def load_lines(ctx: Ctx, doc: Doc, v2: bool, took: str) -> None:
    """The model-loading records of the GPU runner (dummy weights, so no 'Loading weights')."""
    if v2:
        rec(doc, ctx, "INFO", MR2, "Loading model from scratch", "Loading model from scratch...")
    else:
        rec(
            doc,
            ctx,
            "INFO",
            GMR,
            "Starting to load model",
            "Starting to load model <models>/llama-3.2-1b-shape...",
        )
    optional_rec(
        doc,
        ctx,
        "INFO",
        BASE_LOADER,
        "Initializing model took",
        "Initializing model took 0.412087 seconds",
    )
    runner = MR2 if v2 else GMR
    site = log_site(ctx.sp, runner, "Model loading took")
    value = took if "%s GiB" in site.template else f"{float(took):.4f}"
    mem = " memory" if "GiB memory and" in site.template else ""
    rec(
        doc,
        ctx,
        "INFO",
        runner,
        "Model loading took",
        f"Model loading took {value} GiB{mem} and 1.873202 seconds",
    )


def kv_value_error(lines: Sequence[str]) -> str:
    """The frame's own KV-shortfall exception line (raw print, its process tag removed)."""
    for line in reversed(lines):
        k = line.find("ValueError: To serve at least one request")
        if k >= 0 and not RECORD.match(line):
            return line[k:].rstrip("\r\n")
    raise LookupError("no KV-shortfall ValueError in the frame")


def kv_shortfall_gpu(ctx: Ctx, doc: Doc, lines: list[str]) -> str:
    """KV check on a small card: the GPU worker's 'Available KV cache memory' line first."""
    exc_frame = kv_value_error(lines)
    head_until(doc, ctx, lines, stop_at("Starting to load model"))
    v2 = ctx.version >= "0.25"
    load_lines(ctx, doc, v2, "2.32")
    rec(doc, ctx, "INFO", GW, "Available KV cache memory", "Available KV cache memory: 2.61 GiB")
    outer = frames_for(
        ctx,
        [
            *TO_KV_INIT,
            (CORE, "EngineCore._initialize_kv_caches", "get_kv_cache_configs("),
            (KVU, "get_kv_cache_configs", "_check_enough_kv_cache_memory("),
            (KVU, "_check_enough_kv_cache_memory", "raise ValueError(", "To serve at least"),
        ],
    )
    exc = re.sub(
        r"available KV cache memory \([\d.]+ GiB\)",
        "available KV cache memory (2.61 GiB)",
        exc_frame,
    )
    exc = re.sub(
        r"estimated maximum model length is \d+", "estimated maximum model length is 85184", exc
    )
    fail_engine(doc, ctx, lines, outer, exc)
    return (
        "GPU KV shortfall: a 6 GiB card at the default utilization leaves 2.61 GiB for the "
        "KV cache after 2.32 GiB of weights; the Llama-3.2-1B shape needs 4.0 GiB for one "
        "131072-token request. The exception text is the frame's real one with the "
        "available memory and estimated length changed (2.61 GiB, 85184 tokens)."
    )


def no_kv_gpu(ctx: Ctx, doc: Doc, lines: list[str]) -> str:
    """Negative KV budget on a 4 GiB card: 'No available memory for the cache blocks'."""
    head_until(doc, ctx, lines, stop_at("Starting to load model"))
    v2 = ctx.version >= "0.25"
    load_lines(ctx, doc, v2, "2.32")
    rec(doc, ctx, "INFO", GW, "Available KV cache memory", "Available KV cache memory: -0.18 GiB")
    site = log_site(ctx.sp, KVU, "No available memory for the cache blocks")
    outer = frames_for(
        ctx,
        [
            *TO_KV_INIT,
            (CORE, "EngineCore._initialize_kv_caches", "get_kv_cache_configs("),
            (KVU, "get_kv_cache_configs", "_check_enough_kv_cache_memory("),
            (KVU, "_check_enough_kv_cache_memory", "raise ValueError(", "No available memory"),
        ],
    )
    fail_engine(doc, ctx, lines, outer, "ValueError: " + site.template)
    return (
        "GPU KV budget below zero: on a 4 GiB card (3.63 GiB usable x 0.92) the 2.32 GiB of "
        "weights plus the profiled activation peak leave -0.18 GiB, and the KV check raises "
        "its 'No available memory for the cache blocks' wording."
    )


def sampler_oom(ctx: Ctx, doc: Doc, lines: list[str]) -> str:
    """The V1 runner's sampler warm-up inside profile_run runs out of memory."""
    head_until(doc, ctx, lines, stop_at("Starting to load model"))
    load_lines(ctx, doc, False, "2.32")
    outer = frames_for(
        ctx,
        [
            *TO_KV_INIT,
            (
                CORE,
                "EngineCore._initialize_kv_caches",
                "self.model_executor.determine_available_memory(",
            ),
            *executor_rpc(ctx, "determine_available_memory"),
            (GW, "Worker.determine_available_memory", "self.model_runner.profile_run("),
            (GMR, "GPUModelRunner.profile_run", "self._dummy_sampler_run("),
            (GMR, "GPUModelRunner._dummy_sampler_run", "raise RuntimeError(", "warming up sampler"),
        ],
    )
    inner = [
        frame(ctx.sp, GMR, "GPUModelRunner._dummy_sampler_run", "self.sampler("),
        *frames_for(ctx, [MOD_WRAP, MOD_CALL]),
        frame(ctx.sp, "vllm/v1/sample/sampler.py", "Sampler.forward", "logits.to(", nth=-1),
    ]
    inner_exc = oom_exc(
        alloc="126.00 MiB",
        total="22.05 GiB",
        free="97.12 MiB",
        mine="20.31 GiB",
        by_torch="19.62 GiB",
        reserved="211.45 MiB",
    )
    exc = (
        "RuntimeError: CUDA out of memory occurred when warming up sampler with 256 dummy "
        "requests. Please try lowering `max_num_seqs` or `gpu_memory_utilization` when "
        "initializing the engine."
    )
    fail_engine(doc, ctx, lines, outer, exc, inner, inner_exc)
    return (
        "Sampler warm-up OOM during memory profiling (V1 runner's profile_run -> "
        "_dummy_sampler_run with 256 dummy requests, whose fp32 logits over the 128256-token "
        "vocabulary need 126 MiB) while another tenant's allocations leave 97 MiB free."
    )


def optional_rec(doc: Doc, ctx: Ctx, level: str, rel: str, fragment: str, msg: str) -> None:
    """A record only if this release has that template."""
    try:
        log_site(ctx.sp, rel, fragment)
    except LookupError:
        return
    rec(doc, ctx, level, rel, fragment, msg)


def kv_size_lines(doc: Doc, ctx: Ctx, tokens: str, maxlen: str, conc: str) -> None:
    """'GPU KV cache size' / 'Maximum concurrency' as this release words them."""
    text = (ctx.sp / KVU).read_text()
    if '"%s KV cache size: %s tokens, "' in text:
        rec(
            doc,
            ctx,
            "INFO",
            KVU,
            "KV cache size: %s tokens, ",
            f"GPU KV cache size: {tokens} tokens, Maximum concurrency for {maxlen} tokens per "
            f"request: {conc}x",
        )
    elif "GPU KV cache size: %s tokens, " in text:
        rec(
            doc,
            ctx,
            "INFO",
            KVU,
            "GPU KV cache size: %s tokens, ",
            f"GPU KV cache size: {tokens} tokens, Maximum concurrency for {maxlen} tokens per "
            f"request: {conc}x",
        )
    else:
        rec(doc, ctx, "INFO", KVU, "GPU KV cache size", f"GPU KV cache size: {tokens} tokens")
        rec(
            doc,
            ctx,
            "INFO",
            KVU,
            "Maximum concurrency for",
            f"Maximum concurrency for {maxlen} tokens per request: {conc}x",
        )


def compile_lines(doc: Doc, ctx: Ctx) -> None:
    """torch.compile records of the profiling run, for frames whose CPU run compiled later."""
    backends = "vllm/compilation/backends.py"
    optional_rec(
        doc,
        ctx,
        "INFO",
        backends,
        "Using cache directory",
        "Using cache directory: <home>/.cache/vllm/torch_compile_cache/3d1f5e0a7c/"
        "rank_0_0/backbone for vLLM's torch.compile",
    )
    optional_rec(
        doc,
        ctx,
        "INFO",
        backends,
        "Dynamo bytecode transform time",
        "Dynamo bytecode transform time: 5.37 s",
    )
    optional_rec(
        doc,
        ctx,
        "INFO",
        backends,
        "Compiling a graph for compile range",
        "Compiling a graph for compile range (1, 2048) takes 11.62 s",
    )
    optional_rec(
        doc,
        ctx,
        "INFO",
        "vllm/compilation/monitor.py",
        "torch.compile takes",
        "torch.compile takes 16.99 s in total",
    )


def capture_loop(ctx: Ctx) -> list[tuple[str, ...]]:
    """``_capture_cudagraphs`` -> (``_warmup_and_capture`` ->) the capturing ``_dummy_run``."""
    text = (ctx.sp / GMR).read_text()
    if "def _warmup_and_capture(" in text:
        return [
            (GMR, "GPUModelRunner._capture_cudagraphs", "self._warmup_and_capture("),
            (GMR, "GPUModelRunner._warmup_and_capture", "self._dummy_run(", "", "-1"),
        ]
    needle = "dummy_run(" if "dummy_run = functools.partial(" in text else "self._dummy_run("
    return [(GMR, "GPUModelRunner._capture_cudagraphs", needle, "", "-1")]


def capture_oom(ctx: Ctx, doc: Doc, lines: list[str]) -> str:
    """V1 runner: CUDA-graph capture after the KV cache is allocated runs out of memory."""
    head_until(doc, ctx, lines, stop_at("EngineCore failed to start"), loading=True)
    for i, line in enumerate(doc.lines):
        if "non-default args:" in line and "'kv_cache_memory_bytes'" in line:
            doc.lines[i] = re.sub(r", 'kv_cache_memory_bytes': \d+", "", line)
            doc.built.append(
                {
                    "line": i + 1,
                    "source": f"frame line {i + 1}",
                    "template": "frame record with 'kv_cache_memory_bytes' removed "
                    "(the GPU run sizes the KV cache by profiling)",
                }
            )
    if not any("torch.compile t" in x or "AOT compiled" in x for x in doc.lines):
        compile_lines(doc, ctx)
    optional_rec(
        doc,
        ctx,
        "INFO",
        GMR,
        "Profiling CUDA graph memory",
        "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)",
    )
    optional_rec(
        doc,
        ctx,
        "INFO",
        GMR,
        "Estimated CUDA graph memory: %.2f GiB total",
        "Estimated CUDA graph memory: 0.43 GiB total",
    )
    # Bytes per token: layers x KV heads x head_dim x 2 (K and V) x 2 (bf16).
    if ctx.model == "llama-3.2-1b-shape":  # 16 x 8 x 64 x 4 = 32768 B/token
        avail, tokens, maxlen, conc = "16.92", "554,432", "131,072", "4.23"
    else:  # SmolLM2-135M shape: 30 x 3 x 64 x 4 = 23040 B/token
        avail, tokens, maxlen, conc = "18.64", "868,672", "8,192", "106.04"
    rec(
        doc, ctx, "INFO", GW, "Available KV cache memory", f"Available KV cache memory: {avail} GiB"
    )
    optional_rec(
        doc,
        ctx,
        "INFO",
        GW,
        "CUDA graph memory profiling is enabled (default since",
        "CUDA graph memory profiling is enabled (default since v0.21.0). The current "
        "--gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.9005 "
        "without CUDA graph memory profiling. To maintain the same effective KV cache size as "
        "before, increase --gpu-memory-utilization to 0.9395. To disable, set "
        "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
    )
    kv_size_lines(doc, ctx, tokens, maxlen, conc)
    bar1 = "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE)"
    bar2 = "Capturing CUDA graphs (decode, FULL)"
    tqdm = (
        f"\r{bar1}:   0%|          | 0/51 [00:00<?, ?it/s]"
        f"\r{bar1}:  24%|██▎       | 12/51 [00:00<00:03, 11.62it/s]"
        f"\r{bar1}:  71%|███████   | 36/51 [00:02<00:01, 13.40it/s]"
        f"\r{bar1}: 100%|██████████| 51/51 [00:03<00:00, 13.71it/s]"
        f"\r{bar1}: 100%|██████████| 51/51 [00:03<00:00, 13.52it/s]\n"
    )
    doc.add(
        ctx.raw_tag + tqdm,
        f"{GMR} GPUModelRunner._capture_cudagraphs (tqdm on stderr)",
        "tqdm(desc='Capturing CUDA graphs ({}, {})'.format('mixed prefill-decode', "
        "'PIECEWISE')), completed",
    )
    partial = (
        f"\r{bar2}:   0%|          | 0/35 [00:00<?, ?it/s]"
        f"\r{bar2}:  34%|███▍      | 12/35 [00:00<00:01, 14.83it/s]"
        f"\r{bar2}:  57%|█████▋    | 20/35 [00:01<00:01, 14.21it/s]"
    )
    doc.add(
        ctx.raw_tag + partial + "\n",
        f"{GMR} GPUModelRunner._capture_cudagraphs",
        "tqdm(desc='Capturing CUDA graphs ({}, {})'.format('decode', 'FULL')), "
        "interrupted by the exception (the bar is never closed; a newline is added here)",
    )
    abs_text = (ctx.sp / ABS).read_text()
    if "def compile_or_warm_up_model" in abs_text:
        to_worker: list[tuple[str, ...]] = [
            (
                CORE,
                "EngineCore._initialize_kv_caches",
                "self.model_executor.compile_or_warm_up_model(",
            ),
            *executor_rpc(ctx, "compile_or_warm_up_model"),
        ]
    else:
        to_worker = [
            (
                CORE,
                "EngineCore._initialize_kv_caches",
                "self.model_executor.initialize_from_config(",
            ),
            (
                ABS,
                "Executor.initialize_from_config",
                "self.collective_rpc(",
                "compile_or_warm_up_model",
            ),
            (UNI, "UniProcExecutor.collective_rpc", "run_method("),
            (run_method_file(ctx), "run_method", "func("),
        ]
    outer = frames_for(
        ctx,
        [
            *TO_KV_INIT,
            *to_worker,
            (GW, "Worker.compile_or_warm_up_model", "self.model_runner.capture_model("),
            (GMR, "GPUModelRunner.capture_model", "self._capture_cudagraphs("),
            *capture_loop(ctx),
            (GMR, "GPUModelRunner._dummy_run", "self.model("),
            (
                "vllm/compilation/cuda_graph.py",
                "CUDAGraphWrapper.__call__",
                "self.runnable(",
                "",
                "-1",
            ),
            MOD_WRAP,
            MOD_CALL,
            (LLAMA, "LlamaForCausalLM.forward", "self.model("),
            (
                "vllm/compilation/decorators.py",
                "_support_torch_compile.__call__",
                "self.aot_compiled_fn(",
            ),
        ],
    )
    exc = oom_exc(
        alloc="20.00 MiB",
        total="22.05 GiB",
        free="13.12 MiB",
        mine="22.03 GiB",
        by_torch="21.41 GiB",
        reserved="94.56 MiB",
        pools="412.00 MiB",
    )
    fail_engine(doc, ctx, lines, outer, exc)
    return (
        "CUDA-graph capture OOM (V1 model runner): the KV cache was sized with too little "
        "headroom and the FULL decode capture runs out of memory at graph 21 of 35. The "
        "frames below the compiled model's __call__ (Dynamo/Inductor and the piecewise "
        "backend) are omitted: they depend on the compile cache and are not built here."
    )


def weight_oom_v1(ctx: Ctx, doc: Doc, lines: list[str]) -> str:
    """V1 runner (0.13+): load_model logs 'Failed to load model - not enough GPU memory' and
    re-raises the torch OOM."""
    head_until(doc, ctx, lines, stop_at("Starting to load model"))
    rec(
        doc,
        ctx,
        "INFO",
        GMR,
        "Starting to load model",
        "Starting to load model <models>/llama-3.2-1b-shape...",
    )
    err = frame(ctx.sp, GMR, "GPUModelRunner.load_model", "logger.error(")
    src = (ctx.sp / GMR).read_text()
    m = re.search(r'msg = \(\s*((?:"[^"]*"\s*)+)\)', src[src.index("Failed to load model") - 200 :])
    assert m, "wrapper message not found"
    msg = "".join(re.findall(r'"([^"]*)"', m.group(1)))
    oom = oom_text(
        alloc="501.00 MiB",
        total="22.05 GiB",
        free="309.12 MiB",
        mine="282.00 MiB",
        by_torch="0 bytes",
        reserved="0 bytes",
        others=[(2211, "21.45 GiB")],
    )
    site = LogSite(GMR, err.lineno, 'f"{msg} (original error: {e})" with msg = ' + repr(msg))
    emit_record(doc, ctx.engine_tag, "ERROR", ctx.ts, site, [f"{msg} (original error: {oom})"], "")
    outer_specs: list[tuple[str, ...]] = [
        *ENGINE_INIT,
        (CORE, "EngineCore.__init__", "executor_class("),
        (ABS, "Executor.__init__", "self._init_executor("),
        (UNI, "UniProcExecutor._init_executor", "self.driver_worker.load_model("),
        (GW, "Worker.load_model", "self.model_runner.load_model("),
    ]
    reraise = frame(ctx.sp, GMR, "GPUModelRunner.load_model", "raise e")
    inner = frames_for(
        ctx,
        [
            *outer_specs,
            (GMR, "GPUModelRunner.load_model", "model_loader.load_model("),
            *model_init_chain(ctx),
        ],
    )
    # The re-raise entry belongs to load_model's own frame: it comes after the decorator's
    # frame and before load_model's original entry, as CPython prints a re-raised exception.
    at = next(k for k, f in enumerate(inner) if f.rel == GMR and f.func == "load_model")
    inner.insert(at, reraise)
    fail_engine(doc, ctx, lines, inner, "torch.OutOfMemoryError: " + oom)
    return (
        "GPU weight-load OOM under the V1 model runner: another process holds 21.45 GiB of a "
        "22.05 GiB card, so the 501 MiB embedding of the Llama-3.2-1B shape does not fit. "
        "The V1 runner (0.13+) logs 'Failed to load model - not enough GPU memory ... "
        "(original error: ...)' and re-raises the torch OOM (`raise e`)."
    )


RECIPES: tuple[Recipe, ...] = (
    Recipe("0.32.0", "weight_load_oom", "llama1b-weights-v2", "llama1b-kvspace1", weight_oom_v2),
    Recipe("0.32.0", "insufficient_free_memory", "gpu-busy-card", "llama1b-kvspace1", free_memory),
    Recipe(
        "0.32.0", "kv_cache_shortfall", "llama1b-6gib-card", "llama1b-kvspace1", kv_shortfall_gpu
    ),
    Recipe("0.32.0", "no_kv_cache_memory", "llama1b-4gib-card", "llama1b-kvspace1", no_kv_gpu),
    Recipe("0.32.0", "profiling_oom", "llama1b-sampler-v1", "llama1b-kvspace1", sampler_oom),
    Recipe(
        "0.32.0",
        "cuda_graph_capture_oom",
        "smollm135m-capture-v1",
        "smollm135m-compiled-kvbytes",
        capture_oom,
    ),
    Recipe("0.27.1", "weight_load_oom", "llama1b-weights-v2", "llama1b-kvspace1", weight_oom_v2),
    Recipe("0.27.1", "no_kv_cache_memory", "llama1b-4gib-card", "llama1b-kvspace1", no_kv_gpu),
    Recipe("0.22.0", "weight_load_oom", "llama1b-weights-v1", "llama1b-kvspace1", weight_oom_v1),
    Recipe("0.22.0", "profiling_oom", "llama1b-sampler", "llama1b-kvspace1", sampler_oom),
    Recipe(
        "0.22.0",
        "cuda_graph_capture_oom",
        "smollm135m-capture",
        "smollm135m-compiled-kvbytes",
        capture_oom,
    ),
    Recipe("0.22.0", "insufficient_free_memory", "gpu-busy-card", "llama1b-kvspace1", free_memory),
    Recipe("0.17.0", "weight_load_oom", "llama1b-weights-v1", "llama1b-kvspace1", weight_oom_v1),
    Recipe("0.17.0", "profiling_oom", "llama1b-sampler", "llama1b-kvspace1", sampler_oom),
    Recipe(
        "0.17.0",
        "cuda_graph_capture_oom",
        "llama1b-capture",
        "llama1b-compiled-kvspace1",
        capture_oom,
    ),
    Recipe("0.17.0", "insufficient_free_memory", "gpu-busy-card", "llama1b-kvspace1", free_memory),
    Recipe(
        "0.17.0", "kv_cache_shortfall", "llama1b-6gib-card", "llama1b-kvspace1", kv_shortfall_gpu
    ),
)

ENV_FOR = {
    ("0.32.0", "profiling_oom"): {"VLLM_USE_V2_MODEL_RUNNER": "0"},
    ("0.32.0", "cuda_graph_capture_oom"): {"VLLM_USE_V2_MODEL_RUNNER": "0"},
}


def find_frame(version: str, scenario: str) -> Path | None:
    """The captured CPU log of that scenario (whatever its outcome prefix)."""
    hits = sorted((CORPUS / version).glob(f"*__{scenario}__cpu.log"))
    return hits[0] if hits else None


def make_ctx(version: str, sp: Path, lines: Sequence[str]) -> Ctx:
    """Process facts of the frame: EngineCore's tag, the raw-stderr tag, the failure time."""
    fail = next(line for line in lines if "EngineCore failed to start" in line)
    m = RECORD.match(fail)
    assert m and m["tag"], fail
    raw = next(line for line in lines if "Process EngineCore" in line and not RECORD.match(line))
    raw_tag = raw[: raw.index("Process EngineCore")]
    model = re.search(r"<models>/([\w.-]+)", "".join(lines))
    return Ctx(version, sp, m["tag"], raw_tag, m["ts"], model[1] if model else "")


def build(recipe: Recipe, env_root: Path) -> Path | None:
    """Write one reconstruction; skip if its log exists or its frame is missing."""
    stem = f"{recipe.outcome}__{recipe.scenario}__cuda"
    out_log = CORPUS / recipe.version / f"{stem}.log"
    if out_log.exists():
        return None
    frame_path = find_frame(recipe.version, recipe.frame)
    if frame_path is None:
        print(f"skip {recipe.version} {stem}: frame {recipe.frame} not captured", file=sys.stderr)
        return None
    sp = next((env_root / f"v{recipe.version}").glob("lib/python3.*/site-packages"))
    data = frame_path.read_bytes()
    lines = data.decode("utf-8").splitlines(keepends=True)
    ctx = make_ctx(recipe.version, sp, lines)
    doc = Doc()
    notes = recipe.build(ctx, doc, lines)
    env = ENV_FOR.get((recipe.version, recipe.outcome))
    if env:
        notes += f" Assumed environment: {env} (forces the V1 model runner on 0.32)."
    notes += (
        " Device assumed: one 22.05 GiB CUDA card, uniproc executor (TP=1); CPU-only "
        "lines of the frame (OpenMP binding, NUMA, CPU worker, LD_PRELOAD hints, the "
        "multiprocessing executor's worker records) are dropped; the worker's records "
        "carry the EngineCore tag. Numbers are plausible, not measured."
    )
    text = "".join(doc.lines)
    leak = re.search(r"(?<![\w.<>-])/(?:tmp|root|home|work)/", text)
    assert leak is None, leak
    out = text.encode("utf-8")
    out_log.write_bytes(out)
    rel_frame = f"{recipe.version}/{frame_path.name}"
    label = {
        "log": out_log.name,
        "log_sha256": hashlib.sha256(out).hexdigest(),
        "vllm_version": recipe.version,
        "device": "cuda",
        "provenance": {
            "kind": "reconstructed",
            "frame": rel_frame,
            "frame_sha256": hashlib.sha256(data).hexdigest(),
            "built_lines": doc.built,
            "notes": notes,
        },
        "expected": {"kind": recipe.outcome},
        "reviewed": False,
    }
    out_log.with_suffix(".json").write_text(
        json.dumps(label, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return out_log


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    ap = argparse.ArgumentParser(description="Reconstruct GPU-only failures on CPU frames.")
    ap.add_argument("--version", action="append", default=[])
    ap.add_argument(
        "--env-root",
        type=Path,
        default=Path(
            os.environ.get("VLLM_BOOTDIAG_ENV_ROOT", Path.home() / ".cache" / "vllm-bootdiag")
        ),
        help="where the vLLM environments and model directories live (outside the repository;"
        " default $VLLM_BOOTDIAG_ENV_ROOT or ~/.cache/vllm-bootdiag)",
    )
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    for recipe in RECIPES:
        if args.version and recipe.version not in args.version:
            continue
        if args.list:
            print(f"{recipe.version:8} {recipe.outcome:26} {recipe.scenario:28} on {recipe.frame}")
            continue
        path = build(recipe, args.env_root)
        if path:
            print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
