"""vllm_bootdiag: say what a `vllm serve` boot log shows, and what to launch next.

    from vllm_bootdiag import LaunchConfig, Policy, classify_file, plan
    d = classify_file("vllm.log")
    step = plan(d, LaunchConfig.from_argv(argv), Policy(max_concurrency=30))

Names are imported on first use (PEP 562): a worker that only classifies never
pays for the planner and the supervisor, and `import vllm_bootdiag` costs no rule table.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from . import outcomes
    from .diagnosis import Diagnosis
    from .engine import BootWatcher
    from .launch import LaunchConfig, LaunchConfigError
    from .logtail import LogReadError, read_tail
    from .outcomes import Category, Outcome
    from .pipeline import classify, classify_file
    from .planner import Attempt, Degradation, GiveUp, Policy, Relaunch, plan, recommend_defaults
    from .rules.ruleset import RuleFileError, RuleSet, load_rules
    from .supervisor import RunSummary, Supervisor

_WHERE: dict[str, str] = {
    "Attempt": "planner",
    "BootWatcher": "engine",
    "Category": "outcomes",
    "Degradation": "planner",
    "Diagnosis": "diagnosis",
    "GiveUp": "planner",
    "LaunchConfig": "launch",
    "LaunchConfigError": "launch",
    "LogReadError": "logtail",
    "Outcome": "outcomes",
    "Policy": "planner",
    "Relaunch": "planner",
    "RunSummary": "supervisor",
    "Supervisor": "supervisor",
    "RuleFileError": "rules.ruleset",
    "RuleSet": "rules.ruleset",
    "classify": "pipeline",
    "classify_file": "pipeline",
    "load_rules": "rules.ruleset",
    "plan": "planner",
    "read_tail": "logtail",
    "recommend_defaults": "planner",
}
"""Each public name and the module (relative to this package) that defines it."""

_SUBMODULES = frozenset({"outcomes"})

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
    "RuleFileError",
    "RuleSet",
    "RunSummary",
    "Supervisor",
    "__version__",
    "classify",
    "classify_file",
    "load_rules",
    "outcomes",
    "plan",
    "read_tail",
    "recommend_defaults",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use, then keep it as a plain module attribute."""
    if name in _SUBMODULES:
        value: Any = importlib.import_module(f".{name}", __name__)
    elif name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
