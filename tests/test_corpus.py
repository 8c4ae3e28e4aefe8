"""Every corpus log classifies to its label. Ids are `<version>/<rule_id>/<stem>`,
so `pytest -k KV004` runs a rule's corpus logs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.user_rules import QUOTA, QUOTA_RULE

from vllm_bootdiag import corpus, versions
from vllm_bootdiag.rules import BY_ID

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

ENTRIES = corpus.entries(CORPUS)


def test_the_corpus_is_not_empty() -> None:
    assert len(ENTRIES) >= 5


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_log_classifies_to_its_label(entry: corpus.Entry) -> None:
    assert corpus.sha256(entry.log_path) == entry.label.log_sha256, "log edited after capture"
    result = corpus.check_entry(entry)
    assert result.ok, "; ".join(result.mismatches)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_label_is_consistent_with_its_file(entry: corpus.Entry) -> None:
    kind, _scenario, device = entry.log_path.stem.split("__")
    assert entry.label.expected["kind"] == kind
    assert entry.label.device == device
    assert entry.label.log == entry.log_path.name
    assert entry.log_path.parent.name == entry.label.vllm_version
    assert versions.parse_version(entry.label.vllm_version) is not None
    prov = entry.label.provenance
    if prov.kind == "reconstructed":
        assert prov.frame and prov.built_lines, "a reconstructed log names its frame and lines"
        assert device == "cuda"
    else:
        assert prov.argv and prov.package_version == entry.label.vllm_version


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_label_is_complete_and_reviewed(entry: corpus.Entry) -> None:
    """Every number the classifier reads is in the label (so a change to any of them
    fails the corpus test), and a person has read it against the log."""
    assert entry.label.reviewed, "run `vllm-bootdiag corpus --write-expected`, read, then review"
    assert entry.label.expected == corpus.expected_from(entry)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_label_names_the_rule_the_table_holds(entry: corpus.Entry) -> None:
    """The label's rule is a rule of the table, yields the label's kind (directly, or
    through CUDA-OOM phase attribution), and its range holds the log's version."""
    rule_id = entry.label.expected.get("rule_id")
    kind = entry.label.expected["kind"]
    version, want_rule, _stem = entry.id.split("/")
    assert version == entry.label.vllm_version
    if kind == "unknown":
        assert rule_id is None and want_rule == "unknown"
        return
    assert rule_id == want_rule
    rule = BY_ID[rule_id]
    assert rule.outcome == kind or rule.attribution == "cuda_oom_phase"
    assert versions.in_range(versions.normalize(entry.label.vllm_version), rule.vllm)


def test_ids_select_by_rule() -> None:
    ids = [e.id for e in ENTRIES]
    assert len(set(ids)) == len(ids)
    assert any("/KV004/" in i for i in ids) and any("/unknown/" in i for i in ids)


def _flat_copy(tmp_path: Path, n: int = 3) -> list[corpus.Entry]:
    """A capture's flat `--out DIR`: logs and labels side by side, no version folder."""
    picked = [e for e in ENTRIES if e.label.vllm_version == "0.32.0"][:n]
    for e in picked:
        shutil.copy(e.log_path, tmp_path / e.log_path.name)
        shutil.copy(e.label_path, tmp_path / e.label_path.name)
    return picked


def test_flat_folder_is_checked(tmp_path: Path) -> None:
    picked = _flat_copy(tmp_path)
    results = corpus.check(tmp_path)
    assert [r.id for r in results] == sorted(e.id for e in picked)
    assert all(r.ok for r in results)


def test_write_expected_on_a_flat_folder_fills_numbers_and_rule(tmp_path: Path) -> None:
    picked = _flat_copy(tmp_path, 1)[0]
    label = tmp_path / picked.label_path.name
    raw = json.loads(label.read_text())
    raw["expected"] = {"kind": raw["expected"]["kind"]}  # as capture writes it
    label.write_text(json.dumps(raw))
    cmd = [sys.executable, "-m", "vllm_bootdiag", "corpus", str(tmp_path), "--write-expected"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "1 of 1 logs" in r.stdout
    written = json.loads(label.read_text())
    assert written["expected"] == picked.label.expected
    assert written["reviewed"] is False  # numbers changed: a person reads them again


def test_adding_only_the_rule_id_keeps_the_review(tmp_path: Path) -> None:
    picked = _flat_copy(tmp_path, 1)[0]
    label = tmp_path / picked.label_path.name
    raw = json.loads(label.read_text())
    del raw["expected"]["rule_id"]
    label.write_text(json.dumps(raw))
    corpus.check(tmp_path, write_expected=True)
    written = json.loads(label.read_text())
    assert written["expected"]["rule_id"] == picked.label.expected["rule_id"]
    assert written["reviewed"] is True


@pytest.mark.parametrize("layout", ["empty", "logs-without-labels"])
def test_a_folder_without_labelled_logs_is_an_error(tmp_path: Path, layout: str) -> None:
    if layout == "logs-without-labels":
        shutil.copy(ENTRIES[0].log_path, tmp_path / ENTRIES[0].log_path.name)
    cmd = [sys.executable, "-m", "vllm_bootdiag", "corpus", str(tmp_path), "--write-expected"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "no labelled logs" in r.stderr and "0 of 0" not in r.stdout
    assert "Traceback" not in r.stderr
    if layout == "logs-without-labels":
        assert "1 .log files without a label" in r.stderr


def test_corpus_checks_with_user_rules(tmp_path: Path) -> None:
    """A platform's own corpus, labelled with its own rule: `corpus DIR --rules FILE`."""
    base = next(e for e in ENTRIES if e.label.vllm_version == "0.32.0")
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "disk_full__quota__cpu.log"
    head = base.log_path.read_text(encoding="utf-8").splitlines()[:40]
    log.write_text("\n".join([*head, QUOTA]) + "\n", encoding="utf-8")
    label = json.loads(base.label_path.read_text())
    label.update(log=log.name, log_sha256=corpus.sha256(log))
    label["expected"] = {"kind": "disk_full", "rule_id": "WK001"}
    log.with_suffix(".json").write_text(json.dumps(label))
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([QUOTA_RULE]))

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "vllm_bootdiag", "corpus", str(logs), "--fail-on-failure"]
        return subprocess.run([*cmd, *extra], capture_output=True, text=True, timeout=120)

    without = run()
    assert without.returncode == 1 and "0 of 1 logs" in without.stdout
    r = run("--rules", str(rules), "--json")
    assert r.returncode == 0, r.stderr
    assert [d["ok"] for d in json.loads(r.stdout)["corpus"]] == [True]

    rules.write_text(json.dumps([{**QUOTA_RULE, "patterns": ["(unbalanced"]}]))
    bad = run("--rules", str(rules))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "WK001" in bad.stderr
    mine = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", "corpus", "mine", str(logs), "--rules", "x"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert mine.returncode == 2 and mine.stderr.count("\n") == 1
