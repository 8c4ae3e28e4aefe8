"""The `rules` command (list the rule table, or explain one rule) and `schema` (the JSON
Schema of the documents a worker reads)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from . import render
from .documents import SCHEMAS, document, schema
from .errors import UsageError
from .output import emit


def cmd_rules(args: argparse.Namespace) -> int:
    from .. import rules
    from ..outcomes import OUTCOME_TYPES

    if args.rule_id:
        rule = rules.BY_ID.get(args.rule_id.upper())
        if rule is None:
            raise UsageError(f"no rule {args.rule_id!r}; `vllm-bootdiag rules` lists them")
        fields = [
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
        text = "\n".join(render.wrap(f, args.wide) for f in fields)
        emit(document("rule", rule.model_dump(mode="json")), args.json, text)
        return 0
    if args.outcome is not None and args.outcome not in OUTCOME_TYPES:
        raise UsageError(
            f"no outcome kind {args.outcome!r}; one of: {', '.join(sorted(OUTCOME_TYPES))}"
        )
    listed = [r for r in rules.RULES if args.outcome in (None, r.outcome)]
    rows: list[str] = []
    for kind in dict.fromkeys(r.outcome for r in listed):  # grouped, in table order
        rows.append(kind)
        rows.extend(
            render.wrap(f"  {r.id:<6} {r.vllm or 'all':<16} {r.name}", args.wide, " " * 9)
            for r in listed
            if r.outcome == kind
        )
    emit(
        document(
            "rules",
            [{"id": r.id, "name": r.name, "vllm": r.vllm, "outcome": r.outcome} for r in listed],
        ),
        args.json,
        "\n".join(rows),
    )
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    print(json.dumps(schema(args.document), indent=2))
    return 0


def register(sub: Any) -> None:
    """Add `rules` and `schema` to the subparsers."""
    r = sub.add_parser("rules", help="list the rules, or explain one")
    r.add_argument("rule_id", nargs="?", metavar="RULE", help="a rule id, e.g. KV004")
    r.add_argument("--outcome", metavar="KIND", help="only rules yielding this outcome kind")
    r.add_argument("--json", action="store_true", help="print JSON")
    r.add_argument("--wide", action="store_true", help="print whole lines, not 80 columns")
    r.set_defaults(func=cmd_rules)

    s = sub.add_parser("schema", help="the JSON Schema of a --json document")
    s.add_argument(
        "document",
        nargs="?",
        default="diagnosis",
        choices=SCHEMAS,
        help="which document (default: %(default)s)",
    )
    s.set_defaults(func=cmd_schema)
