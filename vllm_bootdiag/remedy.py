"""Remediation fitted to what the boot already did.

A rule's remediation is written for every boot its message can come from. Where the
log shows that a step it suggests was already taken, suggesting it again is a wrong
answer a worker may act on (relaunching an eager boot "with --enforce-eager" changes
nothing). Each fitting here removes such a step, keyed on a fact the log printed.
"""

from __future__ import annotations

import re

from .timeline import BootFacts

__all__ = ["fit", "was_eager"]

_EAGER_ARG = re.compile(r"""['"]enforce_eager['"]\s*:\s*True\b""")

_WITHOUT_EAGER: tuple[tuple[str, str], ...] = (
    # kv_cache_shortfall (rules/kv_cache_shortfall.py)
    ("then consider --enforce-eager, then ", "then "),
    # no_kv_cache_memory (rules/kv_cache_no_memory.py)
    ("free memory: --enforce-eager, a smaller ", "free memory: a smaller "),
    # cuda_graph_capture_oom, and the phase-less device OOM (rules/cuda_memory.py)
    (
        "(lower --max-num-seqs, or smaller cudagraph_capture_sizes in --compilation-config), "
        "or use --enforce-eager.",
        "(lower --max-num-seqs, or smaller cudagraph_capture_sizes in --compilation-config).",
    ),
    (
        "fewer capture sizes (--max-num-seqs) or --enforce-eager.",
        "fewer capture sizes (--max-num-seqs).",
    ),
)
_EAGER_NOTE = " (This boot was already eager: CUDA graphs were off.)"


def was_eager(facts: BootFacts) -> bool:
    """Whether the boot's `non-default args` show `enforce_eager: True`."""
    args = facts.non_default_args
    # the pattern's literal first: a substring test, where the search reads a long line
    return args is not None and "enforce_eager" in args and bool(_EAGER_ARG.search(args))


def fit(remediation: str, facts: BootFacts) -> str:
    """`remediation` without the steps `facts` show were already taken."""
    if "--enforce-eager" not in remediation or not was_eager(facts):
        return remediation
    for before, after in _WITHOUT_EAGER:
        remediation = remediation.replace(before, after)
    return remediation + _EAGER_NOTE
