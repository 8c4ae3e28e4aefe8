"""vllm_bootdiag: say what a `vllm serve` boot log shows, and what to launch next.

    from vllm_bootdiag import classify_file
    d = classify_file("vllm.log")
    d.primary.kind, d.primary.summary(), d.remediation
"""

from . import outcomes
from .diagnosis import Diagnosis
from .engine import BootWatcher, classify, classify_file
from .logtail import LogReadError, read_tail
from .outcomes import Category, Outcome

__all__ = [
    "BootWatcher",
    "Category",
    "Diagnosis",
    "LogReadError",
    "Outcome",
    "classify",
    "classify_file",
    "outcomes",
    "read_tail",
]
