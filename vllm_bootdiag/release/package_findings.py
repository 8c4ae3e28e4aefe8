"""What scan-source found for the rules other packages print: parts, findings, text.

A rule's wording is one or more parts (other_packages.COMPOSED); each part is
checked against who prints it, and the parts vLLM supplies (flags, choices,
config classes, messages) against the vLLM release (vllm_parts.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .source_scan import Closest


@dataclass(frozen=True)
class Part:
    """One part of a rule's wording, checked against who prints it."""

    text: str
    printed_by: str
    what: str
    """wording | flag | choices | config class | message"""
    status: str
    """found | missing | out_of_date | not_checkable"""
    locations: tuple[str, ...] = ()
    closest: Closest | None = None
    detail: str | None = None
    source: str | None = None
    """The example or corpus line a vLLM part was read from."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "printed_by": self.printed_by,
            "what": self.what,
            "status": self.status,
            "locations": list(self.locations),
            "closest": self.closest.as_dict() if self.closest else None,
            "detail": self.detail,
            "source": self.source,
        }


@dataclass(frozen=True)
class Finding:
    """One rule another package prints, checked."""

    rule_id: str
    printed_by: str
    package: str | None
    parts: tuple[Part, ...]

    @property
    def status(self) -> str:
        """missing (a wording part gone) > out_of_date (a part vLLM supplies) > found (a
        wording part found) > not_checkable: a vLLM part found checks no package."""
        states = {p.status for p in self.parts}
        if "missing" in states or "out_of_date" in states:
            return "missing" if "missing" in states else "out_of_date"
        if any(p.status == "found" and p.what == "wording" for p in self.parts):
            return "found"
        return "not_checkable"

    @property
    def ok(self) -> bool:
        return self.status in ("found", "not_checkable")

    @property
    def reason(self) -> str | None:
        """Why nothing could be checked (the first part's reason)."""
        if self.status != "not_checkable":
            return None
        return next((p.detail for p in self.parts if p.status == "not_checkable"), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "printed_by": self.printed_by,
            "package": self.package,
            "status": self.status,
            "ok": self.ok,
            "reason": self.reason,
            "parts": [p.as_dict() for p in self.parts],
        }


def location(loc: str) -> str:
    """`file:0` (a compiled string has no line) as `file`."""
    return loc[:-2] if loc.endswith(":0") else loc
