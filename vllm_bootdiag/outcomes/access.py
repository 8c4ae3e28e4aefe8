"""Access outcomes: the model cannot be fetched (wrong id, gated, no such revision).

The model's name is often printed only at the start of the boot, so each kind
takes it from the boot's facts when its own line lacks it (`CONTEXT`).
"""

from typing import Literal

from .base import Category, _Outcome


class _Access(_Outcome):
    CATEGORY = Category.ACCESS
    CONTEXT = (("model", "model"),)


class ModelNotFound(_Access):
    """No such model: a wrong id or path, or an offline hub with no cached copy."""

    kind: Literal["model_not_found"] = "model_not_found"
    model: str | None = None
    message: str | None = None


class GatedModel(_Access):
    """The model is gated or private and the token does not grant access."""

    kind: Literal["gated_model"] = "gated_model"
    model: str | None = None


class RevisionNotFound(_Access):
    """The requested revision (branch, tag, commit) does not exist."""

    kind: Literal["revision_not_found"] = "revision_not_found"
    revision: str | None = None
    model: str | None = None
