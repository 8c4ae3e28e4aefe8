"""The engine: one matcher (match.py), the diagnosis (diagnose.py), the watcher.

`classify` and `classify_file` live in `pipeline.py` (read -> normalize -> boots
-> version -> match -> diagnose); they are reachable here as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .diagnose import MAX_EVIDENCE, diagnose
from .match import Hit, hits, line_rules
from .watcher import BootWatcher

if TYPE_CHECKING:
    from ..pipeline import classify, classify_file


def __getattr__(name: str) -> Any:
    """`engine.classify` and `engine.classify_file`, from the pipeline (imported late:
    the pipeline imports the engine)."""
    if name in ("classify", "classify_file"):
        from .. import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "MAX_EVIDENCE",
    "BootWatcher",
    "Hit",
    "classify",
    "classify_file",
    "diagnose",
    "hits",
    "line_rules",
]
