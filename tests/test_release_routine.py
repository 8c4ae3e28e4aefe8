"""CONTRIBUTING.md's new-release routine, steps 1, 2 and 4, on a synthetic release.

Release "0.99.0" (a version no real release has) rewords the KV capacity check:
the old and new releases are small wheel-like zips written here in the shape of
vLLM's source; the new release's boot log is the real 0.32.0 corpus log with its
version lines and that one sentence rewritten from the new template.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from vllm_bootdiag import corpus, pipeline
from vllm_bootdiag.release import source_scan, sources
from vllm_bootdiag.rules import BY_ID, RULES, Rule
from vllm_bootdiag.rules.ruleset import RuleSet

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
REAL = CORPUS / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"

KV_CHECK = """
def _check_enough_kv_cache_memory(max_model_len, needed_memory, available_memory, est):
    estimated_msg = ""
    if est > 0:
        estimated_msg = (
            "Based on the available memory, "
            f"the estimated maximum model length is {est}. "
        )
    raise ValueError(
        SENTENCE
        "Try increasing `gpu_memory_utilization` (which also controls CPU memory "
        "on the CPU backend) or decreasing `max_model_len` when initializing the engine."
    )
"""
OLD_SENTENCE = (
    'f"To serve at least one request with the model\'s max seq len ({max_model_len}), "\n'
    '        f"({format_gib(needed_memory)} GiB KV cache is needed, which is larger than the "\n'
    '        f"available KV cache memory ({format_gib(available_memory)} GiB). {estimated_msg}"'
)
NEW_SENTENCE = (
    'f"To serve one request of the model\'s max seq len ({max_model_len}), "\n'
    '        f"{format_gib(needed_memory)} GiB of KV cache is needed, but only "\n'
    '        f"{format_gib(available_memory)} GiB is available. {estimated_msg}"'
)
BANNER = (
    'def log_version(lgr, v):\n    lgr.info("vLLM server version %s, serving model %s", v, m)\n'
)

_OLD_LINE = re.compile(
    r"To serve at least one request with the model's max seq len \((\d+)\), \(([\d.]+) GiB KV "
    r"cache is needed, which is larger than the available KV cache memory \(([\d.]+) GiB\)\. "
)


def _wheel(tmp: Path, version: str, sentence: str) -> Path:
    path = tmp / f"vllm-{version}-cp38-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/v1/core/kv_cache_planning.py", KV_CHECK.replace("SENTENCE", sentence))
        z.writestr("vllm/entrypoints/common/startup.py", BANNER)
    return path


def _step2_rules() -> tuple[RuleSet, Rule]:
    """Step 2 as CONTRIBUTING.md says: close the old rule's range at <0.99, add a sibling
    with the next id of its family, the same outcome, the new wording as its example and
    the old one as its counter-example."""
    old = BY_ID["KV004"]
    family = max(int(r.id[2:]) for r in RULES if r.id.startswith("KV"))
    new_id = f"KV{family + 1:03d}"
    g = r"\d+(?:\.\d+)?"
    example = (
        "ValueError: To serve one request of the model's max seq len (131072), 4.0 GiB of KV "
        "cache is needed, but only 1.0 GiB is available. Based on the available memory, the "
        "estimated maximum model length is 32640. Try increasing `gpu_memory_utilization`."
    )
    sibling = Rule(
        id=new_id,
        name="kv-shortfall-but-only",
        vllm=">=0.99",
        outcome=old.outcome,
        literal="GiB of KV cache is needed, but only",
        source_pattern=r"max seq len \(\{\}\), \{\} GiB of KV cache is needed, but only \{\} GiB",
        patterns=(
            r"To serve one request of the model's max seq len \((?P<max_model_len>\d+)\), "
            rf"(?P<needed_gib>{g}) GiB of KV cache is needed, but only (?P<available_gib>{g}) "
            r"GiB is available\. (?:Based on the available memory, the estimated maximum model "
            r"length is (?P<estimated_max_model_len>-?\d+)\. )?",
        ),
        examples=(example,),
        counter_examples=old.examples,
        summary=old.summary,
        remediation=old.remediation,
        references=("vllm/v1/core/kv_cache_planning.py:10 (0.99.0)",),
    )
    closed = old.model_copy(update={"vllm": ">=0.22,<0.99"})
    table = [closed if r.id == old.id else r for r in RULES]
    return RuleSet([*table, sibling]), sibling


def _new_release_log() -> str:
    """The real 0.32.0 log as release 0.99.0 would print it."""
    text = REAL.read_text()
    text = text.replace("version 0.32.0", "version 0.99.0").replace("(v0.32.0)", "(v0.99.0)")
    text, n = _OLD_LINE.subn(
        r"To serve one request of the model's max seq len (\1), \2 GiB of KV cache is needed, "
        r"but only \3 GiB is available. ",
        text,
    )
    assert n >= 1
    return text


def test_steps_1_2_4_on_a_synthetic_release(tmp_path: Path) -> None:
    old = _wheel(tmp_path, "0.32.0", OLD_SENTENCE)
    new = _wheel(tmp_path, "0.99.0", NEW_SENTENCE)

    # Step 1: scan-source OLD NEW names the reworded rule, where it was, and its new wording.
    cmd = [sys.executable, "-m", "vllm_bootdiag", "scan-source", str(old), str(new), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    kv004 = next(f for f in json.loads(r.stdout)["rules"] if f["rule_id"] == "KV004")
    assert kv004["status"] == "drift" and kv004["change"] == "reworded"
    assert kv004["old_locations"] == ["vllm/v1/core/kv_cache_planning.py:9"]
    assert kv004["closest"]["location"] == "vllm/v1/core/kv_cache_planning.py:9"
    assert kv004["closest"]["diff"].startswith("To serve [-at least-] one request [-with-] {+of+}")

    # Step 2: with the sibling added and the old range closed, both releases agree.
    rules, sibling = _step2_rules()
    for path, ok_ids in ((new, {sibling.id}), (old, {"KV004"})):
        found = source_scan.check_rules(sources.load(path), rules=list(rules))
        by_id = {f.rule_id: f for f in found.findings}
        assert {by_id["KV004"].status, by_id[sibling.id].status} == {"ok", "absent"}
        assert {i for i in ("KV004", sibling.id) if by_id[i].status == "ok"} == ok_ids

    # The rule written in a file first, as CONTRIBUTING.md's step 1 suggests: scan-source
    # --rules checks it against the new release before it lands in the table.
    rule_file = tmp_path / "new-rules.json"
    rule_file.write_text(json.dumps([sibling.model_dump(mode="json")]))
    r = subprocess.run([*cmd, "--rules", str(rule_file)], capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    found = {f["rule_id"]: f for f in json.loads(r.stdout)["rules"]}
    assert found[sibling.id]["status"] == "ok"
    assert found[sibling.id]["locations"] == ["vllm/v1/core/kv_cache_planning.py:9"]

    # Step 4: the captured log (as capture writes it: the kind only) gets its numbers and
    # rule from --write-expected, and waits for a person's review.
    folder = tmp_path / "out"
    folder.mkdir()
    log = folder / "kv_cache_shortfall__llama1b-kvspace1__cpu.log"
    log.write_text(_new_release_log())
    label = json.loads(REAL.with_suffix(".json").read_text())
    label.update(
        log_sha256=corpus.sha256(log),
        vllm_version="0.99.0",
        expected={"kind": "kv_cache_shortfall"},
    )
    label["provenance"]["package_version"] = "0.99.0"
    log.with_suffix(".json").write_text(json.dumps(label))
    assert pipeline.classify_file(log).primary.rule_id != sibling.id  # before step 2's rule
    results = corpus.check(folder, write_expected=True, rules=rules)
    assert [(res.id, res.ok) for res in results] == [
        (f"0.99.0/{sibling.id}/kv_cache_shortfall__llama1b-kvspace1__cpu", True)
    ]
    written = json.loads(log.with_suffix(".json").read_text())
    assert written["expected"] == {
        "kind": "kv_cache_shortfall",
        "rule_id": sibling.id,
        "max_model_len": 131072,
        "needed_gib": 4.0,
        "available_gib": 1.0,
        "estimated_max_model_len": 32640,
    }
    assert written["reviewed"] is False
    # the same from the command line, the new rule in its file (the old one still in range)
    log.with_suffix(".json").write_text(json.dumps(label))
    step4 = [sys.executable, "-m", "vllm_bootdiag", "corpus", str(folder), "--write-expected"]
    r = subprocess.run([*step4, "--rules", str(rule_file)], capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0 and "1 of 1 logs classify to their label" in r.stdout, r.stderr
    assert json.loads(log.with_suffix(".json").read_text())["expected"] == written["expected"]
    shutil.rmtree(folder)
