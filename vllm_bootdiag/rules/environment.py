"""Environment fatals: the machine, not the launch config, is at fault."""

from __future__ import annotations

from .schema import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="EN001",
        printed_by="os",
        name="no-space-left-on-device",
        vllm="",
        outcome="disk_full",
        literal="No space left on device",
        patterns=(
            r"\[Errno 28\] No space left on device(?:: '(?P<path>[^']*)')?",
            r"No space left on device",
        ),
        examples=(
            "OSError: [Errno 28] No space left on device: "
            "'<cache>/huggingface/hub/models--Qwen--Qwen3-8B/blobs/abc.incomplete'",
            "RuntimeError: Data processing error: CAS service error : IO Error: No space left on "
            "device (os error 28)",
        ),
        summary="A disk filled up (model download, compile cache, or /dev/shm).",
        remediation="Free or enlarge the disk holding the hub cache and ~/.cache/vllm (or "
        "point HF_HOME / VLLM_CACHE_ROOT at a larger volume); then restart.",
        references=("errno 28 (ENOSPC)",),
    ),
    Rule(
        id="EN002",
        name="dev-shm-too-small",
        vllm=">=0.27,<0.31",
        outcome="disk_full",
        literal="Insufficient space in ",
        source_pattern=r"Insufficient space in \{\}: \{:\.0f\} MiB required",
        patterns=(r"Insufficient space in (?P<path>/\S+): \d+ MiB required, \d+ MiB free",),
        examples=(
            "RuntimeError: Insufficient space in /dev/shm: 1024 MiB required, 64 MiB free. "
            "Increase /dev/shm (e.g. --shm-size or --ipc=host).",
        ),
        counter_examples=(
            "RuntimeError: Insufficient space in /dev/shm for shm_broadcast: 1024 MiB required, "
            "64 MiB free. Increase /dev/shm (e.g. --shm-size or --ipc=host).",
        ),
        summary="/dev/shm is too small for vLLM's shared-memory message queue (Docker's 64 MiB "
        "default).",
        remediation="Give the container more shared memory: --shm-size 8g or --ipc=host.",
        references=("vllm/distributed/device_communicators/shm_broadcast.py:244 (0.27.0)",),
    ),
    Rule(
        id="EN003",
        name="dev-shm-too-small-named",
        vllm=">=0.31",
        outcome="disk_full",
        literal="Insufficient space in ",
        source_pattern=r"Insufficient space in \{\} for \{\}: \{:\.0f\} MiB required",
        patterns=(r"Insufficient space in (?P<path>/\S+) for \S+: \d+ MiB required, \d+ MiB free",),
        examples=(
            "RuntimeError: Insufficient space in /dev/shm for shm_broadcast: 1024 MiB required, "
            "64 MiB free. Increase /dev/shm (e.g. --shm-size or --ipc=host).",
        ),
        counter_examples=(
            "RuntimeError: Insufficient space in /dev/shm: 1024 MiB required, 64 MiB free. "
            "Increase /dev/shm (e.g. --shm-size or --ipc=host).",
        ),
        summary="/dev/shm is too small for vLLM's shared-memory buffers (Docker's 64 MiB default).",
        remediation="Give the container more shared memory: --shm-size 8g or --ipc=host.",
        references=("vllm/distributed/device_communicators/shm_broadcast.py:248 (0.31.0)",),
    ),
)
