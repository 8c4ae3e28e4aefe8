"""Check the rule table against a vLLM release's own source: the release-day tool.

vLLM's messages are format strings in its Python source. Given a wheel (or an
unpacked `vllm/` tree), we render every string literal and f-string in it (an
f-string field becomes `{}` or `{:spec}`) and ask, for each rule vLLM itself
prints: is its wording in this release? A rule whose range holds the release but
whose wording is gone was reworded (close its range, add a sibling); a rule
whose wording is present outside its range has a range that is too narrow.
"""

from __future__ import annotations

import ast
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from packaging.version import Version

from . import versions
from .rules import RULES, Rule


class SourceError(Exception):
    """The path is not a vLLM wheel or source tree."""


@dataclass(frozen=True)
class Finding:
    """One rule checked against one release."""

    rule_id: str
    in_range: bool
    present: bool

    @property
    def verdict(self) -> str:
        if self.in_range and self.present:
            return "ok"
        if self.in_range:
            return "missing: wording not in this release (reworded or removed?)"
        if self.present:
            return "outside range: wording present, range may be too narrow"
        return "ok (not in this release, as its range says)"

    @property
    def ok(self) -> bool:
        return self.in_range == self.present


def _render(node: ast.AST) -> str | None:
    """A string expression as a template: literal text kept, fields as {} / {:spec}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                spec = _render(value.format_spec) if value.format_spec is not None else None
                parts.append("{:" + spec + "}" if spec else "{}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _render(node.left), _render(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def templates(source: str) -> Iterator[str]:
    """Every string template in one Python file (nothing on a syntax error)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.JoinedStr, ast.BinOp)):
            rendered = _render(node)
            if rendered is not None:
                for child in ast.walk(node):
                    if child is not node:
                        inner.add(id(child))
                yield rendered
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inner
        ):
            yield node.value


def _sources(path: Path) -> Iterator[tuple[str, str]]:
    if path.is_file() and path.suffix == ".whl":
        with zipfile.ZipFile(path) as z:
            for name in z.namelist():
                if name.startswith("vllm/") and name.endswith(".py"):
                    yield name, z.read(name).decode("utf-8", errors="replace")
        return
    root = path / "vllm" if (path / "vllm").is_dir() else path
    if not (root / "__init__.py").exists():
        raise SourceError(f"not a vLLM wheel or source tree: {path}")
    for file in sorted(root.rglob("*.py")):
        yield str(file.relative_to(root.parent)), file.read_text("utf-8", errors="replace")


_WHEEL_VERSION = re.compile(r"^vllm(?:[_-]cpu)?-(\d[^-]*)-")
_VERSION_PY = re.compile(r"""(?:__version__|version)\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""")


def release_version(path: Path, files: dict[str, str]) -> Version | None:
    """The release from the wheel's name or `vllm/_version.py`."""
    m = _WHEEL_VERSION.match(path.name)
    if m:
        return versions.parse_version(m[1])
    text = files.get("vllm/_version.py", "")
    m = _VERSION_PY.search(text)
    return versions.parse_version(m[1]) if m else None


def scan(path: str | Path, version: str | None = None) -> tuple[Version, list[Finding]]:
    """Check every vLLM-printed rule against the release at `path`."""
    p = Path(path)
    if not p.exists():
        raise SourceError(f"no such path: {p}")
    files = dict(_sources(p))
    if not files:
        raise SourceError(f"no vllm/*.py files in {p}")
    v = versions.parse_version(version) if version else release_version(p, files)
    if v is None:
        raise SourceError("cannot tell the vLLM version; pass --vllm-version")
    corpus = "\n".join(t for text in files.values() for t in templates(text))
    findings = [_check(rule, v, corpus) for rule in RULES if rule.printed_by == "vllm"]
    return v, findings


def _check(rule: Rule, version: Version, corpus: str) -> Finding:
    pattern = rule.source_pattern or re.escape(rule.literal)
    present = re.search(pattern, corpus, re.MULTILINE) is not None
    return Finding(rule.id, versions.in_range(version, rule.vllm), present)
