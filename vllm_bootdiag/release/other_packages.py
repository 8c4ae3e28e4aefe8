"""Rules whose text another package prints, checked against that package's source.

torch words the CUDA OOM, argparse the bad flag, pydantic the validation error:
for each such rule, is its wording in the package given (`scan-source WHEEL
--with torch=PATH`; argparse, Python and the OS are this interpreter's by
default)? A wording is one or more *parts*: most rules' literal is one string
of the package; a few are put together from texts of several sources
(COMPOSED: torch's `CUDA error: ` and the CUDA runtime's `out of memory`;
Python's `Process %s:` and vLLM's process name). The parts vLLM supplies are
checked against the vLLM release: the flags, choices and config classes that
argparse and pydantic lines of the rule's examples and of the newest corpus logs
name (0.33.0 dropped `--kv-cache-dtype`'s choices: its `invalid choice` line is
out of date). A part is found, missing (with the closest text), out of date, or
not checkable, and why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from ..rules import RULES, Rule
from . import interpreter_sources, package_sources, vllm_flags, vllm_parts
from .package_findings import Finding, Part, location
from .package_sources import Package
from .source_scan import closest
from .sources import Release, SourceError

NAMES = {
    "torch": "pytorch",
    "pytorch": "pytorch",
    "huggingface_hub": "huggingface_hub",
    "huggingface-hub": "huggingface_hub",
    "transformers": "transformers",
    "safetensors": "safetensors",
    "uvicorn": "uvicorn",
    "pydantic": "pydantic",
    "pydantic_core": "pydantic",
    "pydantic-core": "pydantic",
    "argparse": "argparse",
    "python": "python",
    "os": "os",
}
"""`--with NAME=PATH` names (and the distributions a wheel's file name gives) -> `printed_by`."""
INTERPRETER = ("argparse", "python", "os")
"""Read from this interpreter unless given: they need no download."""

_CUDART = "the CUDA runtime's cudaGetErrorString (libcudart, not in the torch wheel)"
COMPOSED: dict[str, tuple[tuple[str, str], ...]] = {
    "AC006": (("X-Error-Message", "huggingface_hub"),
              ("is restricted", "the Hub server's error message (X-Error-Message)")),
    "CF002": (("%(prog)s: error: %(message)s", "argparse"),
              ("argument %(argument_name)s: %(message)s", "argparse")),
    "CM006": (("CUDA error: ", "pytorch"), ("out of memory", _CUDART)),
    "CM007": (("HIP error: ", "pytorch"), ("out of memory", "HIP's hipGetErrorString")),
    "CM008": (("CUDA driver error: ", "pytorch"),
              ("out of memory", "the CUDA driver's cuGetErrorString (libcuda)")),
    "CM009": (("UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "oneAPI's Unified Runtime (ur_api.h)"),),
    "PF001": (("CUDA error: ", "pytorch"),
              ("no kernel image is available for execution on the device", _CUDART)),
    "PF010": (("CUDA error: ", "pytorch"),
              ("CUDA driver version is insufficient for CUDA runtime version", _CUDART)),
    "PF023": (("CUDA error: ", "pytorch"), ("no CUDA-capable device is detected", _CUDART)),
    "IN001": (("No module named ", "python"),),
    "IN002": (("cannot import name ", "python"),),
    "IN003": (("undefined symbol: ", "os"),),
    "LC210": (("Process %s:", "python"), ("EngineCore", "vllm")),
}  # fmt: skip
"""Rules whose literal no one source holds whole: (text as its source has it, who prints it)."""

_DEVICE = (("rocm", re.compile(r"\bHIP\b|ROCm|hipified")),
           ("xpu", re.compile(r"\bXPU\b|c10/xpu|\bUR_")),
           ("cuda", re.compile(r"(?i)cuda|nvidia|nccl")))  # fmt: skip
"""The device build a text belongs to, from the text, else its rule's references and
first example (torch's ` has a total capacity of ` is c10/cuda's)."""


def _wording_part(
    text: str,
    pattern: str,
    who: str,
    pkg: Package | Release | None,
    taken: frozenset[int],
    hint: str = "",
) -> Part:
    """One part found (messages first, then compiled strings, then other strings), or
    missing with the closest text no other rule's part holds."""
    if who == "platform":
        return Part(text, who, "wording", "not_checkable",
                    detail="a platform's own message (printed_by platform)")  # fmt: skip
    if pkg is None:
        how = f"--with {who}=PATH" if who in NAMES.values() else "in no package scan-source reads"
        return Part(text, who, "wording", "not_checkable", detail=f"text of {who} ({how})")
    release = pkg.release if isinstance(pkg, Package) else pkg
    order = {"string": 2}
    hits = release.search(pattern)
    hits.sort(key=lambda t: order.get(t.kind, 0) + (t.line > 0 and t.kind == "string"))
    found = [location(t.location) for t in hits]
    if isinstance(pkg, Package) and re.fullmatch(r"\w+", text):
        found = pkg.classes.get(text, []) + found  # an exception's name: its class
    if found:
        return Part(text, who, "wording", "found", tuple(found[:5]))
    if isinstance(pkg, Package) and pkg.build:
        need = next((d for d, p in _DEVICE if p.search(text)), None)
        need = need or next((d for d, p in _DEVICE if p.search(hint)), None)
        if need and need != pkg.build:
            return Part(text, who, "wording", "not_checkable",
                        detail=f"text of torch's {need} build; {pkg.label} has no {need} code "
                        f"(--with torch=PATH to a {need} wheel)")  # fmt: skip
    return Part(text, who, "wording", "missing", closest=closest(text, release, taken))


def parts_of(rule: Rule) -> tuple[tuple[str, str, str], ...]:
    """(text, regex, who) for each part of a rule's wording."""
    if rule.id in COMPOSED:
        return tuple((t, re.escape(t), who) for t, who in COMPOSED[rule.id])
    return ((rule.literal, rule.source_pattern or re.escape(rule.literal), rule.printed_by),)


# --- the scan -------------------------------------------------------------------------


@dataclass
class PackageScan:
    """Every rule another package prints, against the packages given."""

    packages: dict[str, Package] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    requires: dict[str, str] = field(default_factory=dict)
    """What the vLLM wheel's METADATA asks of each package (`torch==2.14.0`)."""

    @property
    def unchecked(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "not_checkable"]

    @property
    def to_act_on(self) -> list[Finding]:
        return [f for f in self.findings if not f.ok]

    def summary(self) -> dict[str, int]:
        count = {s: sum(f.status == s for f in self.findings) for s in STATUSES}
        return {
            "other_rules": len(self.findings),
            **{f"other_rules_{s}": n for s, n in count.items()},
        }

    def by_package(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for f in self.findings:
            counts = out.setdefault(f.printed_by, {})
            counts[f.status] = counts.get(f.status, 0) + 1
        return out

    def pinned(self, name: str) -> bool | None:
        """Whether the package read is one the vLLM wheel allows (None: no pin, no version)."""
        spec, pkg = self.requires.get(name), self.packages.get(name)
        if spec is None or pkg is None:
            return None
        m = re.match(r"([A-Za-z0-9_.-]+)(.*)", spec)
        assert m is not None
        want = m[1].lower().replace("-", "_")
        for v in pkg.versions:
            dist, _, version = v.rpartition(" ")
            if dist.lower().replace("-", "_") == want:
                try:
                    return SpecifierSet(m[2]).contains(version, prereleases=True)
                except InvalidSpecifier:
                    return None
        return None

    def packages_dict(self) -> list[dict[str, Any]]:
        names = sorted({f.printed_by for f in self.findings} | set(self.packages))
        out = []
        for name in names:
            pkg = self.packages.get(name)
            out.append(
                {
                    "name": name,
                    "given": pkg is not None,
                    "versions": pkg.versions if pkg else [],
                    "build": pkg.build if pkg else None,
                    "files": len(pkg.release.files) if pkg else 0,
                    "texts": len(pkg.release.templates) if pkg else 0,
                    "requires": self.requires.get(name),
                    "pinned": self.pinned(name),
                    "notes": pkg.notes if pkg else [],
                    "counts": self.by_package().get(name, {}),
                }
            )
        return out


STATUSES = ("found", "missing", "out_of_date", "not_checkable")


def scan(
    packages: Mapping[str, Package],
    release: Release,
    corpus: str | Path | None = None,
    rules: Sequence[Rule] = RULES,
) -> PackageScan:
    """The packages' rules against the packages and against the vLLM release at its path."""
    flags = vllm_flags.read(release.path)
    lines = vllm_parts.corpus_lines(Path(corpus) if corpus else None, release.version)
    out = check(packages, release, flags, lines, rules)
    out.requires = requirements(release.path)
    return out


def check(
    packages: Mapping[str, Package],
    release: Release | None = None,
    flags: vllm_flags.Flags | None = None,
    lines: Sequence[tuple[str, str]] = (),
    rules: Sequence[Rule] = RULES,
) -> PackageScan:
    """Each rule not printed by vLLM: its wording parts, then the parts vLLM supplies."""
    out = PackageScan(dict(packages))
    printed = [r for r in rules if r.printed_by != "vllm" and r.status != "retired"]
    held = {
        id(t)
        for r in printed
        for _text, pattern, who in parts_of(r)
        if who in packages
        for t in packages[who].release.search(pattern)
    }
    taken = frozenset(held)
    for rule in printed:
        parts = []
        for text, pattern, who in parts_of(rule):
            pkg: Package | Release | None = release if who == "vllm" else packages.get(who)
            hint = " ".join((*rule.references, rule.examples[0]))
            parts.append(_wording_part(text, pattern, who, pkg, taken, hint))
        parts += vllm_parts.parts(rule, lines, release, flags)
        pkg = packages.get(rule.printed_by)
        out.findings.append(Finding(rule.id, rule.printed_by, pkg.label if pkg else None,
                                    tuple(parts)))  # fmt: skip
    return out


def wanted(rules: Iterable[Rule], name: str) -> list[str]:
    """The texts to look for in package `name`: its rules' parts and first examples."""
    out = []
    for rule in rules:
        for text, _pattern, who in parts_of(rule) if rule.printed_by != "vllm" else ():
            if who == name:
                out.append(text)
    return out


def parse_with(values: Iterable[str]) -> dict[str, list[str]]:
    """`--with NAME=PATH`, a bare wheel path (named by its file), or a bare `argparse`,
    `python`, `os` (this interpreter's) -> paths by printed_by."""
    out: dict[str, list[str]] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or "/" in name:  # a path, perhaps with "=" in it
            dist = package_sources._version_from_name(value)  # torch-2.14.1-...whl
            bare = value.strip().lower()
            name, path = (dist.split(" ")[0].lower(), value) if dist else (bare, "")
            if not dist and bare not in NAMES:
                raise SourceError(f"--with {value}: cannot tell its package; write NAME=PATH")
        key = NAMES.get(name.strip().lower())
        if key is None:
            raise SourceError(f"--with {name}: not a package rules name (one of: "
                              f"{', '.join(sorted(set(NAMES.values())))})")  # fmt: skip
        if not path.strip() and key not in INTERPRETER:
            raise SourceError(f"--with {name}: give its wheel, sdist or directory "
                              f"(--with {name}=PATH)")  # fmt: skip
        if path.strip():
            out.setdefault(key, []).append(path)
        else:
            out.setdefault(key, [])
    return out


def expand(given: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The paths `parse_with` gave, checked before the vLLM release is read (a typo costs
    no minute of scanning), with a pattern no shell expanded (`NAME=wheels/torch-*.whl`:
    the `NAME=` keeps bash from globbing it) expanded here; one file per distribution."""
    import glob

    out: dict[str, list[str]] = {}
    for name, paths in given.items():
        out[name] = []
        for path in paths:
            if Path(path).exists() or not glob.has_magic(path):
                if not Path(path).exists():
                    raise SourceError(f"--with {name}: no such path: {path}")
                out[name].append(path)
                continue
            found = sorted(glob.glob(path))
            if not found:
                raise SourceError(f"--with {name}: no file matches {path}")
            names = [_dist(f) for f in found]
            if len(set(names)) < len(names):
                shown = ", ".join(Path(f).name for f in found[:3])
                raise SourceError(f"--with {name}: {path} matches {len(found)} files "
                                  f"({shown}): give one")  # fmt: skip
            out[name].extend(found)
    return out


def _dist(path: str) -> str:
    dist = package_sources._version_from_name(path)
    return dist.split(" ")[0].lower().replace("-", "_") if dist else path


def load(given: Mapping[str, list[str]], rules: Sequence[Rule] = RULES) -> dict[str, Package]:
    """The packages given, and this interpreter's argparse, Python and OS."""
    out: dict[str, Package] = {}
    for name, paths in given.items():
        if paths:
            out[name] = package_sources.read(name, paths, wanted(rules, name))
    for name in INTERPRETER:
        if name not in out:
            out[name] = interpreter_sources.interpreter(name, wanted(rules, name))
    return out


def requirements(path: Path) -> dict[str, str]:
    """The vLLM wheel's `Requires-Dist` pins of the packages rules read."""
    import zipfile

    out: dict[str, str] = {}
    if not path.is_file() or not zipfile.is_zipfile(path):
        return out
    with zipfile.ZipFile(path) as z:
        meta = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        text = z.read(meta[0]).decode("utf-8", "replace") if meta else ""
    for m in re.finditer(r"^Requires-Dist:[ \t]*([A-Za-z0-9_.-]+)[ \t]*([^;\n]*)", text, re.M):
        key = NAMES.get(m[1].lower())
        if key and key not in out and m[2].strip():
            out[key] = f"{m[1]}{m[2].strip()}"
    return out
