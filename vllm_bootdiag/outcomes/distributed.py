"""Distributed start-up outcomes: the workers could not form their process group.

NCCL failing to create a communicator, or a rendezvous store that timed out
waiting for its peers. On a single node this is almost always the environment
(shared memory, peer access, a firewalled port, a mismatched NCCL), which a
relaunch on the same machine does not change.
"""

from typing import Literal

from .base import Category, _Outcome


class DistributedInitFailed(_Outcome):
    """Workers could not set up communication with each other (NCCL, gloo, the store)."""

    CATEGORY = Category.ENVIRONMENT
    kind: Literal["distributed_init_failed"] = "distributed_init_failed"
    backend: str | None = None
    """`nccl`, `gloo` or `tcp_store` (torch's rendezvous store)."""
    detail: str | None = None
    """The library's own error text (`unhandled system error ...`, the timeout)."""
