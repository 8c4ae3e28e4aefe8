"""Model-file outcomes: the checkpoint is there but cannot be read or its class loaded.

A truncated or corrupt safetensors file, a config.json that is not JSON, or a
model class vLLM knows by name but could not import (the cause is printed
above it). Not the same as an architecture vLLM does not implement.
"""

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from ..text.wrappers import Lazy
from .base import Category, _Outcome

_NAME = Lazy(r"[A-Za-z_][\w.]*")


def _to_architecture(value: Any) -> Any:
    """ "['Qwen3ForCausalLM']" -> 'Qwen3ForCausalLM' (vLLM prints the config's list)."""
    if isinstance(value, str) and value.lstrip().startswith("["):
        return ", ".join(_NAME.findall(value)) or None
    return value


class ModelFilesUnreadable(_Outcome):
    """A model file exists but does not parse (safetensors header, config JSON)."""

    CATEGORY = Category.ACCESS
    kind: Literal["model_files_unreadable"] = "model_files_unreadable"
    path: str | None = None
    detail: str | None = None


class ArchitectureInspectionFailed(_Outcome):
    """vLLM supports the architecture but could not import its model class."""

    CATEGORY = Category.ENVIRONMENT
    kind: Literal["architecture_inspection_failed"] = "architecture_inspection_failed"
    architecture: Annotated[str | None, BeforeValidator(_to_architecture)] = None
