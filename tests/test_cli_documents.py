"""The --json documents: each carries `schema_version`, its keys are those its JSON Schema
names, and they never come and go with the input (null, not missing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vllm_bootdiag.cli.documents import SCHEMA_VERSION, SCHEMAS

# The reference validator, from the test extras (an older checkout's venv may lack it).
jsonschema = pytest.importorskip("jsonschema")

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
LOGS = sorted(CORPUS.glob("*/*.log"))
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


def run(*args: str) -> Any:
    r = subprocess.run([sys.executable, "-m", "vllm_bootdiag", *args],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_command_prints_a_json_schema(name: str) -> None:
    schema = run("schema", name)
    assert schema["$schema"].startswith("https://json-schema.org/")
    branches = schema.get("oneOf", [schema])
    for b in branches:
        assert b["properties"]["schema_version"]["const"] == SCHEMA_VERSION
        assert b["required"] == list(b["properties"])


def test_unknown_schema_is_a_usage_error() -> None:
    r = subprocess.run([sys.executable, "-m", "vllm_bootdiag", "schema", "bogus"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_diagnosis_keys_are_the_schema_for_every_kind(tmp_path: Path) -> None:
    """One log of each kind, plus input that is no vLLM output: the same top-level keys."""
    keys = set(run("schema", "diagnosis")["properties"])
    by_kind: dict[str, Path] = {}
    for log in LOGS:
        by_kind.setdefault(log.name.split("__")[0], log)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    for log in [*by_kind.values(), empty]:
        doc = run("classify", str(log), "--json")
        assert set(doc) == keys, log.name
        assert doc["schema_version"] == SCHEMA_VERSION


def test_plan_document_matches_its_branch() -> None:
    schema = run("schema", "plan")
    doc = run("plan", str(KV_LOG), "--json", "--max-concurrency", "8")
    branch = next(b for b in schema["oneOf"] if b["properties"]["kind"].get("const") == doc["kind"]
                  or doc["kind"] in str(b["properties"]["kind"]))  # fmt: skip
    assert set(doc) == set(branch["properties"])


def test_run_summary_line_has_every_key() -> None:
    from vllm_bootdiag import RunSummary

    schema = run("schema", "run")
    line = json.loads(RunSummary(result="gave_up").json_line())
    assert set(line) | {"schema_version"} == set(schema["properties"])
    assert line["give_up"] is None and line["signal"] is None  # null, not missing


@pytest.mark.parametrize(
    "args",
    [("rules",), ("rules", "KV004"), ("timeline", str(KV_LOG)), ("redact", str(KV_LOG))],
)
def test_other_documents_are_versioned(args: tuple[str, ...]) -> None:
    assert run(*args, "--json")["schema_version"] == SCHEMA_VERSION


def valid(doc: Any, name: str) -> None:
    """`doc` against the schema `vllm-bootdiag schema NAME` prints (draft 2020-12)."""
    schema = run("schema", name)
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = [f"{list(e.absolute_path)}: {e.message[:300]}"
              for e in jsonschema.Draft202012Validator(schema).iter_errors(doc)]  # fmt: skip
    assert not errors, errors


def test_every_schema_is_a_valid_schema() -> None:
    for name in SCHEMAS:
        jsonschema.Draft202012Validator.check_schema(run("schema", name))


def test_printed_diagnoses_and_plans_validate(tmp_path: Path) -> None:
    by_kind: dict[str, Path] = {}
    for log in LOGS:
        by_kind.setdefault(log.name.split("__")[0], log)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    for log in [*by_kind.values(), empty]:
        valid(run("classify", str(log), "--json"), "diagnosis")
    valid(run("plan", str(KV_LOG), "--json", "--max-concurrency", "8"), "plan")


def test_the_mine_document_validates(tmp_path: Path) -> None:
    """A fleet folder with known failures, an unknown and a file that is no log: every part
    of the document (kinds, groups with examples) is filled, and matches its schema."""
    for n, log in enumerate(LOGS[:12]):  # names repeat across versions
        (tmp_path / f"{n}-{log.name}").write_bytes(log.read_bytes())
    lines = KV_LOG.read_text(encoding="utf-8").splitlines()[:30]
    unknown = "(EngineCore pid=77) ERROR 12-01 10:02:11 [core.py:1142] RuntimeError: widget 0x3f"
    (tmp_path / "unknown.log").write_text("\n".join([*lines, unknown]) + "\n")
    (tmp_path / "random.bin").write_bytes(bytes(range(256)) * 8)
    doc = run("corpus", "mine", str(tmp_path), "--json", "--jobs", "1")
    assert doc["files"] == 14 and doc["groups"], doc
    valid(doc, "mine")
    schema = run("schema", "mine")
    assert set(doc) == set(schema["properties"]) == set(schema["required"])


def test_the_rules_documents_validate(capsys: pytest.CaptureFixture[str]) -> None:
    """The listing (whole, and filtered by outcome) and `rules ID --json` for every rule in
    the table: each printed through the CLI, each against its printed schema, closed."""
    from vllm_bootdiag import rules
    from vllm_bootdiag.cli import main

    listing = run("rules", "--json")
    assert [r["id"] for r in listing["rules"]] == [r.id for r in rules.RULES]
    valid(listing, "rules")
    valid(run("rules", "--outcome", "kv_cache_shortfall", "--json"), "rules")
    schema = run("schema", "rule")
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert schema["additionalProperties"] is False
    for rule in rules.RULES:
        assert main(["rules", rule.id, "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        errors = [f"{list(e.absolute_path)}: {e.message[:300]}" for e in validator.iter_errors(doc)]
        assert not errors, (rule.id, errors)
        assert set(doc) == set(schema["properties"]) == set(schema["required"]), rule.id
    # a key the schema does not name is refused: the schemas are closed
    for name, printed in (("rules", listing), ("rule", doc)):
        closed = jsonschema.Draft202012Validator(run("schema", name))
        assert not closed.is_valid({**printed, "extra": 1}), name


def test_the_corpus_document_validates() -> None:
    """`corpus --json` over the real corpus: one entry per labelled log, against its schema."""
    doc = run("corpus", str(CORPUS), "--json")
    assert len(doc["corpus"]) == len(LOGS) and all(r["ok"] for r in doc["corpus"])
    valid(doc, "corpus")
    schema = run("schema", "corpus")
    assert set(doc) == set(schema["properties"]) == set(schema["required"])
    entry = schema["properties"]["corpus"]["items"]
    assert all(set(r) == set(entry["required"]) for r in doc["corpus"])
    assert not jsonschema.Draft202012Validator(schema).is_valid(
        {**doc, "corpus": [{**doc["corpus"][0], "extra": 1}]}
    )
