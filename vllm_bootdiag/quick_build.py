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


_Plan = tuple[dict[str, _Check], frozenset[str], "_Template"]
"""(field -> conversion, the required fields, the model's template)."""
_PLANS: dict[type, _Plan | None] = {}
"""Model -> its plan, or None: always validated."""

_ALLOWED_VALIDATORS = frozenset({"_drop_computed"})
"""Model validators that change nothing in the data this module builds from (the outcome
base's, which drops our own computed keys: data holding one is validated)."""


def _plan(cls: type[BaseModel]) -> _Plan | None:
    if cls in _PLANS:
        return _PLANS[cls]
    decorators = cls.__pydantic_decorators__
    plan: _Plan | None = None
    own = (decorators.validators, decorators.field_validators, decorators.root_validators)
    config = cls.model_config
    template = _template(cls)
    if not (
        any(own)
        or set(decorators.model_validators) - _ALLOWED_VALIDATORS
        or config.get("strict")
        or config.get("extra") == "allow"
        or template is None
    ):
        checks: dict[str, _Check] = {}
        for name, field in cls.model_fields.items():
            check = _field_check(field)
            if check is None:
                break
            checks[name] = check
        else:
            required = frozenset(n for n, f in cls.model_fields.items() if f.is_required())
            plan = (checks, required, template)
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
(built once, then cheaper a call than the checks here). A process that classifies a log
or two (the CLI, a worker's first boot) never builds one; a worker that classifies all
day pays it once per model."""
_BUILT: dict[type, int] = {}
_WARM: dict[type, Callable[[Any], Any]] = {}
"""Model -> its validator's `validate_python`, once `build` calls it (see `validator`)."""


def validator(cls: type[M]) -> Callable[[Mapping[str, Any]], M] | None:
    """What `build(cls, data)` calls now that `cls` was built `WARM_BUILDS` times: its
    validator's `validate_python`, for a caller that builds many (one call, not two frames
    around it); None before (`build` then lays models out without one)."""
    return _WARM.get(cls)


def build(cls: type[M], data: Mapping[str, Any]) -> M:
    """`cls.model_validate(data)`, built without a validator where the answer is certain
    (for the first `WARM_BUILDS` builds of `cls`)."""
    built = _BUILT.get(cls, 0)
    if built >= WARM_BUILDS:
        # `cls.model_validate(data)`: the validator called as is (`model_validate` passes
        # six keyword arguments of None through, which costs twice the validation itself)
        model: M = cls.__pydantic_validator__.validate_python(data)
        _WARM[cls] = cls.__pydantic_validator__.validate_python  # (built now: the real one)
        return model
    _BUILT[cls] = built + 1
    plan = _PLANS[cls] if cls in _PLANS else _plan(cls)
    if plan is None:
        return cls.model_validate(data)
    checks, required, template = plan
    values: dict[str, Any] = {}
    for name, value in data.items():
        check = checks.get(name)
        if check is None:
            return cls.model_validate(data)  # an unknown key: pydantic says what it means
        converted = check(value)
        if converted is _NO:
            return cls.model_validate(data)
        values[name] = converted
    if not required <= values.keys():
        return cls.model_validate(data)
    return template.make(cls, values)


# --- construction of models whose values are already valid ------------------------

_ATOMIC = (type(None), bool, int, float, str)
"""Defaults `model_construct` takes as they are (it deep-copies any other)."""
_set = object.__setattr__


class _Template:
    """How `model_construct` lays out one model: every field in declaration order with its
    default (a placeholder for a required one), and the fields whose default it would
    copy or make (which a caller must give)."""

    __slots__ = ("fields", "must_give", "values")

    def __init__(self, values: dict[str, Any], must_give: frozenset[str]) -> None:
        self.values = values
        self.fields = frozenset(values)
        self.must_give = must_give

    def make(self, cls: type[M], given: dict[str, Any]) -> M:
        """`cls.model_construct(**given)` for `given` (its own dict, kept) holding only
        fields, every one without a shareable default among them."""
        m = cls.__new__(cls)
        d = self.values.copy()
        d.update(given)  # a key already there keeps its place: the field order
        _set(m, "__dict__", d)
        _set(m, "__pydantic_fields_set__", set(given))
        _set(m, "__pydantic_extra__", None)
        _set(m, "__pydantic_private__", None)
        return m


_TEMPLATES: dict[type, _Template | None] = {}


def _template(cls: type[BaseModel]) -> _Template | None:
    """The model's template, or None where `model_construct` does more than lay out
    fields (aliases, default factories, private attributes, a post-init, a root model,
    extra fields kept)."""
    if cls in _TEMPLATES:
        return _TEMPLATES[cls]
    template: _Template | None = None
    if not (
        cls.__pydantic_root_model__
        or cls.__pydantic_post_init__
        or cls.__private_attributes__
        or cls.model_config.get("extra") == "allow"
    ):
        values: dict[str, Any] = {}
        must_give: set[str] = set()
        for name, field in cls.model_fields.items():
            if (
                field.alias is not None
                or field.validation_alias is not None
                or field.default_factory is not None
            ):
                break
            default = field.default
            if field.is_required() or not (
                type(default) in _ATOMIC or (type(default) is tuple and not default)
            ):
                must_give.add(name)
                default = None
            values[name] = default
        else:
            template = _Template(values, frozenset(must_give))
    _TEMPLATES[cls] = template
    return template


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """`cls.model_construct(**values)` for values already valid, at a fraction of its cost
    (a copy of the model's field layout, updated): `values` becomes the model's dict."""
    found = _TEMPLATES.get(cls, _UNSEEN)
    template: _Template | None = _template(cls) if found is _UNSEEN else found
    if template is None:
        return cls.model_construct(**values)
    keys = values.keys()
    if keys != template.fields and not (keys <= template.fields and template.must_give <= keys):
        return cls.model_construct(**values)
    return template.make(cls, values)


_UNSEEN: Any = object()


def layout(cls: type[M], names: tuple[str, ...]) -> Callable[[dict[str, Any]], M]:
    """`construct` for a caller whose values always have these keys: what it checks of the
    keys is checked once, here, and each call lays the model out (its dict, its fields
    set); `cls.model_construct(**values)` where the template cannot hold them."""
    template = _template(cls)
    keys = frozenset(names)
    if (
        template is None
        or len(keys) != len(names)
        or not (keys <= template.fields and template.must_give <= keys)
    ):
        return lambda values: cls.model_construct(**values)
    defaults, given = template.values, set(keys)
    new = cls.__new__

    def make(values: dict[str, Any]) -> M:
        m = new(cls)
        d = defaults.copy()
        d.update(values)  # a key already there keeps its place: the field order
        _set(m, "__dict__", d)
        _set(m, "__pydantic_fields_set__", given.copy())
        _set(m, "__pydantic_extra__", None)
        _set(m, "__pydantic_private__", None)
        return m

    return make
