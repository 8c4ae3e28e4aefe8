"""The JSON documents the CLI prints, their `schema_version`, and their JSON Schemas.

A program that reads `--json` output needs to know which shape it holds and that a key it
read yesterday is there today: every document starts with `schema_version` (bumped when
a key is renamed or removed, never for an added one), and every key is always present,
null when it has no value (no `exclude_none` on public output).
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 1

SCHEMAS = (
    "diagnosis",
    "plan",
    "run",
    "timeline",
    "redact",
    "rules",
    "rule",
    "corpus",
    "mine",
    "scan-source",
)
"""The documents `vllm-bootdiag schema` describes: the outputs a worker consumes (and
`redact --json`'s), the rule table's (`rules --json`, `rules ID --json`), and the release
tools' (`corpus --json`, `corpus mine --json`, `scan-source --json`)."""


def document(kind: str, data: dict[str, Any] | list[Any]) -> dict[str, Any]:
    """`data` as a versioned document; a list becomes the document's `kind` key."""
    body = {kind.replace("-", "_"): data} if isinstance(data, list) else data
    return {"schema_version": SCHEMA_VERSION, **body}


def _versioned(schema: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A model's serialization schema with `schema_version` (and `extra`) added, every
    property required: the keys are always there."""
    props = {"schema_version": {"const": SCHEMA_VERSION, "type": "integer"}}
    props.update(schema.get("properties", {}))
    props.update(extra or {})
    out = {k: v for k, v in schema.items() if k not in ("properties", "required")}
    out["properties"] = props
    out["required"] = list(props)
    return out


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the document `name` (one of SCHEMAS)."""
    from pydantic import TypeAdapter

    base = {"$schema": "https://json-schema.org/draft/2020-12/schema"}
    if name == "diagnosis":
        from ..diagnosis import Diagnosis

        return {**base, **_versioned(Diagnosis.model_json_schema(mode="serialization"))}
    if name == "plan":
        from .. import GiveUp, Relaunch

        argv = {"type": "array", "items": {"type": "string"}}
        env = {"type": "object", "additionalProperties": {"type": "string"}}
        said = {"diagnosis": {"type": "string"}}
        relaunch = _versioned(
            TypeAdapter(Relaunch).json_schema(mode="serialization"),
            {"argv": argv, "env": env, **said},
        )
        give_up = _versioned(TypeAdapter(GiveUp).json_schema(mode="serialization"), said)
        booted = _versioned({"type": "object", "properties": {"kind": {"const": "booted"}}}, said)
        defs = {**relaunch.pop("$defs", {}), **give_up.pop("$defs", {})}
        return {**base, "oneOf": [relaunch, give_up, booted], "$defs": defs}
    if name == "run":
        from .. import RunSummary

        run = _versioned(RunSummary.model_json_schema(mode="serialization"))
        attempt = run.get("$defs", {}).get("AttemptSummary", {})
        # RunSummary.json_line leaves each attempt's whole diagnosis out
        attempt.get("properties", {}).pop("diagnosis", None)
        if "required" in attempt:
            attempt["required"] = [k for k in attempt["required"] if k != "diagnosis"]
        return {**base, **run}
    if name == "timeline":
        from ..timeline import Timeline

        return {**base, **_versioned(Timeline.model_json_schema(mode="serialization"))}
    if name == "redact":
        text = {"type": "string", "description": "The log, scrubbed (`redact.redact`)."}
        shape = {"type": "object", "title": "Redacted", "additionalProperties": False}
        return {**base, **_versioned(shape, {"text": text})}
    if name == "rule":
        from ..rules.schema import Rule

        return {**base, **_versioned(Rule.model_json_schema(mode="serialization"))}
    if name in ("rules", "corpus", "mine", "scan-source"):
        from ..release import schemas

        builds = {"rules": schemas.rules, "corpus": schemas.corpus, "mine": schemas.mine}
        build = builds.get(name, schemas.scan_source)
        return {**base, **build(SCHEMA_VERSION)}
    raise ValueError(f"no schema {name!r}; one of: {', '.join(SCHEMAS)}")
