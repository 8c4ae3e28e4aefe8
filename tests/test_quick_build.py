"""quick_build.build(cls, data) is cls.model_validate(data): on every model a classification
builds from every corpus log and rule example, and on random values (where it declines, it
is model_validate itself, errors included)."""

from __future__ import annotations

import importlib
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from vllm_bootdiag import classify, classify_file, quick_build
from vllm_bootdiag.outcomes import OUTCOME_TYPES, Evidence
from vllm_bootdiag.rules import RULES
from vllm_bootdiag.timeline import BootFacts

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
MODELS: list[type[BaseModel]] = [*OUTCOME_TYPES.values(), Evidence, BootFacts]


def _quick(cls: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    """`build` as the first builds of `cls` run it (before its validator takes over)."""
    quick_build._BUILT.pop(cls, None)
    return quick_build.build(cls, data)


def _same(quick: BaseModel, checked: BaseModel) -> None:
    assert type(quick) is type(checked)
    # (a random float may be NaN, which equals nothing, itself included: compared as a mark)
    assert _marked(quick.model_dump()) == _marked(checked.model_dump())
    if _marked(quick.model_dump()) == quick.model_dump():
        assert quick == checked
    assert quick.model_fields_set == checked.model_fields_set
    assert quick.model_dump_json() == checked.model_dump_json()


def _marked(value: Any) -> Any:
    """`value` with each NaN float replaced by a string that stands for it."""
    if isinstance(value, float) and math.isnan(value):
        return "<NaN>"
    if isinstance(value, dict):
        return {k: _marked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_marked(v) for v in value)
    return value


def test_every_model_a_classification_builds_is_the_validated_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[type[BaseModel], dict[str, Any], BaseModel]] = []
    real = quick_build.build

    def recording(cls: type[BaseModel], data: dict[str, Any]) -> BaseModel:
        out = real(cls, data)
        seen.append((cls, dict(data), out))
        return out

    constructed: list[tuple[type[BaseModel], dict[str, Any], BaseModel]] = []
    real_construct = quick_build.construct

    def recording_construct(cls: type[BaseModel], values: dict[str, Any]) -> BaseModel:
        kept = dict(values)
        out = real_construct(cls, values)
        constructed.append((cls, kept, out))
        return out

    from vllm_bootdiag.diagnosis import Diagnosis

    diagnose_module = importlib.import_module("vllm_bootdiag.engine.diagnose")
    real_layout = diagnose_module._diagnosis

    def recording_layout(values: dict[str, Any]) -> BaseModel:
        kept = dict(values)
        out = real_layout(values)
        constructed.append((Diagnosis, kept, out))
        return out

    monkeypatch.setattr(quick_build, "build", recording)
    monkeypatch.setattr(quick_build, "construct", recording_construct)
    monkeypatch.setattr(diagnose_module, "_diagnosis", recording_layout)
    # every build through `build` (a warm model's validator is what `build` would call)
    outcome_fields = importlib.import_module("vllm_bootdiag.engine.outcome_fields")
    monkeypatch.setattr(outcome_fields, "_validator", lambda cls: None)
    monkeypatch.setattr(quick_build, "validator", lambda cls: None)  # (timeline's facts)
    for log in sorted(CORPUS.glob("*/*.log")):
        classify_file(log)
    for rule in RULES:
        for example in rule.examples:
            classify([example])
    assert len(seen) > 1000
    assert len(constructed) > 200
    for cls, values, out in constructed:
        _same(out, cls.model_construct(**values))
        assert out.__dict__ == cls.model_construct(**values).__dict__
        assert list(out.__dict__) == list(cls.model_fields)  # the layout: the field order
    kinds = set()
    for cls, data, out in seen:
        _same(out, cls.model_validate(data))
        kinds.add(getattr(out, "kind", cls.__name__))
    assert kinds >= set(OUTCOME_TYPES) | {"Evidence", "BootFacts"}
    # and it is the quick path that built them, not the fallback
    assert all(
        quick_build._plan(cls) is not None
        for cls in MODELS
        if cls.__name__ != "CpuMemoryReservationExceeded"
    )


VALUES = st.one_of(
    st.none(),
    st.integers(-(10**20), 10**20),
    st.integers(-(10**400), 10**400),
    st.floats(allow_nan=False),
    st.booleans(),
    st.from_regex(r"-?[0-9]{1,20}(\.[0-9]{1,17})?", fullmatch=True),
    st.from_regex(r" ?[0-9][0-9,_.]{0,8} ?(GiB|MiB|KiB|B|bytes|gib)? ?", fullmatch=True),
    st.text(max_size=12),
    st.lists(st.text(max_size=5), max_size=3).map(tuple),
    st.lists(st.text(max_size=5), max_size=3),
    st.builds(Evidence.model_construct, line=st.integers(1, 9), text=st.text(max_size=5)).map(
        lambda e: (e,)
    ),
)


@st.composite
def _data(draw: st.DrawFn) -> tuple[type[BaseModel], dict[str, Any]]:
    cls = draw(st.sampled_from(MODELS))
    names = sorted(cls.model_fields)
    keys = draw(st.lists(st.sampled_from([*names, "bogus"]), unique=True, max_size=5))
    data = {k: draw(VALUES) for k in keys}
    if "kind" in cls.model_fields and draw(st.booleans()):
        data["kind"] = cls.model_fields["kind"].default
    return cls, data


@settings(max_examples=3000, deadline=None)
@given(_data())
def test_random_values_build_what_validation_builds(
    case: tuple[type[BaseModel], dict[str, Any]],
) -> None:
    cls, data = case
    try:
        checked = cls.model_validate(data)
    except Exception as e:  # ValidationError, or what a model's own validator raises
        with pytest.raises(type(e)):
            _quick(cls, data)
        return
    _same(_quick(cls, data), checked)


@pytest.mark.parametrize(
    ("cls", "data"),
    [
        (
            OUTCOME_TYPES["kv_cache_shortfall"],
            {"kind": "kv_cache_shortfall", "max_model_len": "1,024", "needed_gib": "966.00 MiB"},
        ),
        (OUTCOME_TYPES["kv_cache_shortfall"], {"max_model_len": "131072", "available_gib": "3.21"}),
        (OUTCOME_TYPES["unsupported_architecture"], {"architectures": "['A', 'B']"}),
        (OUTCOME_TYPES["unknown"], {"last_error_line": "x", "last_error_line_number": 3}),
        (BootFacts, {"kv_cache_tokens": "1135957", "model_weights_gib": "2.3", "device": "cpu"}),
        (Evidence, {"line": 1, "text": "t"}),
    ],
)
def test_the_usual_values_take_the_quick_path(cls: type[BaseModel], data: dict[str, Any]) -> None:
    calls: list[object] = []
    real = cls.model_validate
    try:
        cls.model_validate = lambda *a, **k: calls.append(a) or real(*a, **k)  # type: ignore[method-assign,assignment]
        quick = _quick(cls, data)
    finally:
        del cls.model_validate  # the class's own again
    assert calls == []
    _same(quick, cls.model_validate(data))


def test_a_model_with_validators_of_its_own_is_validated() -> None:
    assert quick_build._plan(OUTCOME_TYPES["cpu_memory_reservation_exceeded"]) is None


def test_a_model_built_often_is_built_by_its_validator(monkeypatch: pytest.MonkeyPatch) -> None:
    """After WARM_BUILDS builds of one model its validator builds it (cheaper a call once
    built, and called as is: `model_validate` passes six keyword arguments through); the
    answer is the same either way."""
    monkeypatch.setattr(quick_build, "_BUILT", {})
    cls, data = Evidence, {"line": 1, "text": "t"}
    cls.model_validate(data)  # built
    real = cls.__pydantic_validator__
    calls: list[object] = []

    class Recording:
        def validate_python(self, obj: object, **kw: object) -> object:
            calls.append(obj)
            return real.validate_python(obj, **kw)

    monkeypatch.setattr(cls, "__pydantic_validator__", Recording())
    built = [quick_build.build(cls, data) for _ in range(quick_build.WARM_BUILDS + 2)]
    monkeypatch.undo()
    assert len(calls) == 2
    for one in built:
        _same(one, cls.model_validate(data))
    with pytest.raises(ValidationError):  # and its errors are model_validate's
        quick_build.build(cls, {"line": "x", "text": "t"})


def test_a_warm_models_validator_is_what_build_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """`validator(cls)` is None until `build` has called the validator, then that validator:
    a caller that builds with it builds what `build` builds."""
    monkeypatch.setattr(quick_build, "_BUILT", {})
    monkeypatch.setattr(quick_build, "_WARM", {})
    data = {"line": 3, "text": "t"}
    for _ in range(quick_build.WARM_BUILDS):
        assert quick_build.validator(Evidence) is None
        quick_build.build(Evidence, data)
    assert quick_build.validator(Evidence) is None
    _same(quick_build.build(Evidence, data), Evidence.model_validate(data))
    validate = quick_build.validator(Evidence)
    assert validate is not None
    _same(validate(data), Evidence.model_validate(data))
    with pytest.raises(ValidationError):
        validate({"line": "x", "text": "t"})


def test_a_layout_is_construct_for_its_keys() -> None:
    """`layout(cls, names)` lays out what `construct` and `model_construct` do for values
    with those keys; where the template cannot hold them, it is `model_construct`."""
    from vllm_bootdiag.diagnosis import Diagnosis

    unknown = OUTCOME_TYPES["unknown"].model_validate({"last_error_line": "x"})
    full = {"primary": unknown, "facts": BootFacts(), "lines_examined": 3, "notes": ("n",)}
    for cls, values in [
        (Evidence, {"text": "t", "line": 2}),
        (Diagnosis, full),
        (Diagnosis, {"primary": unknown}),  # facts' default is a model: model_construct's
        (Evidence, {"line": 1, "text": "t", "bogus": 1}),  # not a field: model_construct's
    ]:
        make = quick_build.layout(cls, tuple(values))
        for _ in range(2):  # (each model its own dict and fields set)
            quick, slow = make(dict(values)), cls.model_construct(**values)
            _same(quick, slow)
            assert list(quick.__dict__) == list(slow.__dict__)
            assert repr(quick) == repr(slow)
        one, two = make(dict(values)), make(dict(values))
        assert one.__dict__ is not two.__dict__
        assert one.model_fields_set is not two.model_fields_set


def test_construct_lays_out_what_model_construct_does() -> None:
    """`construct` is `model_construct`: the defaults filled in, in field order, the fields
    set those given; where a default would be copied (a model) and is not given, or a
    key is not a field, it is `model_construct` itself."""
    from vllm_bootdiag.diagnosis import Diagnosis

    unknown = OUTCOME_TYPES["unknown"].model_validate({"last_error_line": "x"})
    for cls, values in [
        (Evidence, {"text": "t", "line": 2}),
        (OUTCOME_TYPES["kv_cache_shortfall"], {"max_model_len": 8, "rule_id": "KV001"}),
        (BootFacts, {}),
        (Diagnosis, {"primary": unknown, "facts": BootFacts(), "lines_examined": 3}),
        (Diagnosis, {"primary": unknown}),  # facts' default is a model: model_construct's
        (Evidence, {"line": 1, "text": "t", "bogus": 1}),  # not a field: model_construct's
    ]:
        quick = quick_build.construct(cls, dict(values))
        slow = cls.model_construct(**values)
        _same(quick, slow)
        assert list(quick.__dict__) == list(slow.__dict__)
        assert repr(quick) == repr(slow)
