"""The answer for one boot log: its root cause, every other match, and context."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field

from .outcomes import Outcome
from .timeline import BootFacts


class Diagnosis(BaseModel):
    """What a boot log says: the primary outcome (the root cause) and the rest.

    `matches` holds every outcome found, in line order, the primary included.
    `version_out_of_range` is set when only rules outside the detected version's
    range matched: the answer is still given, but the table may need a rule.
    `match` says whether an exact or a tolerant rule gave the primary: a tolerant
    answer read damaged text and may lack numbers.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)
    primary: Outcome
    matches: tuple[Outcome, ...] = ()
    vllm_version: str | None = None
    version_source: str | None = None
    phase: str | None = None
    facts: BootFacts = BootFacts.model_construct()  # the defaults: no validator built
    lines_examined: int = 0
    version_out_of_range: bool = False
    remediation: str = ""
    match: Literal["exact", "tolerant"] | None = None
    """The tier of the rule behind the primary outcome (None: nothing matched)."""
    repairs: tuple[str, ...] = ()
    """Names of the normalization repairs that changed the input before matching."""
    vllm_output_found: bool = True
    """False when no line is vLLM's output (an empty file, another program's log, binary
    data): `primary` is then an `unknown` about the input, not about a boot."""
    boots_in_tail: int = 1
    """Boots the tail holds (a restart or an upgrade appended to one log): the last
    one is classified."""
    boot_start_line: int | None = None
    """The line the classified boot starts at, when the tail holds more than one."""
    notes: tuple[str, ...] = ()
    """What a reader should know about how the answer was reached (an earlier boot
    left out, a version hint the log contradicts)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def failed(self) -> bool:
        """True when the log shows a failure (not booted, not an empty unknown)."""
        return self.primary.is_failure

    def summary(self) -> str:
        """A short human report: the outcome, its numbers, the remediation."""
        lines = [self.primary.summary()]
        ver = self.vllm_version or "unknown"
        lines.append(
            f"vLLM {ver}; last phase: {self.phase or 'none'}; "
            f"category: {self.primary.category.value}; "
            f"restart on the same config can succeed: "
            f"{'yes' if self.primary.retry_same_config_can_succeed else 'no'}"
        )
        if self.primary.evidence:
            ev = self.primary.evidence[0]
            text = ev.text if len(ev.text) <= 200 else ev.text[:197] + "..."
            lines.append(f"line {ev.line}: {text}")
        lines.extend(f"note: {n}" for n in self.notes)
        if self.remediation:
            lines.append(f"next: {self.remediation}")
        return "\n".join(lines)
