"""The remediation planner: outcome + launch config + policy -> the next launch or a give-up.

policy.py        Policy, read from a worker's env (Policy.from_env)
results.py       Relaunch, GiveUp, Attempt, Degradation, Change
memory.py        what a launch asks of memory per release; configs ordered by memory
degradations.py  what a relaunch serves worse, with numbers
context.py       the context a handler reads, the step it proposes, memory advice
releases.py      what each vLLM release has and defaults to (file:line per release)
graphs.py        CUDA-graph memory as the KV check saw it, per release and env
seqs_steps.py    fewer seqs: max_num_seqs down to the worker's concurrency
graph_steps.py   graphs kept but fewer (capture size, PIECEWISE), then eager mode
kv_steps.py      KV-cache shortfalls: the steps in order of cost, a context cut
oom_steps.py     graph-capture, profiling, free-memory and weight OOMs
utilization_steps.py  more of the card: auto-fit, the CPU reservation
fitted.py        a boot auto-fitted below the policy's minimum context
other_steps.py   config/access give-ups, one plain restart
budget.py        launches and boot seconds
next_launch.py   plan(): handlers, vetting, the budget
"""

from .degradations import EAGER_MESSAGE, degradations
from .memory import (
    DEFAULT_MAX_NUM_SEQS,
    effective_capture_max,
    effective_gpu_memory_utilization,
    effective_max_num_seqs,
    memory_dimensions,
    needs_less_memory,
    recommend_defaults,
    seqs_for,
)
from .next_launch import HANDLERS, plan
from .policy import FALLBACK_MAX_NUM_SEQS, POLICY_ENV_NAMES, Policy, PolicyError
from .results import (
    Attempt,
    Change,
    Degradation,
    DegradationKind,
    GiveUp,
    NothingToPlan,
    Plan,
    Relaunch,
)

__all__ = [
    "DEFAULT_MAX_NUM_SEQS",
    "EAGER_MESSAGE",
    "FALLBACK_MAX_NUM_SEQS",
    "HANDLERS",
    "POLICY_ENV_NAMES",
    "Attempt",
    "Change",
    "Degradation",
    "DegradationKind",
    "GiveUp",
    "NothingToPlan",
    "Plan",
    "Policy",
    "PolicyError",
    "Relaunch",
    "degradations",
    "effective_capture_max",
    "effective_gpu_memory_utilization",
    "effective_max_num_seqs",
    "memory_dimensions",
    "needs_less_memory",
    "plan",
    "recommend_defaults",
    "seqs_for",
]
