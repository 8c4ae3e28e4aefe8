"""scan-source --with: the rules other packages print, checked against those packages.

The packages here are small wheels, sdists and directories written by the tests in the
shape of the real ones (the same file names, message shapes and, for compiled code, a
binary blob with NUL-separated strings), not copied from them. No torch, no network.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from vllm_bootdiag.release import other_packages, package_sources, report, vllm_flags

HUB_ERRORS = '''
class HfHubHTTPError(Exception):
    """Docstrings quote messages too: Revision Not Found for url (not what is printed)."""


class RepositoryNotFoundError(HfHubHTTPError):
    pass


class GatedRepoError(RepositoryNotFoundError):
    pass
'''
HUB_HTTP = """
def hf_raise_for_status(response, endpoint_name=None):
    error_message = response.headers.get("X-Error-Message")
    if error_code == "RepoNotFound":
        message = (
            f"{response.status_code} Client Error."
            + "\\n\\n"
            + f"Repository Not Found for url: {response.url}."
        )
        raise RepositoryNotFoundError(message, response)
    if error_code == "RevisionNotFound":
        raise RevisionNotFoundError(
            f"{response.status_code} Client Error. Revision could not be located for url: "
            f"{response.url}."
        )
"""


def _wheel(path: Path, files: dict[str, str | bytes], name: str, version: str) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for member, data in files.items():
            z.writestr(member, data)
        z.writestr(f"{name}-{version}.dist-info/METADATA", f"Name: {name}\nVersion: {version}\n")
    return path


@pytest.fixture
def hub(tmp_path: Path) -> Path:
    files = {
        "huggingface_hub/__init__.py": "",
        "huggingface_hub/errors.py": HUB_ERRORS,
        "huggingface_hub/utils/_http.py": HUB_HTTP,
    }
    return _wheel(tmp_path / "huggingface_hub-9.9.0-py3-none-any.whl", files,
                  "huggingface_hub", "9.9.0")  # fmt: skip


# A shared object as a linker leaves it: binary, then NUL-terminated strings in .rodata.
LIBC10_CUDA = (
    b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 4
    + b"\x00CUDA out of memory. Tried to allocate \x00. GPU \x00 has a total capacity of \x00"
    + b"\x00No CUDA GPUs are available\x00" + bytes(range(256))
)  # fmt: skip


@pytest.fixture
def torch_cuda(tmp_path: Path) -> Path:
    files: dict[str, str | bytes] = {
        "torch/__init__.py": "",
        "torch/cuda/__init__.py": "def _lazy_init():\n    raise AssertionError("
        '"Torch not compiled with CUDA enabled")\n',
        "torch/lib/libc10_cuda.so": LIBC10_CUDA,
        "torch/lib/libc10.so": b"\x7fELF" + bytes(64),
    }
    return _wheel(tmp_path / "torch-9.1.0-cp311-cp311-manylinux_2_28_x86_64.whl", files,
                  "torch", "9.1.0")  # fmt: skip


def _by_id(scan: other_packages.PackageScan) -> dict[str, other_packages.Finding]:
    return {f.rule_id: f for f in scan.findings}


def _scan(given: dict[str, list[str]]) -> other_packages.PackageScan:
    return other_packages.check(other_packages.load(given))


def test_a_wording_is_found_where_the_package_raises_it(hub: Path) -> None:
    by = _by_id(_scan({"huggingface_hub": [str(hub)]}))
    ac002 = by["AC002"]
    assert ac002.status == "found" and ac002.package == "huggingface_hub 9.9.0"
    assert (
        ac002.parts[0].locations[0]
        == f"huggingface_hub/utils/_http.py:{_line(HUB_HTTP, 'raise RepositoryNotFoundError')}"
    )
    # an exception printed by its name: found at its class
    assert by["AC102"].parts[0].locations[0] == "huggingface_hub/errors.py:6"
    assert by["AC101"].status == "found"
    # AC006's text is the Hub server's: huggingface_hub's part (it appends X-Error-Message)
    assert [p.status for p in by["AC006"].parts] == ["found", "not_checkable"]


def _line(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def test_a_missing_wording_names_the_closest_text_and_skips_docstrings(hub: Path) -> None:
    ac007 = _by_id(_scan({"huggingface_hub": [str(hub)]}))["AC007"]
    assert ac007.status == "missing" and not ac007.ok
    part = ac007.parts[0]
    assert part.text == "Revision Not Found" and part.closest is not None
    # the docstring that quotes the old wording is not a find; the reworded raise is closest
    assert part.closest.template.location.startswith("huggingface_hub/utils/_http.py:")
    assert "Revision could not be located" in part.closest.template.text


def test_compiled_strings_of_a_shared_object_are_read(torch_cuda: Path) -> None:
    scan = _scan({"pytorch": [str(torch_cuda)]})
    by = _by_id(scan)
    assert scan.packages["pytorch"].build == "cuda"
    for rule in ("CM001", "CM011", "PF020"):
        assert by[rule].status == "found", rule
        assert by[rule].parts[0].locations == ("torch/lib/libc10_cuda.so",)
    assert by["IN007"].parts[0].locations == ("torch/cuda/__init__.py:2",)
    # a ROCm text in a CUDA build is not checkable, and says which wheel would be
    assert by["CM004"].status == "not_checkable" and "rocm" in (by["CM004"].reason or "")
    # torch's `CUDA error: ` (not in this wheel) and the CUDA runtime's text (in none)
    assert [p.status for p in by["CM006"].parts] == ["missing", "not_checkable"]
    assert by["DI003"].status == "missing"  # libtorch_cpu.so's text: not in this wheel


def test_a_string_cut_by_a_chunk_boundary_is_read_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import re

    monkeypatch.setattr(package_sources, "_CHUNK", 7)
    blob = b"\x00\x01CUDA out of memory. Tried to allocate \x00\x02xx\x00"
    found, read = package_sources._strings(io.BytesIO(blob), re.compile(b"memory"), 1 << 20)
    assert found == ["CUDA out of memory. Tried to allocate "] and read == len(blob)
    found, _ = package_sources._strings(io.BytesIO(blob), re.compile(b"memory"), 10)
    assert found == []  # the budget bounds what is read


def test_an_sdist_native_source_and_an_installed_directory(tmp_path: Path) -> None:
    sdist = tmp_path / "safetensors-0.9.0.tar.gz"
    rust = b'fn f() -> E {\n    E::new(format!("Error while deserializing header: {err}"))\n}\n'
    with tarfile.open(sdist, "w:gz") as t:
        for name, data in (
            ("safetensors-0.9.0/src/lib.rs", rust),
            ("safetensors-0.9.0/PKG-INFO", b"Name: safetensors\nVersion: 0.9.0\n"),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, __import__("io").BytesIO(data))  # fmt: skip
    site = tmp_path / "site-packages"
    (site / "uvicorn" / "lifespan").mkdir(parents=True)
    (site / "uvicorn" / "lifespan" / "on.py").write_text(
        'def startup(self):\n    self.logger.info("Application startup complete.")\n'
    )
    (site / "uvicorn-0.99.0.dist-info").mkdir()
    (site / "uvicorn-0.99.0.dist-info" / "METADATA").write_text("Name: uvicorn\nVersion: 0.99.0\n")
    scan = _scan({"safetensors": [str(sdist)], "uvicorn": [str(site / "uvicorn")]})
    by = _by_id(scan)
    assert by["MF001"].parts[0].locations == ("src/lib.rs:2",)
    assert by["MF001"].package == "safetensors 0.9.0"
    assert by["LC001"].parts[0].locations == ("uvicorn/lifespan/on.py:2",)
    assert by["LC001"].package == "uvicorn 0.99.0"
    assert by["LC006"].status == "missing"


def test_the_interpreter_stands_in_for_argparse_python_and_the_os() -> None:
    assert other_packages.parse_with(
        ["python", "os=", "pydantic_core=a.whl", "x/torch-2.0.0-cp311-none-any.whl"]
    ) == {
        "python": [],
        "os": [],
        "pydantic": ["a.whl"],
        "pytorch": ["x/torch-2.0.0-cp311-none-any.whl"],
    }
    by = _by_id(_scan({}))
    assert by["CF003"].parts[0].locations[0].startswith("argparse.py:")
    assert [p.status for p in by["CF002"].parts][:2] == ["found", "found"]  # two templates
    assert by["LC211"].status == "found" and by["MF004"].status == "found"
    assert by["EN001"].parts[0].locations == ("strerror(28)",)
    assert by["AC002"].status == "not_checkable"
    assert "--with huggingface_hub=PATH" in (by["AC002"].reason or "")


# --- the parts vLLM supplies ------------------------------------------------------------

ARG_UTILS = """
from vllm.config import CacheConfig, ModelConfig


class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        model_kwargs = get_kwargs(ModelConfig)
        cache_kwargs = get_kwargs(CacheConfig)
        parser.add_argument("--dtype", **model_kwargs["dtype"])
        parser.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
        parser.add_argument("--max-num-seqs", type=int)
        parser.add_argument("--enforce-eager", action="store_true")
"""
MODEL_CONFIG = """
ModelDType = Literal["auto", "half", "float16", "bfloat16", "float", "float32"]


class ModelConfig:
    dtype: ModelDType | torch.dtype = "auto"
    max_model_len: int = 0
"""
CACHE_CONFIG = """
CacheDType = Literal["auto", "fp8"]


class CacheConfig:
    cache_dtype: {annotation} = "auto"
"""
KV_CHOICE = ("vllm serve: error: argument --kv-cache-dtype: invalid choice: 'fp7' "
             "(choose from 'auto', 'fp8')")  # fmt: skip


def _vllm(tmp_path: Path, annotation: str, version: str = "0.32.0") -> Path:
    files = {
        "vllm/__init__.py": "",
        "vllm/engine/arg_utils.py": ARG_UTILS,
        "vllm/config/model.py": MODEL_CONFIG,
        "vllm/config/cache.py": CACHE_CONFIG.format(annotation=annotation),
    }
    path = tmp_path / f"vllm-{version}-cp38-abi3-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as z:
        for member, text in files.items():
            z.writestr(member, text)
        z.writestr(f"vllm-{version}.dist-info/METADATA",
                   f"Name: vllm\nVersion: {version}\nRequires-Dist: torch==9.0.0\n"
                   "Requires-Dist: huggingface_hub>=9.0\n")  # fmt: skip
    return path


def _corpus(tmp_path: Path, line: str) -> Path:
    d = tmp_path / "corpus" / "0.31.0"
    d.mkdir(parents=True)
    (d / "invalid_argument__kv-cache-dtype-fp7__cpu.log").write_text(f"INFO starting\n{line}\n")
    return tmp_path / "corpus"


def test_flags_and_their_choices_are_read_from_the_config_classes(tmp_path: Path) -> None:
    flags = vllm_flags.read(_vllm(tmp_path, "CacheDType | str"))
    assert flags.flags["--dtype"].kind == "choice"
    assert flags.flags["--dtype"].choices == ("auto", "bfloat16", "float", "float16", "float32",
                                              "half")  # fmt: skip
    assert flags.flags["--kv-cache-dtype"].kind == "free"  # a Literal or any string
    assert flags.flags["--kv-cache-dtype"].field == "CacheConfig.cache_dtype"
    assert flags.flags["--max-num-seqs"].kind == "int"
    assert flags.flags["--enforce-eager"].kind == "bool"
    assert set(flags.classes) == {"ModelConfig", "CacheConfig"}


@pytest.mark.parametrize(
    ("annotation", "status", "words"),
    [
        ("CacheDType | str", "out_of_date", "takes any value"),  # 0.33.0: no choices
        ('Literal["auto", "fp8", "fp4"]', "out_of_date", "+fp4"),  # a choice added
        ("CacheDType", "found", None),
    ],
)
def test_an_argparse_line_is_checked_against_the_flag(
    tmp_path: Path, annotation: str, status: str, words: str | None
) -> None:
    rep = report.scan(_vllm(tmp_path, annotation), corpus=_corpus(tmp_path, KV_CHOICE))
    cf002 = _by_id(rep.others)["CF002"]
    kv = [p for p in cf002.parts if p.text.startswith("--kv-cache-dtype")]
    assert len(kv) == 1 and kv[0].status == status
    assert kv[0].source == "corpus/0.31.0/invalid_argument__kv-cache-dtype-fp7__cpu.log:2"
    if words:
        assert words in (kv[0].detail or "")
    assert cf002.status == status
    # CF002's own examples: --dtype's choices are the release's, --max-num-seqs is a flag
    dtype = next(p for p in cf002.parts if p.text.startswith("--dtype"))
    assert dtype.status == "found" and dtype.what == "choices"
    # CF003's example names a typo, which is no flag: as the line says
    cf003 = _by_id(rep.others)["CF003"]
    assert cf003.parts[-1].what == "flag" and cf003.parts[-1].status == "found"
    assert rep.others.requires == {
        "pytorch": "torch==9.0.0",
        "huggingface_hub": "huggingface_hub>=9.0",
    }


def test_an_older_line_of_a_scenario_the_release_was_captured_in_is_superseded(
    tmp_path: Path,
) -> None:
    """Once the release's corpus has its own `kv-cache-dtype-fp7` log (CacheConfig's error in
    0.33.0), the previous release's `invalid choice` line for it is no action: the scan said
    capture it again, and it was."""
    corpus = _corpus(tmp_path, KV_CHOICE)
    wheel = _vllm(tmp_path, "CacheDType | str")
    before = _by_id(report.scan(wheel, corpus=corpus).others)
    stale = {i for i, f in before.items() if f.status == "out_of_date"}
    assert "CF002" in stale  # CF101's examples are no templates of this small release
    (corpus / "0.32.0").mkdir()
    (corpus / "0.32.0" / "invalid_argument__kv-cache-dtype-fp7__cpu.log").write_text(
        "INFO starting\n  Value error, Invalid kv_cache_dtype: 'fp7'. Valid values are: ['auto']\n"
    )
    rep = report.scan(wheel, corpus=corpus)
    cf002 = _by_id(rep.others)["CF002"]
    assert not [p for p in cf002.parts if p.text.startswith("--kv-cache-dtype")]
    assert cf002.status == "found"
    assert {i for i, f in _by_id(rep.others).items() if f.status == "out_of_date"} == stale - {
        "CF002"
    }


def test_a_config_class_the_release_lacks_is_out_of_date(tmp_path: Path) -> None:
    path = _vllm(tmp_path, "CacheDType")
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("vllm/config/renamed.py", "class ModelConfigV2:\n    pass\n")
    rep = report.scan(path)
    assert _by_id(rep.others)["CF004"].parts[1].status == "found"  # ModelConfig is there
    old = tmp_path / "old"
    old.mkdir()
    bare = _wheel(old / "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl",
                  {"vllm/__init__.py": "", "vllm/engine/arg_utils.py": ARG_UTILS,
                   "vllm/config/cache.py": CACHE_CONFIG.format(annotation="str")},
                  "vllm", "0.32.0")  # fmt: skip
    cf004 = _by_id(report.scan(bare).others)["CF004"]
    assert cf004.parts[1].status == "out_of_date" and "ModelConfig" in (cf004.parts[1].detail or "")


def test_a_release_without_arg_utils_leaves_flags_unchecked(tmp_path: Path) -> None:
    path = _wheel(tmp_path / "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl",
                  {"vllm/__init__.py": "", "vllm/x.py": "raise ValueError('x')\n"},
                  "vllm", "0.32.0")  # fmt: skip
    cf002 = _by_id(report.scan(path, corpus=_corpus(tmp_path, KV_CHOICE)).others)["CF002"]
    assert cf002.parts[-1].status == "not_checkable" and cf002.status == "found"


# --- the CLI --------------------------------------------------------------------------------


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "vllm_bootdiag", "scan-source", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("damage", ["truncated", "not-an-archive", "missing", "unknown-name",
                                    "bare-unknown", "no-path", "bare-name"])  # fmt: skip
def test_a_bad_package_is_one_clear_error(tmp_path: Path, hub: Path, damage: str) -> None:
    vllm = _vllm(tmp_path, "CacheDType")
    bad = tmp_path / "bad" / "huggingface_hub-9.9.0-py3-none-any.whl"
    bad.parent.mkdir()
    arg = f"huggingface_hub={bad}"
    if damage == "truncated":
        data = hub.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    elif damage == "not-an-archive":
        bad.write_bytes(b"<html>404</html>")
    elif damage == "unknown-name":
        arg = f"tensorflow={hub}"
    elif damage == "bare-unknown":
        other = tmp_path / "notes.txt"
        other.write_text("x")
        arg = str(other)
    elif damage == "no-path":
        arg = "torch="  # not the current directory
    elif damage == "bare-name":
        arg = "transformers"
    r = _cli(str(vllm), "--with", arg)
    assert r.returncode == 2, r.stdout
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("vllm-bootdiag: error: --with ")
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_a_pattern_the_shell_left_alone_is_expanded_and_a_typo_fails_first(
    tmp_path: Path, hub: Path, torch_cuda: Path
) -> None:
    """CONTRIBUTING's `--with torch=wheels/torch-2.14.0-*.whl`: bash globs no word that starts
    with `torch=`, so scan-source expands it; a path that is not there is an error before the
    vLLM release is read (that read is a minute on a real wheel)."""
    vllm = _vllm(tmp_path, "CacheDType")
    glob_arg = f"torch={tmp_path}/torch-9.1.0-*.whl"
    r = _cli(str(vllm), "--with", glob_arg, "--with", f"huggingface_hub={tmp_path}/hugging*.whl")
    assert r.returncode == 0, r.stderr
    assert "torch 9.1.0 (cuda build)" in r.stdout
    assert other_packages.expand({"pytorch": [glob_arg.partition("=")[2]]}) == {
        "pytorch": [str(torch_cuda)]
    }
    (tmp_path / "torch-9.2.0-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    for arg, words in (
        (f"torch={tmp_path}/torch-*.whl", "matches 2 files"),
        (f"torch={tmp_path}/torch-8.*.whl", "no file matches"),
        (f"pydantic={tmp_path}/pydantic-2.0.0-py3-none-any.whl", "no such path"),
    ):
        r = _cli(str(tmp_path / "no-vllm-here.whl"), "--with", arg)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert words in r.stderr and r.stderr.startswith("vllm-bootdiag: error: --with "), r.stderr


def test_the_json_document_with_packages_validates_and_text_fits(
    tmp_path: Path, hub: Path, torch_cuda: Path
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    r = subprocess.run([sys.executable, "-m", "vllm_bootdiag", "schema", "scan-source"],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    check = jsonschema.Draft202012Validator(json.loads(r.stdout))
    vllm = _vllm(tmp_path, "CacheDType | str")
    _corpus(tmp_path, KV_CHOICE)
    args = (str(vllm), "--with", str(hub), "--with", f"torch={torch_cuda}")  # by file name, by name
    r = _cli(*args, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    errors = [f"{list(e.absolute_path)}: {e.message[:300]}" for e in check.iter_errors(doc)]
    assert not errors, errors
    packages = {p["name"]: p for p in doc["packages"]}
    assert (
        packages["pytorch"]["versions"] == ["torch 9.1.0"]
        and packages["pytorch"]["build"] == "cuda"
    )
    assert (
        packages["pytorch"]["requires"] == "torch==9.0.0" and packages["pytorch"]["pinned"] is False
    )
    assert packages["transformers"]["given"] is False
    assert doc["summary"]["other_rules"] == len(doc["other_rules"])
    assert {u["rule_id"] for u in doc["unchecked"]} >= {"AC004", "LC001"}  # not given
    for extra in ((), ("--all",)):
        text = _cli(*args, *extra, cwd=tmp_path).stdout
        assert max(len(line) for line in text.splitlines()) <= 80
        assert "torch 9.1.0 (cuda build)" in text and "outside it" in text
        assert "--kv-cache-dtype takes any value in vLLM 0.32.0" in text
        assert "AC007  huggingface_hub: missing" in text


def test_a_pydantic_message_is_a_vllm_template_only_if_its_words_are(tmp_path: Path) -> None:
    from vllm_bootdiag.release import vllm_parts

    assert vllm_parts._renders(
        "Invalid value for {}: must be positive", "Invalid value for --x: must be positive"
    )
    assert not vllm_parts._renders(
        "{} must be positive", "Invalid value for --max-num-seqs: must be positive"
    )
    path = _vllm(tmp_path, "CacheDType")
    with zipfile.ZipFile(path, "a") as z:
        z.writestr(
            "vllm/config/scheduler.py",
            'def check(name):\n    raise ValueError(f"{name} must be positive")\n',
        )
    cf101 = _by_id(report.scan(path).others)["CF101"]
    first = next(p for p in cf101.parts if p.source == "CF101 example 1")
    assert first.status == "out_of_date" and "no template of vLLM 0.32.0" in (first.detail or "")


def test_a_pydantic_header_names_a_class_and_field_of_the_release(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus" / "0.31.0"
    corpus.mkdir(parents=True)
    header = "pydantic_core._pydantic_core.ValidationError: 1 validation error for CacheConfig"
    for name, under in (("a", "cache_dtype"), ("b", "swap_space"), ("c", "cache_dtype")):
        (corpus / f"{name}.log").write_text(f"{header}\n{under}\n  Input should be ...\n")
    rep = report.scan(_vllm(tmp_path, "CacheDType"), corpus=tmp_path / "corpus")
    fields = {p.text: p for p in _by_id(rep.others)["CF004"].parts if p.what == "config field"}
    assert set(fields) == {"CacheConfig.cache_dtype", "CacheConfig.swap_space"}  # once each
    assert fields["CacheConfig.cache_dtype"].status == "found"
    assert fields["CacheConfig.swap_space"].status == "out_of_date"
    assert fields["CacheConfig.swap_space"].source == "corpus/0.31.0/b.log:1"
    assert "no field swap_space" in (fields["CacheConfig.swap_space"].detail or "")
    # CF101 reads the same logs' lines, but only its own examples must be vLLM's messages
    assert all(p.source is None or p.source.startswith("CF101") for p in
               _by_id(rep.others)["CF101"].parts)  # fmt: skip
