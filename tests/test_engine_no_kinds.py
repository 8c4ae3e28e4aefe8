"""No outcome kind is named in the matcher or the diagnosis code (#11): what differs by
kind is data on the outcome classes (`outcomes.base._Outcome`'s class attributes) or on
the rules, so a new kind needs no engine change."""

from __future__ import annotations

import ast
from pathlib import Path

from vllm_bootdiag import outcomes

PACKAGE = Path(__file__).resolve().parent.parent / "vllm_bootdiag"
ENGINE = [*sorted((PACKAGE / "engine").glob("*.py")), PACKAGE / "pipeline.py", PACKAGE / "boots.py"]
_FALLBACK = {"unknown"}
"""The answer when no rule matched: the engine builds it, so it may name it."""


def _kind_literals(path: Path) -> list[tuple[int, str]]:
    kinds = set(outcomes.OUTCOME_TYPES) - _FALLBACK
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in kinds
    ]


def test_the_engine_names_no_outcome_kind() -> None:
    found = {p.name: lits for p in ENGINE if (lits := _kind_literals(p))}
    assert found == {}


def test_the_check_sees_a_kind_where_one_is_named(tmp_path: Path) -> None:
    code = tmp_path / "x.py"
    code.write_text('KINDS = ("kv_cache_shortfall", "unknown")\n', encoding="utf-8")
    assert _kind_literals(code) == [(1, "kv_cache_shortfall")]
