"""The outcome package: kinds written once, everything else derived from them."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from vllm_bootdiag import Diagnosis, classify, outcomes
from vllm_bootdiag.outcomes import base


def test_every_kind_is_in_the_union_and_round_trips_through_json() -> None:
    for kind, cls in outcomes.OUTCOME_TYPES.items():
        o = cls()
        back = outcomes.outcome_adapter.validate_json(o.model_dump_json())
        assert type(back) is cls and back.kind == kind


def test_a_diagnosis_of_each_kind_round_trips() -> None:
    for cls in outcomes.OUTCOME_TYPES.values():
        d = Diagnosis(primary=cls(), matches=(cls(),))
        assert type(Diagnosis.model_validate_json(d.model_dump_json()).primary) is cls


def test_plan_policy_is_a_class_attribute_of_every_kind() -> None:
    plans = {kind: cls.PLAN for kind, cls in outcomes.OUTCOME_TYPES.items()}
    assert set(plans.values()) <= {"memory", "give_up", "restart_once"}
    for kind, cls in outcomes.OUTCOME_TYPES.items():
        if cls.CATEGORY == outcomes.Category.MEMORY:
            assert plans[kind] == "memory", kind
    assert plans["engine_died"] == plans["unknown"] == "restart_once"
    assert plans["invalid_argument"] == plans["model_not_found"] == "give_up"


def test_kinds_follow_the_category_modules_order() -> None:
    cats = [cls.CATEGORY.value for cls in outcomes.OUTCOME_TYPES.values()]
    assert cats[0] == "memory" and cats[-1] == "unknown"
    assert set(outcomes.OUTCOME_TYPES) == set(base.REGISTRY)


def test_a_kind_defined_twice_is_refused() -> None:
    from typing import Literal

    with pytest.raises(TypeError, match="defined twice"):

        class Again(outcomes.OutcomeBase):
            kind: Literal["booted"] = "booted"


def test_computed_fields_are_accepted_back_but_unknown_fields_are_not() -> None:
    data = outcomes.KvCacheShortfall(max_model_len=8).model_dump()
    assert data.pop("kind") == "kv_cache_shortfall" and data["category"] == "memory"
    assert outcomes.build("kv_cache_shortfall", **data).max_model_len == 8
    with pytest.raises(ValidationError):
        outcomes.build("kv_cache_shortfall", not_a_field=1)


def test_field_names_and_build_convert_printed_numbers() -> None:
    assert "needed_gib" in outcomes.field_names("kv_cache_shortfall")
    o = outcomes.build("kv_cache_shortfall", needed_gib="966.00 MiB", max_model_len="131,072")
    assert isinstance(o, outcomes.KvCacheShortfall)
    assert o.max_model_len == 131072 and abs((o.needed_gib or 0) - 0.943359) < 1e-6


def test_context_fields_fill_from_the_boot_facts() -> None:
    lines = [
        "(APIServer pid=1) INFO 11-29 16:19:50 [api_server.py:1800] vLLM API server version 0.32.0",
        "(APIServer pid=1) INFO 11-29 16:19:51 [utils.py:253] non-default args: {'model': 'org/m'}",
        "(APIServer pid=1) INFO 11-29 16:19:59 [launcher.py:37] Available routes are:",
        "(APIServer pid=1) INFO:     Uvicorn running on http://0.0.0.0:8123 (Press CTRL+C to quit)",
        "(APIServer pid=1) INFO:     Application startup complete.",
    ]
    d = classify(lines)
    assert d.primary.kind == "booted"
    assert isinstance(d.primary, outcomes.Booted) and d.primary.port == 8123
    for cls in outcomes.OUTCOME_TYPES.values():
        for name, fact in cls.CONTEXT:
            assert name in cls.model_fields, cls
            assert fact in type(d.facts).model_fields, (cls, fact)
    assert issubclass(type(d.facts), BaseModel)


def test_the_readme_lists_every_kind_under_its_category() -> None:
    """The README's list of kinds by category is the one place besides the code a new kind
    is named (CONTRIBUTING's "Add an outcome kind"): kept true here."""
    import re
    from pathlib import Path

    from vllm_bootdiag import outcomes as kinds

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    listed: dict[str, str] = {}
    for m in re.finditer(r"^- (\w+): (.*?)(?=^- |^\s*$)", readme, re.MULTILINE | re.DOTALL):
        for kind in re.findall(r"`([a-z_]+)`", m[2]):
            listed.setdefault(kind, m[1])
    expected = {k: cls.CATEGORY.value for k, cls in kinds.OUTCOME_TYPES.items()}
    # `unknown` is listed beside lifecycle, as an answer of its own
    expected["unknown"] = "lifecycle"
    assert {k: listed.get(k) for k in expected} == expected
