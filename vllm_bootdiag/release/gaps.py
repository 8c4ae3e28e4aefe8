"""Messages of a release that no rule reads: the next rules to write, most likely first.

A gap is a `raise X(...)` or `logger.error/exception/warning(...)` template in
the boot path (engine core, workers, config, KV sizing, model loading,
platforms, process groups, entrypoints) that no rule's wording matches. A boot log that ends on
one classifies `unknown`, so each is ranked by how likely it is to end a boot:
where it is (a worker's memory check beats an API handler), how it is printed
(a raise beats a warning), in which function (`determine_available_memory`
beats `execute_model`), and what it says (a flag to change, memory, "not
supported"). With an older release, only templates it did not have are gaps: a
wording new to it, or one now raised from another function (0.33.0 moved the
kv_cache_dtype check from the attention selector into CacheConfig validation:
the same words, a new way for a boot to end). A file renamed with its functions
(kv_cache_utils.py to kv_cache_planning.py) brings no new gaps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..rules import RULES, Rule
from .source_scan import wording_pattern
from .sources import Release, Template

BOOT_PATH: tuple[tuple[str, int, str], ...] = (
    ("vllm/v1/worker/", 3, "worker"),
    ("vllm/worker/", 3, "worker"),
    ("vllm/v1/core/kv_cache", 3, "kv sizing"),
    ("vllm/v1/engine/core.py", 3, "engine core"),
    ("vllm/v1/engine/utils.py", 3, "engine core"),
    ("vllm/v1/executor/", 3, "engine core"),
    ("vllm/engine/arg_utils.py", 3, "config"),
    ("vllm/config/", 3, "config"),
    ("vllm/platforms/", 2, "platform"),
    ("vllm/model_executor/model_loader/", 2, "model loading"),
    ("vllm/model_executor/models/registry.py", 2, "model loading"),
    ("vllm/transformers_utils/config.py", 2, "model loading"),
    ("vllm/entrypoints/cli/", 2, "entrypoint"),
    ("vllm/entrypoints/common/", 2, "entrypoint"),
    ("vllm/entrypoints/utils.py", 2, "entrypoint"),
    ("vllm/entrypoints/openai/api_server.py", 2, "entrypoint"),
    ("vllm/distributed/parallel_state.py", 2, "distributed"),
    ("vllm/distributed/device_communicators/shm_broadcast.py", 2, "distributed"),
    ("vllm/distributed/utils.py", 2, "distributed"),
    ("vllm/v1/engine/", 1, "engine"),
    ("vllm/distributed/", 1, "distributed"),
    ("vllm/utils/", 1, "utils"),
)
"""(path prefix, weight, area): where a message can end a boot; first prefix wins."""

KIND_WEIGHT = {"raise": 3, "critical": 3, "exception": 2, "error": 2, "warning": 0}
"""Only these kinds can be gaps: an info or debug line does not end a boot."""

_SOFT_RAISES = frozenset({"NotImplementedError", "AssertionError", "KeyError", "StopIteration"})

_BOOT_FUNCTIONS = re.compile(
    r"^(?:__init__|__post_init__|_?init\w*|_?initialize\w*|_?verify\w*|_?validate\w*|_?check\w*"
    r"|determine_available_memory|_?load_model|load_weights|_?profile\w*|compile_or_warm_up\w*"
    r"|from_cli_args|create_engine_config|get_kv_cache_config\w*|_?get_and_verify\w*"
    r"|run_server\w*|build_async_engine_client\w*|setup_server|wait_for_engine_startup"
    r"|_?resolve\w*|_?try_\w+|inspect_model_cls|get_device\w*|check_and_update_config"
    r"|_?raise_for\w*|_?allocate\w*|_?reshape_kv\w*|_?capture\w*|_?warm\w*|main)$"
)
_RUNTIME_FUNCTIONS = re.compile(
    r"(?:execute_model|forward|step|generate|_process_\w*|add_request|abort\w*|sample\w*"
    r"|create_\w*completion|\w*request\w*|shutdown|__del__|__call__|_update_states|encode"
    r"|detokenize|\w*tool\w*|\w*stream\w*|serve_\w+|handle_\w+)$"
)
_CUES = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bGiB\b|\bmemory\b|out of memory",  # the most common way a boot ends
        r"\bincrease|\bdecrease|to resolve|\btry |please set|set \S+ explicitly",  # a remedy
        r"--[a-z]|\bVLLM_[A-Z]",  # names a flag or variable to change
        r"not supported|unsupported|requires?\b|cannot|insufficient|failed to|no module",
    )
)
"""Kinds of words a boot-ending message tends to hold; one point per kind present."""
_OPT_IN = re.compile(
    r"speculative|spec_decode|lora|mamba|engram|kv_transfer|eplb|structured_output|pooler"
    r"|reasoning|tool|multimodal|/mm_|sleep|elastic|offload"
)
"""Features a plain `vllm serve MODEL` does not turn on: their checks end fewer boots."""
_RUNTIME_WORDS = re.compile(r"\brequest|prompt|token id|sampling|tool call|stream", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Gap:
    """A boot-path message no rule matches, with its rank."""

    template: Template
    area: str
    score: int
    new: bool | None
    """With an older release: whether this template is new in it (None without one)."""

    @property
    def likelihood(self) -> str:
        """high / medium / low: how likely this message is to end a boot."""
        return "high" if self.score >= 10 else "medium" if self.score >= 7 else "low"

    def as_dict(self) -> dict[str, Any]:
        t = self.template
        return {
            "location": t.location,
            "area": self.area,
            "kind": t.kind,
            "exception": t.exception,
            "function": t.function,
            "template": t.text,
            "score": self.score,
            "likelihood": self.likelihood,
            "new": self.new,
        }


def area(file: str) -> tuple[int, str] | None:
    """(weight, area) of a file on the boot path, None off it."""
    for prefix, weight, name in BOOT_PATH:
        if file.startswith(prefix):
            return weight, name
    return None


def score(t: Template, weight: int) -> int:
    """How likely a boot-path message ends a boot (higher first); see the module doc."""
    s = weight + KIND_WEIGHT[t.kind]
    if t.kind == "raise" and t.exception in _SOFT_RAISES:
        s -= 1
    fn = t.function or ""
    if _BOOT_FUNCTIONS.match(fn):
        s += 2
    elif _RUNTIME_FUNCTIONS.search(fn):
        s -= 2
    s += sum(1 for cue in _CUES if cue.search(t.text))
    if _RUNTIME_WORDS.search(t.text):
        s -= 1
    if _OPT_IN.search(t.file) or _OPT_IN.search(fn):
        s -= 1
    return s


def _meaningful(text: str) -> bool:
    """At least three words of text besides the fields: `{}` alone reads nothing."""
    return len(re.findall(r"[A-Za-z]{2,}", re.sub(r"\{[^}]*\}", "", text))) >= 3


def covered(templates: Sequence[Template], rules: Iterable[Rule]) -> set[int]:
    """Indexes of templates some rule's wording (source pattern or literal) matches."""
    text = "\n".join(t.text for t in templates)
    starts, pos = [], 0
    for t in templates:
        starts.append(pos)
        pos += len(t.text) + 1
    from bisect import bisect_right

    hit: set[int] = set()
    for rule in rules:
        for pattern in {wording_pattern(rule), re.escape(rule.literal)}:
            for m in re.finditer(pattern, text, re.MULTILINE):
                hit.add(bisect_right(starts, m.start()) - 1)
    return hit


def find(release: Release, old: Release | None = None, rules: Sequence[Rule] = RULES) -> list[Gap]:
    """Boot-path messages no rule matches, most likely to end a boot first."""
    candidates: list[tuple[Template, int, str]] = []
    for t in release.templates:
        if t.kind not in KIND_WEIGHT or not _meaningful(t.text):
            continue
        where = area(t.file)
        if where is not None:
            candidates.append((t, *where))
    hit = covered([c[0] for c in candidates], rules)
    before = {(t.text, t.function) for t in old.templates} if old is not None else None
    gaps = [
        Gap(
            t,
            name,
            score(t, weight),
            None if before is None else (t.text, t.function) not in before,
        )
        for i, (t, weight, name) in enumerate(candidates)
        if i not in hit
    ]
    if before is not None:
        gaps = [g for g in gaps if g.new]
    gaps.sort(key=lambda g: (-g.score, g.template.file, g.template.line))
    return gaps
