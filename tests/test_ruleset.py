"""RuleSet and user rule files: a caller classifies with its own table."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from vllm_bootdiag import BootWatcher, RuleFileError, RuleSet, classify, classify_file, load_rules
from vllm_bootdiag.rules import BY_ID, RULES, default_rules

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
TOKENIZER_LOG = CORPUS / "0.10.1.1" / "unknown__smollm135m-eager-transformers5__cpu.log"
"""A real 0.10.1.1 boot that fails on a transformers 5 tokenizer: no built-in rule knows it."""

LINE = (
    "AttributeError: TokenizersBackend has no attribute all_special_tokens_extended. "
    "Did you mean: 'num_special_tokens_to_add'?"
)

USER_RULE = {
    "id": "USR001",
    "name": "transformers-too-new-for-tokenizer",
    "vllm": "<0.11",
    "outcome": "invalid_argument",
    "literal": "has no attribute all_special_tokens_extended",
    "patterns": [r"(?P<message>\w+ has no attribute all_special_tokens_extended)"],
    "examples": [LINE],
    "counter_examples": ["AttributeError: X has no attribute y"],
    "summary": "transformers 5 with an older vLLM",
    "remediation": "Pin transformers<5 in the image.",
    "printed_by": "transformers",
}


def _write(tmp_path: Path, data: object, name: str = "rules.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


def test_the_default_set_is_the_table_and_ids_are_found() -> None:
    rs = default_rules()
    assert len(rs) == len(RULES) and rs.by_id("KV004") is BY_ID["KV004"]
    assert "KV004" in rs and rs.get("nope") is None
    with pytest.raises(KeyError):
        rs.by_id("nope")
    assert len(rs.exact) + len(rs.tolerant) == len(rs)


def test_for_version_keeps_the_range_and_is_cached() -> None:
    rs = default_rules()
    v22 = rs.for_version("0.22.0")
    assert "KV004" in v22 and all(r.applies_to(Version("0.22.0")) for r in v22)
    assert rs.for_version("0.22.0") is v22
    assert "KV004" not in rs.for_version("0.14.0")
    assert len(rs.for_version(None)) == len([r for r in RULES if r.status != "retired"])


def test_extend_refuses_an_id_already_there() -> None:
    with pytest.raises(ValueError, match="duplicate rule id KV004"):
        default_rules().extend([BY_ID["KV004"]])


def test_a_user_rule_file_classifies_what_the_table_does_not_know(tmp_path: Path) -> None:
    assert classify_file(TOKENIZER_LOG).primary.kind == "unknown"
    extra = load_rules(_write(tmp_path, {"rules": [USER_RULE]}))
    d = classify_file(TOKENIZER_LOG, extra_rules=extra)
    assert d.primary.kind == "invalid_argument" and d.primary.rule_id == "USR001"
    assert d.remediation == "Pin transformers<5 in the image." and d.match == "exact"
    assert d.vllm_version == "0.10.1.1"
    # the same file is read by a watcher, line by line
    w = BootWatcher(extra_rules=extra)
    reported = None
    for line in TOKENIZER_LOG.read_text().splitlines():
        reported = reported or w.feed(line)
    assert reported is not None and reported.primary.rule_id == "USR001"


def test_a_caller_can_run_with_only_its_own_rules(tmp_path: Path) -> None:
    mine = RuleSet(load_rules(_write(tmp_path, [USER_RULE])))
    kv = BY_ID["KV004"].examples[0]
    assert classify([kv], rules=mine).primary.kind == "unknown"
    assert classify([kv], rules=RuleSet([BY_ID["KV004"]])).primary.rule_id == "KV004"
    assert classify([LINE], rules=mine).primary.rule_id == "USR001"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_a_toml_rule_file_reads_the_same(tmp_path: Path) -> None:
    p = tmp_path / "rules.toml"
    p.write_text(
        "[[rules]]\n"
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in USER_RULE.items() if k != "patterns")
        + "patterns = ['(?P<message>\\w+ has no attribute all_special_tokens_extended)']\n"
    )
    (rule,) = load_rules(p)
    assert rule == load_rules(_write(tmp_path, [USER_RULE]))[0]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"outcome": "no_such_kind"}, r"rule 'USR001': field 'outcome': unknown outcome kind"),
        ({"patterns": [r"(?P<bogus>x)"]}, r"rule 'USR001': field 'patterns': groups \['bogus'\]"),
        ({"patterns": ["("]}, r"rule 'USR001': field 'patterns': does not compile"),
        ({"examples": ["AttributeError: nothing"]}, r"rule 'USR001': field 'literal'"),
        ({"counter_examples": [LINE]}, r"rule 'USR001': field 'counter_examples': matches"),
        ({"vllm": ">=zero"}, r"rule 'USR001': field 'vllm'"),
        ({"tier": "fuzzy"}, r"rule 'USR001': field 'tier'"),
        ({"id": "bad id"}, r"rule 'bad id': field 'id'"),
        ({"summary": None}, r"rule 'USR001': field 'summary'"),
        ({"surprise": 1}, r"rule 'USR001': field 'surprise': Extra inputs"),
    ],
)
def test_a_bad_rule_is_one_error_naming_rule_and_field(
    tmp_path: Path, change: dict[str, object], expected: str
) -> None:
    bad = {**USER_RULE, **change}
    with pytest.raises(RuleFileError, match=expected) as info:
        load_rules(_write(tmp_path, [USER_RULE | {"id": "USR002", "name": "x"}, bad]))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe\x00", "not valid JSON"),
        (b'{"rules": 3}', "expected a list of rules"),
        (b"[3]", r"rule #1: expected a table"),
    ],
)
def test_a_bad_file_is_one_clear_error(tmp_path: Path, content: bytes, expected: str) -> None:
    p = tmp_path / "r.json"
    p.write_bytes(content)
    with pytest.raises(RuleFileError, match=expected):
        load_rules(p)


def test_a_missing_file_and_a_repeated_id(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="cannot read"):
        load_rules(tmp_path / "absent.json")
    with pytest.raises(RuleFileError, match="field 'id': used twice"):
        load_rules(_write(tmp_path, [USER_RULE, USER_RULE]))
