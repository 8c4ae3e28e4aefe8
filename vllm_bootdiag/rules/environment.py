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
)
