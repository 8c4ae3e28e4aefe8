"""The `rules` command: list the rule table, or explain one rule."""

from __future__ import annotations

import argparse
from typing import Any

from .errors import UsageError
from .output import emit


def cmd_rules(args: argparse.Namespace) -> int:
    from .. import rules
    from ..outcomes import OUTCOME_TYPES

    if args.rule_id:
        rule = rules.BY_ID.get(args.rule_id.upper())
        if rule is None:
            raise UsageError(f"no rule {args.rule_id!r}; `vllm-bootdiag rules` lists them")
        text = "\n".join(
            [
                f"{rule.id} {rule.name} ({rule.status})",
                f"vLLM: {rule.vllm or 'all versions'}",
                f"outcome: {rule.outcome} ({OUTCOME_TYPES[rule.outcome].CATEGORY.value})",
                f"summary: {rule.summary}",
                f"remediation: {rule.remediation}",
                f"literal: {rule.literal}",
                *(f"pattern: {p}" for p in rule.patterns),
                *(f"example: {e}" for e in rule.examples),
                *(f"references: {r}" for r in rule.references),
            ]
        )
        emit(rule.model_dump(mode="json"), args.json, text)
        return 0
    listed = [r for r in rules.RULES if args.outcome in (None, r.outcome)]
    rows = [f"{r.id}  {r.vllm or 'all':<18} {r.outcome:<28} {r.name}" for r in listed]
    emit(
        [{"id": r.id, "name": r.name, "vllm": r.vllm, "outcome": r.outcome} for r in listed],
        args.json,
        "\n".join(rows),
    )
    return 0


def register(sub: Any) -> None:
    """Add `rules` to the subparsers."""
    r = sub.add_parser("rules", help="list the rules, or explain one")
    r.add_argument("rule_id", nargs="?", metavar="RULE", help="a rule id, e.g. KV004")
    r.add_argument("--outcome", help="only rules yielding this outcome kind")
    r.add_argument("--json", action="store_true", help="print JSON")
    r.set_defaults(func=cmd_rules)
