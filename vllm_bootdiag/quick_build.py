"""Models built from plain values without pydantic's validator, where the answer is certain.

A model's validator is built on its first use, and the first one in a process loads
pydantic's schema builder and plugin loader (`importlib.metadata`): 15 ms of a worker's
first classification, more than its own code costs. A classification builds its answers
from values it made itself: regex groups of digits, line numbers, messages. `build(cls,
data)` gives what `cls.model_validate(data)` gives, without a validator, when every value
is already its field's type, or a string of plain digits for a number field (after the
field's own BeforeValidator, as pydantic applies it); anything else, and any model with
validators of its own, is `cls.model_validate(data)` itself. tests/test_quick_build.py
compares the two on every rule example and corpus log, and on random values.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, BeforeValidator
from pydantic.fields import FieldInfo

M = TypeVar("M", bound=BaseModel)

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")

_Check = Callable[[Any], Any]
"""A field's conversion: the value pydantic would give, or `_NO` where it is not certain."""
_NO: Any = object()


_EXACT = 2**53
"""Integers up to this size are exactly a float, and far from any bound pydantic checks."""


def _int(v: Any) -> Any:
    if type(v) is int and -_EXACT < v < _EXACT:
        return v
    if type(v) is str and _INT.fullmatch(v):
        return int(v)
    return _NO


def _float(v: Any) -> Any:
    if type(v) is float:
        return v
    if type(v) is int and -_EXACT < v < _EXACT:
        return float(v)
    if type(v) is str and _FLOAT.fullmatch(v):
        return float(v)
    return _NO


def _str(v: Any) -> Any:
    return v if type(v) is str else _NO


def _names(v: Any) -> Any:
    return v if type(v) is tuple and all(type(x) is str for x in v) else _NO


def _models(cls: type) -> _Check:
    def check(v: Any) -> Any:
        return v if type(v) is tuple and all(type(x) is cls for x in v) else _NO

    return check


def _literal(value: Any) -> _Check:
    def check(v: Any) -> Any:
        return v if type(v) is type(value) and v == value else _NO

    return check


def _before(fns: tuple[Callable[[Any], Any], ...], check: _Check) -> _Check:
    if not fns:
        return check

    def run(v: Any) -> Any:
        try:
            for fn in reversed(fns):  # pydantic runs the last BeforeValidator first
                v = fn(v)
        except Exception:  # pydantic's error for it comes from model_validate
            return _NO
        return check(v)

    return run


def _optional(check: _Check) -> _Check:
    def run(v: Any) -> Any:
        return None if v is None else check(v)

    return run


def _split(annotation: Any) -> tuple[Any, tuple[Callable[[Any], Any], ...]] | None:
    """(the type, its BeforeValidators) of `Annotated[T, BeforeValidator(f), ...]` or T;
    None for any other metadata (a constraint this module does not check)."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        if not all(type(m) is BeforeValidator for m in meta):
            return None
        return base, tuple(m.func for m in meta)
    return annotation, ()


def _check_for(annotation: Any) -> _Check | None:
    """The conversion for a field's type, None where it is not one this module knows."""
    split = _split(annotation)
    if split is None:
        return None
    base, fns = split
    origin = typing.get_origin(base)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(base)
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1 or len(args) != 2:
            return None
        inner = _check_for(rest[0])
        # a BeforeValidator on the whole `T | None` sees every value, None too
        return None if inner is None else _before(fns, _optional(inner))
    check: _Check | None
    if base is int:
        check = _int
    elif base is float:
        check = _float
    elif base is str:
        check = _str
    elif origin is typing.Literal and len(typing.get_args(base)) == 1:
        check = _literal(typing.get_args(base)[0])
    elif origin is tuple and typing.get_args(base) == (str, ...):
        check = _names
    elif origin is tuple and len(typing.get_args(base)) == 2 and typing.get_args(base)[1] is ...:
        item = typing.get_args(base)[0]
        ok = isinstance(item, type) and issubclass(item, BaseModel)
        check = _models(item) if ok else None
    else:
        check = None
    return None if check is None else _before(fns, check)


_PLANS: dict[type, dict[str, tuple[_Check, bool]] | None] = {}
"""Model -> field -> (conversion, required), or None: always validated."""

_ALLOWED_VALIDATORS = frozenset({"_drop_computed"})
"""Model validators that change nothing in the data this module builds from (the outcome
base's, which drops our own computed keys: data holding one is validated)."""


def _plan(cls: type[BaseModel]) -> dict[str, tuple[_Check, bool]] | None:
    if cls in _PLANS:
        return _PLANS[cls]
    decorators = cls.__pydantic_decorators__
    plan: dict[str, tuple[_Check, bool]] | None
    own = (decorators.validators, decorators.field_validators, decorators.root_validators)
    config = cls.model_config
    if (
        any(own)
        or set(decorators.model_validators) - _ALLOWED_VALIDATORS
        or config.get("strict")
        or config.get("extra") == "allow"
    ):
        plan = None
    else:
        plan = {}
        for name, field in cls.model_fields.items():
            check = _field_check(field)
            if check is None:
                plan = None
                break
            plan[name] = (check, field.is_required())
    _PLANS[cls] = plan
    return plan


def _field_check(field: FieldInfo) -> _Check | None:
    """A field's conversion, its own BeforeValidators included; None: validate instead."""
    if field.alias is not None or field.default_factory is not None:
        return None
    annotation: Any = field.annotation
    for meta in field.metadata:  # in the order written, as Annotated keeps them
        if type(meta) is not BeforeValidator:
            return None
        annotation = typing.Annotated[annotation, meta]
    return _check_for(annotation)


WARM_BUILDS = 8
"""Builds of one model without its validator; from the next one on, pydantic's validator
(built once, then three to six times cheaper a call than the checks here). A process that
classifies a log or two (the CLI, a worker's first boot) never builds one; a worker that
classifies all day pays it once per model."""
_BUILT: dict[type, int] = {}


def build(cls: type[M], data: Mapping[str, Any]) -> M:
    """`cls.model_validate(data)`, built without a validator where the answer is certain
    (for the first `WARM_BUILDS` builds of `cls`)."""
    built = _BUILT.get(cls, 0)
    if built >= WARM_BUILDS:
        return cls.model_validate(data)
    _BUILT[cls] = built + 1
    plan = _plan(cls)
    if plan is None:
        return cls.model_validate(data)
    values: dict[str, Any] = {}
    for name, value in data.items():
        entry = plan.get(name)
        if entry is None:
            return cls.model_validate(data)  # an unknown key: pydantic says what it means
        converted = entry[0](value)
        if converted is _NO:
            return cls.model_validate(data)
        values[name] = converted
    if any(required and name not in values for name, (_, required) in plan.items()):
        return cls.model_validate(data)
    return cls.model_construct(**values)
