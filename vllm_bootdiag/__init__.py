"""vllm_bootdiag: say what a `vllm serve` boot log shows, and what to launch next.

    from vllm_bootdiag import LaunchConfig, Policy, classify_file, plan
    d = classify_file("vllm.log")
    step = plan(d, LaunchConfig.from_argv(argv), Policy(max_concurrency=30))
"""

from . import outcomes
from .diagnosis import Diagnosis
from .engine import BootWatcher, classify, classify_file
from .launch import LaunchConfig, LaunchConfigError
from .logtail import LogReadError, read_tail
from .outcomes import Category, Outcome
from .planner import Attempt, Degradation, GiveUp, Policy, Relaunch, plan, recommend_defaults
from .supervisor import RunSummary, Supervisor

__all__ = [
    "Attempt",
    "BootWatcher",
    "Category",
    "Degradation",
    "Diagnosis",
    "GiveUp",
    "LaunchConfig",
    "LaunchConfigError",
    "LogReadError",
    "Outcome",
    "Policy",
    "Relaunch",
    "RunSummary",
    "Supervisor",
    "classify",
    "classify_file",
    "outcomes",
    "plan",
    "read_tail",
    "recommend_defaults",
]
