"""scan-source: the rule table and the engine's strings checked against a release.

The releases here are small zips written by the test in the shape of vLLM's
source (the same f-string fields and wording the catalog records for 0.32.0 and
0.33.0, the same files), not copied from vLLM. Versions 0.31.0/0.32.0 are used
so that rule ranges closed at 0.33 do not change what is tested.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from vllm_bootdiag.release import engine_strings, report, source_scan, sources
from vllm_bootdiag.rules import Rule

KV_SHORTFALL = """
def _check_enough_kv_cache_memory(max_model_len, needed_memory, available_memory, est):
    estimated_msg = ""
    if est > 0:
        estimated_msg = (
            "Based on the available memory, "
            f"the estimated maximum model length is {est}. "
        )
    raise ValueError(
        f"To serve at least one request with the model's max seq len "
        f"({max_model_len}), ({format_gib(needed_memory)} GiB KV "
        f"cache is needed, which is larger than the available KV cache "
        f"memory ({format_gib(available_memory)} GiB). {estimated_msg}"
        "Try increasing `gpu_memory_utilization` (which also controls CPU memory "
        "on the CPU backend) or decreasing `max_model_len` when initializing the engine."
    )
"""

CPU_WORKER_OLD = """
class CPUWorker:
    def determine_available_memory(self):
        if self.requested_cpu_memory > available_memory:
            raise ValueError(
                f"Available memory on node {cpu_core.numa_node} "
                f"({format_gib(available_memory)}/"
                f"{format_gib(memory_status.total_memory)} GiB) on startup "
                f"is less than desired CPU memory utilization "
                f"({gpu_memory_utilization}, "
                f"{format_gib(self.requested_cpu_memory)} GiB). "
                "On the CPU backend, the `--gpu-memory-utilization` flag "
                "controls the fraction of CPU memory reserved (despite its "
                "name)."
            )
"""

# 0.33.0's CPU-worker message, reworded so that no rule reads it
# (HM008 reads the real one): a new boot message for the gap finder.
CPU_WORKER_NEW = """
class CPUWorker:
    def determine_available_memory(self):
        if requested_memory_for_kv <= 0:
            in_use = math.ceil(consumed_memory / total * 100)
            msg = (
                f"The worker process already holds {format_gib(consumed_memory)} GiB "
                "(model weights and runtime), more than the "
                f"{format_gib(self.requested_cpu_memory)} GiB of CPU memory "
                f"set aside for it on node {cpu_core.numa_node}, leaving none "
                "for the KV cache. To resolve: increase "
                f"`--gpu-memory-utilization` to more than {in_use / 100:.2f}."
            )
            raise ValueError(msg)
"""

SHM_OLD = """
def check_shm(shm_path, allocation_name, required_bytes, free_bytes, mib):
    raise RuntimeError(
        f"Insufficient space in {shm_path} for {allocation_name}: "
        f"{required_bytes / mib:.0f} MiB required, "
        f"{free_bytes / mib:.0f} MiB free. Increase {shm_path} "
        "(e.g. --shm-size or --ipc=host)."
    )
"""

SHM_NEW = SHM_OLD.replace("Insufficient space in", "Not enough space in")

BANNER = """
def log_version_and_model(lgr, version, model_name):
    message = "vLLM server version %s, serving model %s"
    logo_template = Template(
        " ${o}▄▄${r} ${b}▄█${r} ${w}█     █     █ ▀▄▀ █${r}  version ${w}%s${r}\\n"
    )
    lgr.info(message, version, model_name)
"""

RUNNER = """
class GPUModelRunner:
    def load_model(self):
        logger.info_once("{loaded} took %s GiB memory and %.6f seconds", gib, secs)

    def capture_model(self):
        pass

    def profile_run(self):
        pass
"""

KV_GROUPS = """
def get_kv_cache_config_from_groups(specs):
    if not specs:
        raise ValueError("No KV cache groups could be formed from the layer specs of this model")
"""

WINDOW_CHECK = """
class {owner}:
    def {function}(self):
        if not HAS_TRITON:
            raise ValueError("Sliding window attention needs Triton on this platform.")
"""

API_HANDLER = """
async def abort_request(request_id):
    logger.warning("Request %s was aborted by the client before it was scheduled", request_id)
"""


def _line(src: str, needle: str) -> int:
    """The 1-based line of `needle` in a source text (where the scan must place it)."""
    return next(n for n, line in enumerate(src.splitlines(), 1) if needle in line)


def _release(tmp: Path, version: str, *, new: bool) -> Path:
    """A wheel-like zip of a synthetic release: `new` is the layout after 0.33's moves."""
    files = {
        "vllm/__init__.py": "",
        "vllm/v1/worker/cpu_worker.py": CPU_WORKER_NEW if new else CPU_WORKER_OLD,
        "vllm/distributed/device_communicators/shm_broadcast.py": SHM_NEW if new else SHM_OLD,
        "vllm/v1/worker/gpu_model_runner.py": RUNNER.replace(
            "{loaded}", "Model load" if new else "Model loading"
        ),
        "vllm/entrypoints/openai/api_server.py": API_HANDLER if new else "",
        "vllm/broken.py": "def f(:\n",  # an unparsable file is skipped
        f"vllm-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}\n",
    }
    kv = "vllm/v1/core/kv_cache_planning.py" if new else "vllm/v1/core/kv_cache_utils.py"
    files[kv] = KV_SHORTFALL + KV_GROUPS  # the file is renamed, its functions kept
    if new:  # the same check, now raised while the worker starts
        owner, function, where = "Worker", "__init__", "vllm/v1/worker/gpu_worker.py"
    else:
        owner, function, where = "VllmConfig", "_set_runner", "vllm/config/vllm.py"
    files[where] = WINDOW_CHECK.format(owner=owner, function=function)
    banner = (
        "vllm/entrypoints/common/startup.py" if new else "vllm/entrypoints/serve/utils/api_utils.py"
    )
    files[banner] = BANNER
    path = tmp / f"release-{version}.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return _release(tmp_path, "0.31.0", new=False), _release(tmp_path, "0.32.0", new=True)


def test_templates_render_fields_and_know_how_they_are_printed() -> None:
    src = (
        "def f(x):\n"
        "    msg = f'bad {x!r} value {x:.2f}'\n"
        "    logger.warning('width %d too large', x)\n"
        "    log.error('Failed: {}'.format(x))\n"
        "    raise ValueError(msg)\n"
    )
    found, defs = sources.templates(src, "vllm/x.py")
    by_text = {t.text: t for t in found}
    assert by_text["bad {!r} value {:.2f}"].kind == "raise"
    assert by_text["bad {!r} value {:.2f}"].exception == "ValueError"
    assert (
        by_text["bad {!r} value {:.2f}"].line == 5
        and by_text["bad {!r} value {:.2f}"].function == "f"
    )
    assert by_text["width %d too large"].kind == "warning"
    assert by_text["Failed: {}"].kind == "error"
    assert defs == [("f", 1)]
    assert sources.templates("def f(:\n") == ([], [])
    assert sources.templates("x = " + "(" * 400 + ")" * 400 + "\n") == ([], [])
    assert sources.templates("x = " + "+".join(['"s"'] * 50_000)) == ([], [])  # too deep


def test_a_wording_in_range_is_found_where_it_is(pair: tuple[Path, Path]) -> None:
    rel = sources.load(pair[0])
    assert str(rel.version) == "0.31.0"  # from the METADATA of a zip not named like a wheel
    scan = source_scan.check_rules(rel)
    by_id = {f.rule_id: f for f in scan.findings}
    assert by_id["KV004"].status == "ok"
    assert by_id["KV004"].locations == (
        f"vllm/v1/core/kv_cache_utils.py:{_line(KV_SHORTFALL, 'raise')}",
    )
    assert by_id["HM005"].status == "ok"
    assert by_id["KV003"].status == "absent"  # the older wording, absent as its range says
    assert {r for r, _by in scan.unchecked} >= {"CM001", "LC001"}  # PyTorch's, uvicorn's text
    assert "CM001" not in by_id


def test_removed_and_reworded_messages(pair: tuple[Path, Path]) -> None:
    scan = source_scan.check_rules(sources.load(pair[1]))
    by_id = {f.rule_id: f for f in scan.findings}
    hm005 = by_id["HM005"]
    assert hm005.status == "drift" and hm005.change == "removed"
    # the nearest template is named, but it is another message, not a rewording
    assert hm005.closest is not None and hm005.closest.similarity < source_scan.REWORDED
    en003 = by_id["EN003"]
    assert en003.status == "drift" and en003.change == "reworded"
    assert en003.closest is not None
    assert en003.closest.template.file.endswith("shm_broadcast.py")
    assert en003.closest.diff.startswith("[-Insufficient-] {+Not enough+} space in")


def test_a_message_that_moved_file_is_reported_against_its_reference(
    pair: tuple[Path, Path],
) -> None:
    by_id = {f.rule_id: f for f in source_scan.check_rules(sources.load(pair[1])).findings}
    move = by_id["KV004"].moved
    assert move is not None and move.kind == "file"
    assert move.reference.file == "kv_cache_utils.py" and str(move.reference.version) == "0.32.0"
    assert move.found == (f"vllm/v1/core/kv_cache_planning.py:{_line(KV_SHORTFALL, 'raise')}",)


def test_a_reference_to_any_line_of_the_statement_is_in_place(pair: tuple[Path, Path]) -> None:
    from vllm_bootdiag.rules import BY_ID

    rel = sources.load(pair[0])  # 0.31.0: KV004's wording in kv_cache_utils.py
    raise_line = _line(KV_SHORTFALL, "raise")
    found = source_scan.located(rel, BY_ID["KV004"])
    for cited, moved in ((raise_line, False), (raise_line + 2, False), (raise_line + 40, True)):
        ref = (f"vllm/v1/core/kv_cache_utils.py:{cited} (0.31.0)",)
        rule = BY_ID["KV004"].model_copy(update={"references": ref})
        move = source_scan.moved(rule, rel, found)
        assert (move is not None and move.kind == "line") is moved


def test_outside_range_is_reported(tmp_path: Path) -> None:
    rel = sources.load(_release(tmp_path, "0.21.0", new=False))
    by_id = {f.rule_id: f for f in source_scan.check_rules(rel).findings}
    assert by_id["KV004"].status == "outside_range" and not by_id["KV004"].ok


def test_references_are_parsed_with_their_versions() -> None:
    from vllm_bootdiag.rules import BY_ID

    refs = source_scan.references(BY_ID["HM006"])
    assert [(r.file, r.lines, str(r.version)) for r in refs][:2] == [
        ("vllm/v1/worker/cpu_worker.py", (168, 190), "0.20.0"),
        ("cpu_worker.py", (220, 242), "0.32.0"),
    ]


def test_gaps_are_new_boot_messages_no_rule_reads_ranked(pair: tuple[Path, Path]) -> None:
    new, old = sources.load(pair[1]), sources.load(pair[0])
    found = [g.template.text for g in report.gaps.find(new, old)]
    worker = next(
        i for i, t in enumerate(found) if t.startswith("The worker process already holds")
    )
    handler = next(
        i
        for i, t in enumerate(found)
        if t.startswith("Request {} was aborted") or t.startswith("Request %s")
    )
    assert worker < handler
    gaps = report.gaps.find(new, old)
    assert gaps[worker].likelihood == "high" and gaps[handler].likelihood == "low"
    assert gaps[worker].template.location == (
        f"vllm/v1/worker/cpu_worker.py:{_line(CPU_WORKER_NEW, 'raise')}"  # the raise, not `msg =`
    )
    # a message some rule reads is no gap; with the older release, old messages are none
    assert not any("To serve at least one request" in t for t in found)
    assert all(g.new for g in gaps)
    assert any(t.startswith("Not enough space in") for t in found)  # EN003's rewording
    # the same words raised from another function are new; a renamed file brings none
    assert "Sliding window attention needs Triton on this platform." in found
    assert not any(t.startswith("No KV cache groups") for t in found)
    assert any(
        t.startswith("No KV cache groups") for t in (g.template.text for g in report.gaps.find(new))
    )
    # alone, a release's unmatched boot messages are gaps whether new or not
    alone = [g.template.text for g in report.gaps.find(old)]
    assert any(t.startswith("Available memory on node") for t in alone) is False  # HM005's
    assert all(g.new is None for g in report.gaps.find(old))


def test_every_kind_of_engine_string_is_probed() -> None:
    """Reading the engine's tables by name must not quietly find none after a refactor."""
    groups: dict[str, int] = {}
    for probe in engine_strings.probes():
        groups[probe.group] = groups.get(probe.group, 0) + 1
    assert set(groups) == {"version", "marker", "raw_marker", "oom_frame"}
    assert groups["version"] >= 3 and groups["marker"] >= 20 and groups["oom_frame"] >= 10


def test_engine_strings_gone_and_moved(pair: tuple[Path, Path]) -> None:
    checks = engine_strings.check(sources.load(pair[1]), sources.load(pair[0]))
    by = {(c.probe.group, c.probe.name): c for c in checks}
    loading = by[("marker", "Model loading took")]
    assert loading.status == "gone"  # the weights_loaded phase marker lost its wording
    banner = by[("marker", "vLLM server version")]
    assert banner.status == "ok" and banner.moved
    assert banner.locations == (f"vllm/entrypoints/common/startup.py:{_line(BANNER, 'message =')}",)
    version_lines = [c for c in checks if c.probe.group == "version" and c.status == "ok"]
    assert version_lines and all(c.moved for c in version_lines)
    assert by[("oom_frame", "capture_model")].status == "ok"
    assert by[("raw_marker", "Uvicorn running on")].status == "not_vllm"
    action = engine_strings.needs_action(checks)
    assert loading in action  # a family left with no wording: add the new one
    assert banner not in action and banner in engine_strings.moved(checks)  # still read
    assert by[("oom_frame", "capture_model")] not in action


def test_report_json_is_stable_and_text_fits_80_columns(pair: tuple[Path, Path]) -> None:
    rep = report.scan(pair[1], pair[0])
    data = json.loads(json.dumps(rep.as_dict()))
    assert set(data) == {
        "schema_version",
        "release",
        "old",
        "needs_action",
        "summary",
        "rules",
        "unchecked",
        "gaps",
        "engine_strings",
        "packages",
        "other_rules",
    }
    assert data["schema_version"] == report.SCHEMA_VERSION
    assert data["release"]["vllm_version"] == "0.32.0" and data["old"]["vllm_version"] == "0.31.0"
    assert data["needs_action"] is True
    assert data["summary"]["removed"] >= 1 and data["summary"]["moved"] >= 1
    hm005 = next(r for r in data["rules"] if r["rule_id"] == "HM005")
    assert hm005["old_locations"] == [
        f"vllm/v1/worker/cpu_worker.py:{_line(CPU_WORKER_OLD, 'raise')}"
    ]
    for all_ in (False, True):
        text = report.render(rep, all_=all_)
        assert max(len(line) for line in text.splitlines()) <= 80
    assert any(len(line) > 80 for line in report.render(rep, wide=True).splitlines())
    text = report.render(rep)
    assert "HM005  removed" in text and "KV004  kv_cache_utils.py:1030 (0.32.0)" in text


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "vllm_bootdiag", "scan-source", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_cli_one_release_two_releases_and_exit_codes(pair: tuple[Path, Path]) -> None:
    r = _cli(str(pair[1]), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["old"] is None
    r = _cli(str(pair[0]), str(pair[1]), "--fail-on-failure")
    assert r.returncode == 1 and "against 0.31.0" in r.stdout


def test_an_unpacked_tree_reads_like_its_wheel(pair: tuple[Path, Path], tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    with zipfile.ZipFile(pair[1]) as z:
        z.extractall(tree)
    a, b = sources.load(tree), sources.load(pair[1])
    assert a.version == b.version and [t.location for t in a.templates] == [
        t.location for t in b.templates
    ]


@pytest.mark.parametrize("damage", ["truncated", "not-a-zip", "no-vllm", "missing", "empty-dir"])
def test_a_bad_release_is_one_clear_error(
    pair: tuple[Path, Path], tmp_path: Path, damage: str
) -> None:
    bad = tmp_path / "bad" / "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl"
    bad.parent.mkdir()
    if damage == "truncated":
        data = pair[1].read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    elif damage == "not-a-zip":
        bad.write_bytes(b"<html>404</html>")
    elif damage == "no-vllm":
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("other/__init__.py", "")
    elif damage == "empty-dir":
        bad = tmp_path / "bad"
    r = _cli(str(bad))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("vllm-bootdiag: error: ")
    assert "Traceback" not in r.stderr and r.stdout == ""


# A user's rule for the synthetic release's new CPU-worker message (CPU_WORKER_NEW), as a
# release manager writes one on release day and checks with `scan-source --rules FILE`.
NEW_WORKER_RULE = {
    "id": "WK900",
    "name": "cpu-worker-holds-more-than-set-aside",
    "vllm": ">=0.32",
    "outcome": "cpu_memory_reservation_exceeded",
    "literal": "of CPU memory set aside for it on node",
    "source_pattern": r"The worker process already holds \{\} GiB ",
    "patterns": [
        r"The worker process already holds (?P<used_gib>[\d.]+) GiB \(model weights and "
        r"runtime\), more than the (?P<reserved_gib>[\d.]+) GiB of CPU memory set aside for "
        r"it on node (?P<numa_node>\d+)"
    ],
    "examples": [
        "ValueError: The worker process already holds 2.31 GiB (model weights and runtime), "
        "more than the 2.2 GiB of CPU memory set aside for it on node 0, leaving none for "
        "the KV cache."
    ],
    "summary": "The CPU worker already uses more memory than was reserved for it.",
    "remediation": "Raise --gpu-memory-utilization, or set the KV cache size explicitly.",
}


def test_user_rules_are_checked_and_close_their_gap(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [NEW_WORKER_RULE]}))
    worker = f"vllm/v1/worker/cpu_worker.py:{_line(CPU_WORKER_NEW, 'raise')}"

    without = json.loads(_cli(str(pair[1]), "--json").stdout)
    assert worker in [g["location"] for g in without["gaps"]]
    assert "WK900" not in [f["rule_id"] for f in without["rules"]]

    r = _cli(str(pair[1]), "--json", "--rules", str(rules))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    wk = next(f for f in doc["rules"] if f["rule_id"] == "WK900")
    assert wk["status"] == "ok" and wk["locations"] == [worker]
    assert worker not in [g["location"] for g in doc["gaps"]]
    assert doc["summary"]["rules_checked"] == without["summary"]["rules_checked"] + 1

    # against the older release, which lacks the message: in range, wording gone
    old = json.loads(_cli(str(pair[0]), "--json", "--rules", str(rules), "--vllm-version",
                          "0.32.0").stdout)  # fmt: skip
    assert next(f for f in old["rules"] if f["rule_id"] == "WK900")["status"] == "drift"


def test_a_platforms_own_rule_is_not_vllm_drift(pair: tuple[Path, Path], tmp_path: Path) -> None:
    """`--rules` is for a platform's wrapper messages too (the worker's disk quota): with
    `printed_by = "platform"` such a rule is listed as not checkable, not as a vLLM wording
    `removed` that makes every scan say "action needed"."""
    from fakes.user_rules import QUOTA_RULE

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{**QUOTA_RULE, "printed_by": "vllm"}]))
    as_vllm = json.loads(_cli(str(pair[1]), "--json", "--rules", str(rules)).stdout)
    assert next(f for f in as_vllm["rules"] if f["rule_id"] == "WK001")["status"] == "drift"
    rules.write_text(json.dumps([{**QUOTA_RULE, "printed_by": "platform"}]))
    r = _cli(str(pair[1]), "--json", "--rules", str(rules))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "WK001" not in [f["rule_id"] for f in doc["rules"]]
    wk = next(f for f in doc["other_rules"] if f["rule_id"] == "WK001")
    assert (
        wk["status"] == "not_checkable"
        and doc["summary"]["drift"] == as_vllm["summary"]["drift"] - 1
    )
    text = _cli(str(pair[1]), "--rules", str(rules)).stdout
    assert "platform: a platform's own lines: 1 not checkable" in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"examples": ["words the pattern does not read"]}, "WK900"),
        ({"id": "HM008"}, "HM008"),
        ({"outcome": "no_such_kind"}, "outcome"),
    ],
)
def test_a_bad_rule_file_is_one_line(
    pair: tuple[Path, Path], tmp_path: Path, change: dict[str, object], words: str
) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{**NEW_WORKER_RULE, **change}]))
    r = _cli(str(pair[1]), "--rules", str(rules))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("vllm-bootdiag: error: --rules: ")
    assert words in r.stderr and "Traceback" not in r.stderr


def test_the_json_document_validates_against_its_schema(pair: tuple[Path, Path]) -> None:
    """`scan-source --json`, alone and OLD NEW (drift, closest, moves, gaps all present),
    against `vllm-bootdiag schema scan-source`: a key added or dropped in as_dict fails."""
    jsonschema = pytest.importorskip("jsonschema")
    r = subprocess.run([sys.executable, "-m", "vllm_bootdiag", "schema", "scan-source"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    schema = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    check = jsonschema.Draft202012Validator(schema)
    for args in ((str(pair[1]),), (str(pair[0]), str(pair[1]))):
        doc = json.loads(_cli(*args, "--json").stdout)
        errors = [f"{list(e.absolute_path)}: {e.message[:300]}" for e in check.iter_errors(doc)]
        assert not errors, errors
    assert doc["old"] is not None and any(f["closest"] for f in doc["rules"])
    assert any(f["moved"] for f in doc["rules"]) and doc["gaps"] and doc["engine_strings"]


# 0.33.0's shapes of two messages whose older rules are out of range there (written for the
# test): the NUMA check's newer wording shares the older one's prefix (PF034 / PF035), and
# the `--model` message is only logged as a warning since 0.12 (CF020 reads the raise).
NUMA_NEW = """
class OMPProcessManager:
    def _bind_threads(self, allowed_numa_nodes, local_world_size):
        assert len(allowed_numa_nodes) >= local_world_size, (
            f"Not enough allowed NUMA nodes to bind threads of "
            f"{local_world_size} local CPUWorkers. "
            f"Allowed NUMA nodes are {allowed_numa_nodes}. "
            "Please try to bind threads manually or decrease DP/TP/PP."
        )
"""
MODEL_WARNING = """
class FlexibleArgumentParser:
    def parse_args(self, args):
        if args and args[0] == "serve":
            logger.warning(
                "With `vllm serve`, you should provide the model as a "
                "positional argument or in a config file instead of via "
                "the `--model` option. "
                "The `--model` option will be removed in a future version."
            )
"""


def test_a_sibling_or_a_warning_is_not_an_old_rule_outside_its_range(tmp_path: Path) -> None:
    path = tmp_path / "release-0.33.0.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/utils/ompmultiprocessing.py", NUMA_NEW)
        z.writestr("vllm/utils/argparse_utils.py", MODEL_WARNING)
        z.writestr("vllm-0.33.0.dist-info/METADATA", "Name: vllm\nVersion: 0.33.0\n")
    by_id = {f.rule_id: f for f in source_scan.check_rules(sources.load(path)).findings}
    assert by_id["PF035"].status == "ok"
    assert by_id["PF034"].status == "absent"  # the template is PF035's message
    assert by_id["CF020"].status == "absent"  # a warning, not the ValueError CF020 reads
    # the same raise in a release where CF020's range holds it is found
    old = tmp_path / "release-0.11.0.zip"
    with zipfile.ZipFile(old, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/utils/__init__.py", MODEL_WARNING.replace(
            "logger.warning(", "raise ValueError("))  # fmt: skip
        z.writestr("vllm-0.11.0.dist-info/METADATA", "Name: vllm\nVersion: 0.11.0\n")
    cf020 = next(f for f in source_scan.check_rules(sources.load(old)).findings
                 if f.rule_id == "CF020")  # fmt: skip
    assert cf020.status == "ok"


def _as_template(rule: Rule) -> str:
    """The format string a rule's wording names: its source pattern unescaped (these are
    plain text with escaped dots and braces), or its literal."""
    import re

    pattern = rule.source_pattern
    return re.sub(r"\\(.)", r"\1", pattern) if pattern else rule.literal


def test_echo_rules_are_checked_like_any_rule(tmp_path: Path) -> None:
    """The engine's echoes ("Engine core initialization failed. See root cause above.") are
    rules with role="echo": scan-source finds their wordings, and says when one is gone."""
    from vllm_bootdiag.rules import RULES
    from vllm_bootdiag.versions import in_range

    echoes = [r for r in RULES if r.role == "echo" and r.printed_by == "vllm"
              and in_range(source_scan.Version("0.32.0"), r.vllm)]  # fmt: skip
    assert len(echoes) >= 5
    keep, drop = echoes[1:], echoes[0]
    body = "".join(
        f"def f{n}():\n    raise RuntimeError({_as_template(r)!r})\n" for n, r in enumerate(keep)
    )
    path = tmp_path / "release-0.32.0.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/v1/engine/core.py", body)
        z.writestr("vllm-0.32.0.dist-info/METADATA", "Name: vllm\nVersion: 0.32.0\n")
    by_id = {f.rule_id: f for f in source_scan.check_rules(sources.load(path)).findings}
    assert {r.id: by_id[r.id].status for r in keep} == {r.id: "ok" for r in keep}
    assert by_id[drop.id].status == "drift"


def test_markers_are_checked_within_their_ranges(tmp_path: Path) -> None:
    """A marker's wording present in a release its range excludes is a range to widen; one
    absent there is as it should be; one in range with no wording present is to add."""
    path = tmp_path / "release-0.15.0.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/entrypoints/utils.py", BANNER)  # the >=0.16 banner, in 0.15
        z.writestr("vllm-0.15.0.dist-info/METADATA", "Name: vllm\nVersion: 0.15.0\n")
    checks = engine_strings.check(sources.load(path))
    by = {(c.probe.group, c.probe.family): c for c in checks}
    banner = by[("marker", "banner_version")]
    assert banner.probe.vllm == ">=0.16" and banner.status == "outside_range"
    v0_blocks = by[("marker", "v0_blocks")]  # <0.12: not printed by 0.15, rightly
    assert v0_blocks.status == "absent"
    action = engine_strings.needs_action(checks)
    assert banner in action and v0_blocks not in action
    assert by[("marker", "weights_loaded")] in action  # in range, its wording missing
    assert by[("marker", "api_version")].status == "ok"  # the banner's first line


def _one_file_release(tmp: Path, version: str, messages: list[str]) -> sources.Release:
    path = tmp / f"release-{version}.zip"
    body = "".join(f"def f{n}():\n    raise ValueError({m!r})\n" for n, m in enumerate(messages))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/v1/worker/cpu_worker.py", body)
        z.writestr(f"vllm-{version}.dist-info/METADATA", f"Name: vllm\nVersion: {version}\n")
    return sources.load(path)


def test_a_tolerant_rule_is_in_range_where_a_rule_it_backs_up_is(tmp_path: Path) -> None:
    """Tolerant rules carry no range of their own; before the CPU node checks existed
    (0.18) their wording being absent is what their siblings' ranges say, not drift."""
    from vllm_bootdiag.rules import RULES

    by_rule = {r.id: r for r in RULES}
    old = _one_file_release(tmp_path, "0.18.0", ["Some unrelated message: {x}"])
    found = {f.rule_id: f for f in source_scan.check_rules(old).findings}
    assert found["HM005"].status == "absent"
    assert found["HM103"].status == "absent"  # backs up HM005 only (>=0.20,<0.33)
    hm005 = (  # vllm/v1/worker/cpu_worker.py (0.20-0.32), its placeholders as rendered
        "Available memory on node {} ({}/{} GiB) on startup is less than desired CPU"
        " memory utilization ({}, {} GiB)."
    )
    assert by_rule["HM005"].literal in hm005
    new = _one_file_release(tmp_path, "0.32.0", [hm005])
    found = {f.rule_id: f for f in source_scan.check_rules(new).findings}
    assert found["HM005"].status == "ok"
    assert found["HM103"].status == "ok"


def test_an_exact_rule_in_range_explains_a_template_of_another_outcome(tmp_path: Path) -> None:
    """HM009 (cpu_memory_reservation_exceeded, <0.33) reads a negative figure in HM006's
    message (insufficient_free_memory, still printed in 0.33): that message in 0.33 is
    HM006's, and HM009 is not outside its range."""
    from vllm_bootdiag.rules import RULES

    kv_check = (  # vllm/v1/worker/cpu_worker.py:242 (0.33.0), its placeholders as rendered
        "Available memory on node {} ({}/{} GiB) on kv cache allocation is less than"
        " requested memory for kv ({}/{} GiB). Reduce CPU memory used by other processes."
    )
    assert next(r for r in RULES if r.id == "HM006").literal in kv_check
    release = _one_file_release(tmp_path, "0.33.0", [kv_check])
    found = {f.rule_id: f for f in source_scan.check_rules(release).findings}
    assert found["HM006"].status == "ok"
    assert found["HM009"].status == "absent"


def test_a_quoted_field_tells_two_messages_of_the_same_words_apart(tmp_path: Path) -> None:
    """CF012 reads CacheConfig's `Invalid kv_cache_dtype: {cache_dtype!r}.` (0.33); the
    attention selector's assert prints the same words unquoted in every release since 0.16.
    Templates keep `!r`, so the assert is no CF012 outside its range."""
    selector = (
        "def get_attn_backend(kv_cache_dtype, valid):\n"
        "    assert kv_cache_dtype in valid, (\n"
        "        f'Invalid kv_cache_dtype: {kv_cache_dtype}. '\n"
        "        f'Valid values are: {valid}'\n"
        "    )\n"
    )
    cache = (
        "def check(cache_dtype, valid):\n"
        "    raise ValueError(\n"
        "        f'Invalid kv_cache_dtype: {cache_dtype!r}. '\n"
        "        f'Valid values are: {valid}'\n"
        "    )\n"
    )
    status = {}
    for version, files in (("0.32.0", {"v1/attention/selector.py": selector}),
                           ("0.33.0", {"v1/attention/selector.py": selector,
                                       "config/cache.py": cache})):  # fmt: skip
        path = tmp_path / f"release-{version}.zip"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("vllm/__init__.py", "")
            for name, src in files.items():
                z.writestr(f"vllm/{name}", src)
            z.writestr(f"vllm-{version}.dist-info/METADATA", f"Name: vllm\nVersion: {version}\n")
        found = {f.rule_id: f for f in source_scan.check_rules(sources.load(path)).findings}
        status[version] = (found["CF012"].status, found["CF012"].locations)
    assert status["0.32.0"] == ("absent", ())
    assert status["0.33.0"] == ("ok", ("vllm/config/cache.py:2",))


def test_the_tolerant_free_memory_rule_cites_where_the_message_is(tmp_path: Path) -> None:
    """HM101 backs up HM002/HM003, whose message has been in `vllm/v1/worker/utils.py` since
    0.14: scan-source on 0.33.0 reported it moved while it cited only gpu_worker.py."""
    from vllm_bootdiag.rules import BY_ID

    hm002 = _as_template(BY_ID["HM002"])
    path = tmp_path / "release-0.33.0.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("vllm/__init__.py", "")
        z.writestr("vllm/v1/worker/utils.py", f"def f():\n    raise ValueError({hm002!r})\n")
        z.writestr("vllm-0.33.0.dist-info/METADATA", "Name: vllm\nVersion: 0.33.0\n")
    found = {f.rule_id: f for f in source_scan.check_rules(sources.load(path)).findings}
    assert found["HM002"].status == "ok" and found["HM101"].status == "ok"
    assert found["HM101"].moved is None or found["HM101"].moved.kind != "file"


def test_only_a_new_gap_likely_to_end_a_boot_makes_a_comparison_act(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release adds hundreds of messages; the ones likely to end a boot decide."""
    rep = report.scan(pair[1], pair[0])
    monkeypatch.setattr(type(rep), "drift", property(lambda self: []))
    monkeypatch.setattr(type(rep), "outside", property(lambda self: []))
    monkeypatch.setattr(type(rep), "engine_action", property(lambda self: []))
    monkeypatch.setattr(type(rep), "moved", lambda self, kind: [])
    monkeypatch.setattr(type(rep.others), "to_act_on", property(lambda self: []))
    for score, expected in ((7, False), (10, True)):
        assert rep.gaps, "the synthetic pair has new gaps"
        rep.gaps = [dataclasses.replace(g, score=score) for g in rep.gaps]
        assert rep.needs_action is expected
