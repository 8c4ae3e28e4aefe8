"""RuleSet: the table a classification runs with, and the loader for user rule files.

The engine never reads a global table: `classify` and `BootWatcher` take a
RuleSet (the built-in one by default), so a caller can add its own rules or
run with a table of its own. A user rule file is validated by the same Rule
model as the built-in rules; a bad file is one error naming the rule and field.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from packaging.version import Version
from pydantic import ValidationError

from .. import outcomes, versions
from .schema import Rule


class RuleFileError(ValueError):
    """A user rule file that cannot be read or holds an invalid rule."""


class RuleSet:
    """An immutable, ordered collection of rules with unique ids, exact ones first.

    `for_version(v)` gives the rules that apply to a release, exact ones first;
    when the version is unknown, every rule, newest wording first, so the first
    of two wordings that read one line is the newer.
    """

    __slots__ = ("_by_id", "_cache", "_outside", "_precedence", "cause_top", "rules", "top")

    def __init__(self, rules: Iterable[Rule]) -> None:
        # Exact rules first (a stable sort: otherwise in the order given), so the
        # matcher never sorts: a line an exact rule read is not read by a tolerant one.
        self.rules: tuple[Rule, ...] = tuple(sorted(rules, key=lambda r: r.tier != "exact"))
        by_id: dict[str, Rule] = {}
        for rule in self.rules:
            if rule.id in by_id:
                raise ValueError(f"duplicate rule id {rule.id}")
            by_id[rule.id] = rule
        self._by_id = by_id
        self._cache: dict[Version | None, RuleSet] = {}
        self._outside: dict[Version, RuleSet] = {}
        self._precedence = {r.id: r.precedence for r in self.rules}
        self.top: tuple[bool, int, bool] = max(
            self._precedence.values(), default=(False, -1, False)
        )
        """The highest root-cause precedence any rule here can give."""
        failures = [
            r.precedence
            for r in self.rules
            if r.role == "cause" and outcomes.OUTCOME_TYPES[r.outcome].FAILURE
        ]
        self.cause_top: tuple[bool, int, bool] | None = max(failures, default=None)
        """The highest precedence of a failure cause here (None: no rule is one): no hit
        of these rules outranks a cause of that precedence or higher."""

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._by_id

    def __repr__(self) -> str:
        return f"RuleSet({len(self.rules)} rules)"

    def by_id(self, rule_id: str) -> Rule:
        """The rule with this id; KeyError if there is none."""
        return self._by_id[rule_id]

    def get(self, rule_id: str | None) -> Rule | None:
        """The rule with this id, or None."""
        return self._by_id.get(rule_id or "")

    def precedence(self, rule_id: str | None) -> tuple[bool, int, bool] | None:
        """`Rule.precedence` of the rule with this id (worked out once), or None."""
        return self._precedence.get(rule_id or "")

    @property
    def exact(self) -> RuleSet:
        return RuleSet(r for r in self.rules if r.tier == "exact")

    @property
    def tolerant(self) -> RuleSet:
        return RuleSet(r for r in self.rules if r.tier == "tolerant")

    def extend(self, rules: Iterable[Rule]) -> RuleSet:
        """A new RuleSet with `rules` added after these (an id already here is an error)."""
        return RuleSet((*self.rules, *rules))

    def for_version(self, version: Version | str | None) -> RuleSet:
        """The rules that apply to `version` (not retired, in range), exact first."""
        if isinstance(version, str):
            version = versions.parse_version(version)
        cached = self._cache.get(version)
        if cached is not None:
            return cached
        active = [r for r in self.rules if r.applies_to(version)]
        if version is None:
            active.sort(
                key=lambda r: versions.upper_bound(r.vllm) if r.vllm else Version("9999"),
                reverse=True,
            )
        result = RuleSet(active)
        result._cache[version] = result
        if len(self._cache) < 64:  # versions are few; a caller looping over junk stays bounded
            self._cache[version] = result
        return result

    def outside(self, version: Version) -> RuleSet:
        """The rules not retired whose range does not hold `version`, newest wording
        first: what a table lagging a release may still know."""
        cached = self._outside.get(version)
        if cached is None:
            inside = {r.id for r in self.for_version(version)}
            cached = RuleSet(r for r in self.for_version(None) if r.id not in inside)
            if len(self._outside) < 64:
                self._outside[version] = cached
        return cached


@cache
def default_rules() -> RuleSet:
    """The built-in rule table."""
    from . import RULES

    return RuleSet(RULES)


def resolve(rules: RuleSet | None = None, extra_rules: Iterable[Rule] = ()) -> RuleSet:
    """The RuleSet a classification runs with: `rules` (default: built-in) plus extras."""
    base = default_rules() if rules is None else rules
    extra = tuple(extra_rules)
    return base.extend(extra) if extra else base


def _read_toml(path: Path, raw: bytes) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise RuleFileError(f"{path}: not valid TOML: {e}") from None
    raise RuleFileError(f"{path}: TOML rule files need Python 3.11 or later (tomllib); use JSON")


def _read(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise RuleFileError(f"{path}: cannot read: {e.strerror or e}") from None
    if path.suffix.lower() == ".toml":
        return _read_toml(path, raw)
    import json  # here: a classification that reads no rule file needs no json

    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RuleFileError(f"{path}: not valid JSON: {e}") from None


def _one_error(path: Path, name: str, rid: object, err: ValidationError) -> RuleFileError:
    first = err.errors()[0]
    loc = ".".join(str(x) for x in first["loc"])
    msg = first["msg"].removeprefix("Value error, ").removeprefix(f"{rid}: ")
    where = f"field {loc!r}: " if loc else ""
    return RuleFileError(f"{path}: rule {name}: {where}{msg}")


def load_rules(path: str | os.PathLike[str]) -> tuple[Rule, ...]:
    """Rules from a user file: JSON (a list of rules, or `{"rules": [...]}`), or TOML
    (`[[rules]]` tables) where Python has tomllib. Raises RuleFileError."""
    p = Path(path)
    data = _read(p)
    items = data.get("rules") if isinstance(data, Mapping) else data
    if not isinstance(items, list):
        raise RuleFileError(f"{p}: expected a list of rules (or a 'rules' key holding one)")
    out: list[Rule] = []
    seen: set[str] = set()
    for n, item in enumerate(items, 1):
        if not isinstance(item, Mapping):
            raise RuleFileError(f"{p}: rule #{n}: expected a table of fields, got {item!r:.60}")
        rid = item.get("id")
        name = repr(rid) if isinstance(rid, str) else f"#{n}"
        try:
            rule = Rule.model_validate(dict(item))
        except ValidationError as e:
            raise _one_error(p, name, rid, e) from None
        if rule.id in seen:
            raise RuleFileError(f"{p}: rule {name}: field 'id': used twice in this file")
        seen.add(rule.id)
        out.append(rule)
    return tuple(out)
