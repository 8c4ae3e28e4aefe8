"""The Rule model: one vLLM message, in one version range, as data.

Every rule is checked: its range parses and its fields fit its outcome when it is
built, and `verify()` compiles its patterns, checks that their named groups are
fields of its outcome, that its literal is in every example, that every example
matches and no counter-example does. A rule built in code or read from a user file
is verified at once; the built-in table is built inside `deferred_checks()` (taken as
written: no validator is built, and its patterns compile on first use) and validated and
verified by the test suite instead, so that the first classification does not build a
validator, compile and run a hundred rules' examples.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cached_property
from typing import Any, Literal

import regex
from packaging.version import Version
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .. import outcomes, versions

Status = Literal["preview", "active", "retired"]
"""Lifecycle, as ruff keeps it: `preview` (no real log shows it yet: it matches, but
is not promoted until a corpus log does), `active`, `retired` (kept for its id and
history, never matched)."""

Tier = Literal["exact", "tolerant"]
"""`exact`: one wording in one range, every number read. `tolerant`: the message's
core, for cut, wrapped or reworded text; it never beats an exact match."""

Role = Literal["cause", "echo"]
"""`cause`: the line says what went wrong. `echo`: a line that repeats or points at a
cause printed above it (`See root cause above.`); it ranks below every cause and
never stands in for one."""

PrintedBy = Literal[
    "vllm",
    "pytorch",
    "huggingface_hub",
    "transformers",
    "safetensors",
    "uvicorn",
    "argparse",
    "pydantic",
    "python",
    "os",
    "platform",
]
"""Who formats the message: only vLLM's own wording can be checked against vLLM's source.
`platform`: a serving platform's or launcher's own line (a user's `--rules FILE`), in no
package's source, so scan-source lists it as not checkable rather than as vLLM drift."""

Attribution = Literal["none", "cuda_oom_phase"]
"""`cuda_oom_phase`: the outcome kind is decided by where the OOM happened
(weight load, profiling, graph capture), read from traceback frames and the last
boot-phase line; the rule's own outcome is the fallback."""


class Rule(BaseModel):
    """A vLLM message in one version range and the outcome it means."""

    # defer_build: the built-in table is built without validating (see `deferred_checks`),
    # so the validator is built only for a rule that is validated (a user's rule file).
    model_config = ConfigDict(
        frozen=True, extra="forbid", ignored_types=(cached_property,), defer_build=True
    )

    id: str = Field(pattern=r"^[A-Z]{2,4}\d{3}$")
    name: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    vllm: str = ""
    """PEP 440 range of the releases that print this wording; empty means all."""
    outcome: str
    literal: str = Field(min_length=4)
    """A substring every matching line contains: a cheap test before any regex."""
    patterns: tuple[str, ...] = Field(min_length=1)
    examples: tuple[str, ...] = Field(min_length=1)
    counter_examples: tuple[str, ...] = ()
    summary: str
    remediation: str
    references: tuple[str, ...] = ()
    status: Status = "active"
    tier: Tier = "exact"
    covers: tuple[str, ...] = ()
    """Ids of the exact rules a tolerant rule backs up: when one of them matched, this
    rule's match is dropped."""
    role: Role = "cause"
    printed_by: PrintedBy = "vllm"
    source_pattern: str | None = None
    """A regex for vLLM's own format string of this wording (f-string fields rendered
    `{}` or `{:spec}`), checked by `vllm-bootdiag scan-source`; the literal by default."""
    attribution: Attribution = "none"
    terminal: bool = True
    """A terminal line ends the boot: a BootWatcher reports it at once."""
    reports: bool = True
    """False for a warning that usually precedes the failure but may not (torch's GPU
    capability warning: PTX can still JIT): it names the cause in a diagnosis, but a
    BootWatcher never reports on it alone, so a boot that goes on is not stopped."""
    unless: tuple[str, ...] = ()
    """Literals whose presence anywhere in the tail's failure lines voids a match
    (for a message that means something only when nothing else was printed)."""
    rank: int | None = None
    """Overrides the outcome's root-cause precedence (an echo ranks lower)."""
    constants: tuple[tuple[str, str], ...] = ()
    """(outcome field, value) pairs the wording implies but does not print: the flag
    behind a config field (`--kv-cache-dtype` for `cache_dtype`), the device a library
    names. A named group of the same field overrides the constant."""
    remediations: tuple[tuple[str, str], ...] = ()
    """(outcome kind, remediation) for an attributed rule whose kind is decided from
    context (`attribution`): the remedy for the phase found, `remediation` otherwise."""

    def __init__(self, /, **data: Any) -> None:
        if not _DEFERRING.get():
            super().__init__(**data)
            return
        # Inside `deferred_checks()`: the fields as written, not validated (the test suite
        # validates and verifies every built-in rule, and that a validated build of its
        # data is the same rule). `model_construct` fills the defaults.
        built = type(self).model_construct(**data)
        for name in _STATE:
            object.__setattr__(self, name, getattr(built, name))

    def remediation_for(self, kind: str) -> str:
        """The remediation for the outcome kind this rule's match became."""
        for k, text in self.remediations:
            if k == kind:
                return text
        return self.remediation

    @field_validator("outcome")
    @classmethod
    def _known_outcome(cls, v: str) -> str:
        if v not in outcomes.OUTCOME_TYPES:
            raise ValueError(f"unknown outcome kind {v!r}")
        return v

    @field_validator("vllm")
    @classmethod
    def _valid_range(cls, v: str) -> str:
        if v:
            versions.specifier(v)
        return v

    @cached_property
    def compiled(self) -> tuple[regex.Pattern[str], ...]:
        return tuple(regex.compile(p) for p in self.patterns)

    @model_validator(mode="after")
    def _check(self) -> Rule:
        if self.covers and self.tier != "tolerant":
            raise ValueError(
                f"{self.id}: field 'covers': only a tolerant rule covers exact siblings"
            )
        fields = outcomes.field_names(self.outcome)
        bad = {k for k, _ in self.constants} - fields
        if bad:
            raise ValueError(
                f"{self.id}: field 'constants': {sorted(bad)} are not {self.outcome} fields"
            )
        bad = {k for k, _ in self.remediations} - set(outcomes.OUTCOME_TYPES)
        if bad:
            raise ValueError(f"{self.id}: field 'remediations': unknown kinds {sorted(bad)}")
        if not _DEFERRING.get():
            self.verify()
        return self

    def verify(self) -> None:
        """The checks that compile and run: patterns compile and their groups are outcome
        fields, the source pattern compiles, the literal is in every example, every
        example matches, no counter-example does. Raises ValueError naming the field."""
        fields = outcomes.field_names(self.outcome)
        for p in self.patterns:
            try:
                compiled = regex.compile(p)
            except regex.error as e:
                raise ValueError(f"{self.id}: field 'patterns': does not compile: {e}") from None
            unknown = set(compiled.groupindex) - fields
            if unknown:
                raise ValueError(
                    f"{self.id}: field 'patterns': groups {sorted(unknown)} "
                    f"are not {self.outcome} fields"
                )
        if self.source_pattern is not None:
            try:
                regex.compile(self.source_pattern)
            except regex.error as e:
                raise ValueError(
                    f"{self.id}: field 'source_pattern': does not compile: {e}"
                ) from None
        for ex in self.examples:
            if self.literal not in ex:
                raise ValueError(
                    f"{self.id}: field 'literal': {self.literal!r} not in example {ex!r}"
                )
            if self.match(ex) is None:
                raise ValueError(f"{self.id}: field 'examples': does not match: {ex!r}")
        for ex in self.counter_examples:
            if self.match(ex) is not None:
                raise ValueError(f"{self.id}: field 'counter_examples': matches: {ex!r}")

    def match(self, message: str) -> dict[str, str] | None:
        """The named groups of the first pattern that matches (over the rule's
        constants), or None."""
        if self.literal not in message:
            return None
        for pattern in self.compiled:
            m = pattern.search(message)
            if m:
                if not pattern.groupindex:  # no named group: nothing to read (a third of them)
                    return dict(self.constants)
                groups = {k: v for k, v in m.groupdict().items() if v is not None}
                return {**dict(self.constants), **groups} if self.constants else groups
        return None

    def applies_to(self, version: Version | None) -> bool:
        """Not retired, and within range (an unknown version is in every range)."""
        return self.status != "retired" and versions.in_range(version, self.vllm)

    @property
    def precedence(self) -> tuple[bool, int, bool]:
        """Root-cause order of this rule's outcomes: a cause beats an echo, then the rank
        (the rule's, else its kind's), then an exact match beats a tolerant one. A
        tolerant rule never beats its own exact siblings (it does not read their line and
        stands down when one it `covers` matched), but a damaged root cause still beats
        an exact consequence of it (`Worker proc ... died unexpectedly`)."""
        rank = self.rank if self.rank is not None else outcomes.OUTCOME_TYPES[self.outcome].RANK
        return (self.role == "cause", rank, self.tier == "exact")


_STATE = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
"""What `model_construct` sets on a model: a trusted `Rule(...)` takes it from there."""

_DEFERRING: ContextVar[bool] = ContextVar("deferring_rule_checks", default=False)
"""True inside `deferred_checks()` (per thread: a rule another thread builds is verified)."""


@contextmanager
def deferred_checks() -> Iterator[None]:
    """Build rules without checking them: for the built-in table at import, which the test
    suite validates and verifies rule by rule (tests/test_rule_examples.py). `Rule(...)`
    takes its fields as written (no validator is built: 133 rules cost what a dict does);
    `Rule.model_validate` still validates the fields and skips only `verify()`."""
    token = _DEFERRING.set(True)
    try:
        yield
    finally:
        _DEFERRING.reset(token)
