"""The corpus of real boot logs: labels, and checking the classifier against them.

`corpus/<version>/<outcome>__<scenario>__<device>.log` is what vLLM printed
(or, labelled `reconstructed`, a real frame with GPU lines built from vLLM's
format strings); the `.json` beside it says where it came from and what it
shows. `check` is what makes a new vLLM release routine: capture, run it, and
read what disagrees. A label's `expected.rule_id` names the rule that matched,
so a log is regression data for that rule (`pytest -k KV004`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import engine, logtail
from .outcomes import OUTCOME_TYPES

if TYPE_CHECKING:
    from .rules.ruleset import RuleSet


class CorpusError(Exception):
    """The corpus directory or a label cannot be read."""


class BuiltLine(BaseModel):
    """A line of a reconstructed log built from a vLLM format string."""

    line: int
    source: str
    template: str | None = None


class Provenance(BaseModel):
    """Where a log came from. Captured: the run; reconstructed: frame and built lines."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["captured", "reconstructed"]
    package: str | None = None
    package_version: str | None = None
    argv: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    exit_code: int | None = None
    duration_s: float | None = None
    date: str | None = None
    python: str | None = None
    frame: str | None = None
    built_lines: list[BuiltLine] = Field(default_factory=list)
    notes: str | None = None


class Label(BaseModel):
    """The `.json` beside a corpus log."""

    model_config = ConfigDict(extra="allow")
    log: str
    log_sha256: str
    vllm_version: str
    device: str
    provenance: Provenance
    expected: dict[str, Any]
    reviewed: bool = False


@dataclass(frozen=True)
class Entry:
    """A corpus log and its label."""

    id: str
    """`<version>/<rule_id>/<stem>`: the test id, so `pytest -k KV004` or
    `pytest -k 0.32.0/` selects (`unknown` where no rule matched)."""
    log_path: Path
    label_path: Path
    label: Label


@dataclass(frozen=True)
class Result:
    """One log checked against its label."""

    id: str
    ok: bool
    want: str
    got: str
    mismatches: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ok": self.ok,
            "want": self.want,
            "got": self.got,
            "mismatches": list(self.mismatches),
        }


def entries(root: str | Path = "corpus") -> list[Entry]:
    """Every labelled log under `root`, sorted by id.

    `root` is the corpus (`<version>/<stem>.json`) or one flat folder of labelled
    logs (a capture's `--out DIR`). A folder holding no labelled log at all is an
    error, not an empty corpus: a wrong path must not read as "0 of 0 logs agree".
    """
    base = Path(root)
    if not base.is_dir():
        raise CorpusError(f"no corpus directory at {base}")
    labels = sorted({*base.glob("*.json"), *base.glob("*/*.json")})
    out: list[Entry] = []
    for label_path in labels:
        log_path = label_path.with_suffix(".log")
        if not log_path.exists():
            continue
        try:
            label = Label.model_validate_json(label_path.read_bytes())
        except ValidationError as e:
            raise CorpusError(f"{label_path}: invalid label: {e.errors()[0]['msg']}") from None
        out.append(Entry(entry_id(label, label_path), log_path, label_path, label))
    if not out:
        logs = len({*base.glob("*.log"), *base.glob("*/*.log")})
        raise CorpusError(
            f"no labelled logs in {base} (a <stem>.log beside its <stem>.json, in the folder "
            f"or one level down); {logs} .log files without a label"
        )
    return sorted(out, key=lambda e: e.id)


def entry_id(label: Label, label_path: Path) -> str:
    """`<version>/<rule_id>/<stem>`, the rule read from the label."""
    rule = label.expected.get("rule_id") or "unknown"
    return f"{label.vllm_version}/{rule}/{label_path.stem}"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compare(expected: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Fields of `expected` that `got` (a primary outcome dump) does not equal."""
    bad: list[str] = []
    for key, want in expected.items():
        have = got.get(key)
        if isinstance(want, list):
            want = tuple(want)
            have = tuple(have) if isinstance(have, (list, tuple)) else have
        if have != want:
            bad.append(f"{key}: want {want!r}, got {have!r}")
    return bad


def check_entry(entry: Entry, rules: RuleSet | None = None) -> Result:
    """Classify one log (with no version hint: the log must say it) and compare.

    `rules` replaces the built-in table: a release's new rules, tried before they land.
    """
    d = engine.classify(logtail.read_tail(entry.log_path), rules=rules)
    got = d.primary.model_dump(mode="json", exclude={"evidence"})
    mismatches = compare(entry.label.expected, got)
    if entry.label.vllm_version and d.vllm_version not in (None, entry.label.vllm_version):
        mismatches.append(f"vllm_version: want {entry.label.vllm_version}, got {d.vllm_version}")
    return Result(
        entry.id,
        not mismatches,
        str(entry.label.expected.get("kind")),
        d.primary.summary(),
        tuple(mismatches),
    )


def expected_from(entry: Entry, rules: RuleSet | None = None) -> dict[str, Any]:
    """What the classifier says now, as a label's `expected` (numbers, no evidence)."""
    d = engine.classify(logtail.read_tail(entry.log_path), rules=rules)
    dump = d.primary.model_dump(
        mode="json",
        exclude={"evidence", "category", "retry_same_config_can_succeed"},
    )
    fields = OUTCOME_TYPES[d.primary.kind].model_fields
    head = {"kind": dump.get("kind"), "rule_id": dump.get("rule_id")}
    rest = {k: v for k, v in dump.items() if k in fields and k not in head}
    return {k: v for k, v in {**head, **rest}.items() if v is not None}


def check(
    root: str | Path = "corpus", write_expected: bool = False, rules: RuleSet | None = None
) -> list[Result]:
    """Check every log; with `write_expected`, fill in the numbers of labels.

    The writer never changes a label's `kind` (that is a person's call, made at
    capture); where the classifier agrees on the kind it writes the numbers it
    read and marks the label `reviewed: false` until a person has read them.
    Adding the `rule_id` that matched to a label that lacks one, all else equal,
    keeps its review: the rule table, not a person, says which rule that is.
    """
    results: list[Result] = []
    for entry in entries(root):
        result = check_entry(entry, rules)
        if write_expected:
            fresh = expected_from(entry, rules)
            old = entry.label.expected
            if fresh.get("kind") == old.get("kind") and fresh != old:
                raw = json.loads(entry.label_path.read_text())
                raw["expected"] = fresh
                only_rule_added = "rule_id" not in old and {
                    k: v for k, v in fresh.items() if k != "rule_id"
                } == old
                raw["reviewed"] = bool(raw.get("reviewed")) and only_rule_added
                entry.label_path.write_text(
                    json.dumps(raw, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
                )
                label = Label.model_validate(raw)
                new_id = entry_id(label, entry.label_path)
                result = check_entry(Entry(new_id, entry.log_path, entry.label_path, label), rules)
        results.append(result)
    return results
