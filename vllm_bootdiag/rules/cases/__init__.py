"""Per-rule case tables: `rules/cases/<ID>.json`, one named case per example line.

Each case is a line (a rule's example, or a damaged copy of it: quoted in a
markdown reply, behind a container runtime's timestamp), the release it is read
as, and what classification must give: the kind, the rule, the tier and every
number. The tables are generated from the rules (`python -m
vllm_bootdiag.rules.cases --write`) and reviewed as a diff, as sqlfluff's
fixtures are; the tests run every case with the rule's id in the test id, so
`pytest -k KV004` runs one rule's cases.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..schema import Rule

HERE = Path(__file__).resolve().parent

DAMAGES: tuple[tuple[str, str], ...] = (
    ("quoted", "> {}"),
    ("docker-timestamp", "2026-11-29T16:20:31.123456789Z {}"),
)
"""Damage applied to each example: what a paste or a log collector does to a line."""


def _version(rule: Rule) -> str | None:
    """The lowest bound of a rule's range, so its cases are read inside it."""
    for part in rule.vllm.split(","):
        part = part.strip()
        if part.startswith(">="):
            return part[2:]
    return None


def _expected(line: str, version: str | None, rule: Rule) -> dict[str, Any]:
    from ... import classify

    d = classify([line], version=version)
    if rule.role == "echo":
        # An echo alone is an unknown that ends on it (when it reads as an error),
        # with the echo's remediation: never an outcome of its own.
        return {
            "echo": True,
            "kind": d.primary.kind,
            "failed": d.failed,
            "last_error_line": getattr(d.primary, "last_error_line", None),
            "remediation": d.remediation,
        }
    match = next((m for m in d.matches if m.rule_id == rule.id), None)
    if match is None:
        return {"matches": False}
    numbers = {
        k: v
        for k, v in match.model_dump(mode="json", exclude={"kind", "rule_id", "evidence"}).items()
        if v not in (None, [], ()) and k not in ("category", "retry_same_config_can_succeed")
    }
    return {"kind": match.kind, "rule_id": rule.id, "tier": rule.tier, "numbers": numbers}


def build(rule: Rule) -> dict[str, Any]:
    """The case table of one rule, as classification reads its examples today."""
    version = _version(rule)
    cases = []
    for n, ex in enumerate(rule.examples):
        cases.append(
            {
                "name": f"example-{n}",
                "line": ex,
                "vllm": version,
                "expected": _expected(ex, version, rule),
            }
        )
        for dname, fmt in DAMAGES:
            line = fmt.format(ex)
            cases.append(
                {
                    "name": f"example-{n}-{dname}",
                    "line": line,
                    "vllm": version,
                    "expected": _expected(line, version, rule),
                }
            )
    for n, ex in enumerate(rule.counter_examples):
        cases.append(
            {"name": f"counter-{n}", "line": ex, "vllm": version, "expected": {"matches": False}}
        )
    return {"rule": rule.id, "name": rule.name, "outcome": rule.outcome, "cases": cases}


def path(rule_id: str) -> Path:
    return HERE / f"{rule_id}.json"


def load(rule_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path(rule_id).read_text(encoding="utf-8"))
    return data


def dumps(table: dict[str, Any]) -> str:
    return json.dumps(table, indent=2, ensure_ascii=False) + "\n"
