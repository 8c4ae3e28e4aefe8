"""`--rules FILE`: a platform's own wrapper messages as rules, beside the built-in table.

The file is read by the same Rule model as the built-in rules (examples are checked), and a bad
file is one usage error naming the rule and the field, never a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fakes.user_rules import QUOTA
from fakes.user_rules import QUOTA_RULE as RULE

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
KV_LOG = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_user_rule_reads_the_platforms_line(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [RULE]}))
    log = [*KV_LOG.read_text(encoding="utf-8").splitlines()[:40], QUOTA]
    without = _cli("classify", "--json", "-", stdin="\n".join(log) + "\n")
    assert json.loads(without.stdout)["primary"]["kind"] != "disk_full"
    r = _cli("classify", "--json", "--rules", str(rules), "-", stdin="\n".join(log) + "\n")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["primary"]["kind"] == "disk_full" and doc["primary"]["rule_id"] == "WK001"
    assert doc["remediation"] == "Give the worker a larger volume."


def test_the_watcher_reads_user_rules_too(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([RULE]))
    r = _cli("watch", "--json", "--rules", str(rules), "-", stdin=QUOTA + "\n")
    assert r.returncode == 1, r.stderr  # a failed boot
    assert json.loads(r.stdout)["primary"]["rule_id"] == "WK001"


def test_a_bad_rule_file_is_one_line_naming_rule_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{**RULE, "examples": ["no such words here"]}]))
    clash = tmp_path / "clash.json"
    clash.write_text(json.dumps([{**RULE, "id": "KV004"}]))
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    for path, words in ((bad, "WK001"), (clash, "KV004"), (broken, "JSON")):
        r = _cli("classify", "--rules", str(path), str(KV_LOG))
        assert r.returncode == 2, (path.name, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert words in r.stderr, r.stderr
