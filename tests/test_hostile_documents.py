"""`timeline --json` has a JSON Schema, and what it prints on every kind of corpus log,
a log appended across restarts and an empty file validates against it."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from vllm_bootdiag.cli import main

jsonschema = pytest.importorskip("jsonschema")

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def run(*args: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(list(args))
    return json.loads(out.getvalue())


def test_printed_timelines_validate_against_the_timeline_schema(tmp_path: Path) -> None:
    schema = run("schema", "timeline")
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    by_kind: dict[str, Path] = {}
    for log in sorted(CORPUS.glob("*/*.log")):
        by_kind.setdefault(log.name.split("__")[0], log)
    empty = tmp_path / "empty.log"
    empty.write_text("")
    both = tmp_path / "restart.log"
    both.write_text(
        (CORPUS / "0.14.0" / "booted__smollm135m-eager__cpu.log").read_text()
        + (CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log").read_text()
    )
    keys = set()
    for log in [*by_kind.values(), empty, both]:
        doc = run("timeline", str(log), "--json")
        errors = [e.message[:200] for e in validator.iter_errors(doc)]
        assert not errors, (log, errors)
        keys.add((frozenset(doc), frozenset(doc["facts"])))
    assert len(keys) == 1  # keys never come and go
