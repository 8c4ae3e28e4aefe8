"""The JSON Schemas of the hand-built documents: `corpus mine --json`, `scan-source --json`,
`corpus --json` and `rules --json`, printed by `vllm-bootdiag schema NAME`.

These documents are built by hand (`Mined.as_dict`, `Report.as_dict`, `Result.as_dict`,
the rule listing in cli/rule_commands.py), not by pydantic
models, so their schemas are written here beside each other, closed (no key outside
the schema, every key required), and a test validates the printed documents against
the printed schemas: a key added, renamed or dropped in `as_dict` fails it.
"""

from __future__ import annotations

from typing import Any, get_args

from .sources import Kind

_STR: dict[str, Any] = {"type": "string"}
_INT: dict[str, Any] = {"type": "integer"}
_NUM: dict[str, Any] = {"type": "number"}
_BOOL: dict[str, Any] = {"type": "boolean"}
_STRS: dict[str, Any] = {"type": "array", "items": _STR}
_COUNTS: dict[str, Any] = {"type": "object", "additionalProperties": _INT}
"""A tally by name (kind, rule id, tier): names come and go with the input, counts are ints."""


def _null(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _enum(*values: str) -> dict[str, Any]:
    return {"type": "string", "enum": list(values)}


def _obj(description: str | None = None, **props: dict[str, Any]) -> dict[str, Any]:
    """A closed object: exactly these keys, always present."""
    out: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }
    if description:
        out["description"] = description
    return out


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def mine(version: int) -> dict[str, Any]:
    """`corpus mine --json`: a fleet's logs counted, the unread ones grouped."""
    group = _obj(
        "Logs whose error line masks to the same template, most common first.",
        pattern=_STR,
        count=_INT,
        kinds=_COUNTS,
        example=_STR,
        example_line=_STR,
    )
    return _obj(
        "A fleet's saved boot logs classified in one run (vllm-bootdiag corpus mine).",
        schema_version={"const": version, "type": "integer"},
        files=_INT,
        seconds=_NUM,
        logs_per_second=_NUM,
        cpu_seconds=_NUM,
        workers=_INT,
        kinds=_COUNTS,
        rules=_COUNTS,
        tiers=_COUNTS,
        groups=_array(group),
        unreadable=_array(_obj(path=_STR, error=_STR)),
    )


def scan_source(version: int) -> dict[str, Any]:
    """`scan-source --json`: the rule table and engine strings against a release."""
    release = _obj(path=_STR, vllm_version=_STR, files=_INT, templates=_INT)
    summary = _obj(
        None,
        **{
            k: _INT
            for k in (
                "rules_checked",
                "rules_ok",
                "drift",
                "reworded",
                "removed",
                "outside_range",
                "moved",
                "shifted",
                "gaps",
                "gaps_high",
                "engine_strings_to_check",
                "other_rules",
                "other_rules_found",
                "other_rules_missing",
                "other_rules_out_of_date",
                "other_rules_not_checkable",
            )
        },
    )
    kinds = _enum(*get_args(Kind))
    closest = _obj(
        "The release's template nearest a drifted rule's wording.",
        location=_STR,
        kind=kinds,
        template=_STR,
        similarity=_NUM,
        diff=_STR,
    )
    moved = _obj(kind=_enum("file", "line"), reference=_STR, found=_STRS)
    finding = _obj(
        "One rule vLLM prints, checked against the release.",
        rule_id=_STR,
        status=_enum("ok", "drift", "outside_range", "absent"),
        ok=_BOOL,
        in_range=_BOOL,
        present=_BOOL,
        change=_null(_enum("reworded", "removed")),
        locations=_STRS,
        old_locations=_null(_STRS),
        closest=_null(closest),
        moved=_null(moved),
    )
    gap = _obj(
        "A boot-path message no rule reads, ranked by how likely it ends a boot.",
        location=_STR,
        area=_STR,
        kind=kinds,
        exception=_null(_STR),
        function=_null(_STR),
        template=_STR,
        score=_INT,
        likelihood=_enum("high", "medium", "low"),
        new=_null(_BOOL),
    )
    engine = _obj(
        "A version line, phase marker or OOM frame name the engine depends on.",
        group=_enum("version", "marker", "raw_marker", "oom_frame"),
        family=_STR,
        name=_STR,
        probe=_STR,
        vllm=_null(_STR),
        status=_enum("ok", "missing", "gone", "not_vllm", "absent", "outside_range"),
        locations=_STRS,
        old_locations=_null(_STRS),
        moved=_BOOL,
    )
    statuses = _enum("found", "missing", "out_of_date", "not_checkable")
    part = _obj(
        "One part of a rule's wording (or a flag, choice, config class or message vLLM "
        "supplies to it), checked against who prints it.",
        text=_STR,
        printed_by=_STR,
        what=_enum(
            "wording", "flag", "flags", "choices", "config class", "config field", "message"
        ),
        status=statuses,
        locations=_STRS,
        closest=_null(closest),
        detail=_null(_STR),
        source=_null(_STR),
    )
    other = _obj(
        "A rule whose text another package prints, checked against that package.",
        rule_id=_STR,
        printed_by=_STR,
        package=_null(_STR),
        status=statuses,
        ok=_BOOL,
        reason=_null(_STR),
        parts=_array(part),
    )
    package = _obj(
        "A package rules read: what was given, its version and vLLM's requirement on it.",
        name=_STR,
        given=_BOOL,
        versions=_STRS,
        build=_null(_enum("cuda", "rocm", "xpu", "cpu")),
        files=_INT,
        texts=_INT,
        requires=_null(_STR),
        pinned=_null(_BOOL),
        notes=_STRS,
        counts=_COUNTS,
    )
    return _obj(
        "A vLLM release's source checked against the rule table (vllm-bootdiag scan-source).",
        schema_version={"const": version, "type": "integer"},
        release=release,
        old=_null(release),
        needs_action=_BOOL,
        summary=summary,
        rules=_array(finding),
        unchecked=_array(_obj(rule_id=_STR, printed_by=_STR)),
        gaps=_array(gap),
        engine_strings=_array(engine),
        packages=_array(package),
        other_rules=_array(other),
    )


def corpus(version: int) -> dict[str, Any]:
    """`corpus --json`: each labelled log checked against its label."""
    result = _obj(
        "One labelled log: the outcome its label wants and the one it classifies to.",
        id=_STR,
        ok=_BOOL,
        want=_STR,
        got=_STR,
        mismatches=_STRS,
    )
    return _obj(
        "A labelled corpus classified and compared with its labels (vllm-bootdiag corpus).",
        schema_version={"const": version, "type": "integer"},
        corpus=_array(result),
    )


def rules(version: int) -> dict[str, Any]:
    """`rules --json`: the rule table listed, one short entry per rule (`rules ID --json`
    is the whole rule: the `rule` document, the Rule model's own schema)."""
    entry = _obj(
        "A rule: its id, name, vLLM version range ('' for all) and outcome kind.",
        id=_STR,
        name=_STR,
        vllm=_STR,
        outcome=_STR,
    )
    return _obj(
        "The rule table, in table order (vllm-bootdiag rules [--outcome KIND]).",
        schema_version={"const": version, "type": "integer"},
        rules=_array(entry),
    )
