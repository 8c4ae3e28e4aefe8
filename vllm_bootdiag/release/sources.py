"""A vLLM release read as data: every message template, where it is, and who prints it.

vLLM's messages are format strings in its Python source. We render every string
literal and f-string of a wheel (or an unpacked `vllm/` tree, or any zip holding
`vllm/`) as a template, an f-string field becoming `{}` or `{:spec}`, and keep
its file:line, the enclosing function, and how it is printed (`raise X(...)`, a
`logger.<level>(...)` call, or a plain string). Scanning never imports vLLM.
"""

from __future__ import annotations

import ast
import os
import re
import zipfile
import zlib
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from packaging.version import Version

from .. import versions

Kind = Literal["raise", "critical", "error", "exception", "warning", "info", "debug", "string"]

_LOG_LEVELS: dict[str, Kind] = {
    "critical": "critical",
    "fatal": "critical",
    "error": "error",
    "error_once": "error",
    "exception": "exception",
    "warning": "warning",
    "warning_once": "warning",
    "warn": "warning",
    "info": "info",
    "info_once": "info",
    "debug": "debug",
    "debug_once": "debug",
}


class SourceError(Exception):
    """The path is not a readable vLLM wheel or source tree (one line for the user)."""


@dataclass(frozen=True, slots=True)
class Template:
    """One message template of a release."""

    file: str
    """Path inside the release, e.g. `vllm/v1/worker/cpu_worker.py`."""
    line: int
    """The `raise` or logger call's line (what vLLM's own records and our references cite)."""
    text: str
    kind: Kind
    exception: str | None = None
    """The class raised (`ValueError`), for `raise` templates."""
    function: str | None = None
    end_line: int = 0
    """The statement's last line: a reference citing any line of it is in place."""

    @property
    def lines(self) -> range:
        return range(self.line, max(self.line, self.end_line) + 1)

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Release:
    """The templates, function names and files of one vLLM release."""

    path: Path
    version: Version
    files: tuple[str, ...]
    templates: list[Template]
    functions: dict[str, list[str]] = field(default_factory=dict)
    """Function name -> `file:line` of each `def` (OOM frame names are checked here)."""
    _corpus: str | None = None
    _starts: list[int] = field(default_factory=list)

    @property
    def corpus(self) -> str:
        """Every template, one per line of text, for one regex search over the release."""
        if self._corpus is None:
            parts, pos = [], 0
            for t in self.templates:
                self._starts.append(pos)
                parts.append(t.text)
                pos += len(t.text) + 1
            self._corpus = "\n".join(parts)
        return self._corpus

    def at(self, offset: int) -> Template:
        """The template holding `offset` of `corpus`."""
        from bisect import bisect_right

        _ = self.corpus
        return self.templates[bisect_right(self._starts, offset) - 1]

    def search(self, pattern: str) -> list[Template]:
        """Templates a regex (multi-line mode) matches, one per template."""
        found: list[Template] = []
        seen: set[int] = set()
        for m in re.finditer(pattern, self.corpus, re.MULTILINE):
            t = self.at(m.start())
            if id(t) not in seen:
                seen.add(id(t))
                found.append(t)
        return found


# --- rendering ----------------------------------------------------------------


def render(node: ast.AST) -> str | None:
    """A string expression as a template: literal text kept, fields as {} / {:spec}.

    `"..." % x` and `"...".format(x)` render as their format string.
    """
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                spec = render(value.format_spec) if value.format_spec is not None else None
                # `!r` kept: it is what quotes a value (`'fp7'`), which tells two messages
                # of the same words apart (CacheConfig's check from the selector's assert).
                conv = "!r" if value.conversion == ord("r") else ""
                parts.append("{" + conv + (":" + spec if spec else "") + "}")
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = render(node.left), render(node.right)
        if left is not None and right is not None:
            return left + right
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return render(node.left)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    ):
        return render(node.func.value)
    return None


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_logger(node: ast.AST) -> bool:
    name = _name(node)
    return name is not None and ("log" in name.lower())


class _Collector(ast.NodeVisitor):
    """Message nodes (raise / logger arguments) first, then every other string."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.func: list[str] = []
        self.assigns: list[dict[str, list[tuple[int, ast.AST]]]] = [{}]
        self.messages: dict[int, Template] = {}
        self.defs: list[tuple[str, int]] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.defs.append((node.name, node.lineno))
        self.func.append(node.name)
        scope: dict[str, list[tuple[int, ast.AST]]] = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
                target = sub.targets[0]
                if isinstance(target, ast.Name):
                    scope.setdefault(target.id, []).append((sub.lineno, sub.value))
        self.assigns.append(scope)
        self.generic_visit(node)
        self.assigns.pop()
        self.func.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _message(
        self, arg: ast.AST, node: ast.stmt | ast.expr, kind: Kind, exc: str | None
    ) -> None:
        line, end = node.lineno, node.end_lineno or node.lineno
        if isinstance(arg, ast.Name):  # raise ValueError(msg): the last `msg = ...` before it
            earlier = [v for ln, v in self.assigns[-1].get(arg.id, []) if ln <= line]
            if not earlier:
                return
            arg = earlier[-1]
        text = render(arg)
        if text is not None and id(arg) not in self.messages:
            fn = self.func[-1] if self.func else None
            self.messages[id(arg)] = Template(self.file, line, text, kind, exc, fn, end)

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            self._message(exc.args[0], node, "raise", _name(exc.func))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _LOG_LEVELS
            and node.args
            and _is_logger(func.value)
        ):
            self._message(node.args[0], node, _LOG_LEVELS[func.attr], None)
        self.generic_visit(node)


def templates(
    source: str, file: str = "<string>", docstrings: bool = True
) -> tuple[list[Template], list[tuple[str, int]]]:
    """Every string template of one Python file, and its `def`s (nothing on a syntax error).

    `docstrings=False` leaves out strings that are statements of their own (docstrings):
    another package's docs quote its messages, which are not what it prints."""
    try:
        tree = ast.parse(source)
        c = _Collector(file)
        c.visit(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [], []  # not Python, or nested past what a parser should follow
    out: list[Template] = list(c.messages.values())
    taken = set(c.messages)
    inner: set[int] = set()
    if not docstrings:
        inner = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        }
    for node in ast.walk(tree):
        if id(node) in inner:
            continue
        if id(node) in taken:
            inner.update(id(n) for n in ast.walk(node))
            continue
        if isinstance(node, (ast.JoinedStr, ast.BinOp, ast.Constant)):
            text = render(node) if not isinstance(node, ast.BinOp) or _addition(node) else None
            if text is not None:
                inner.update(id(n) for n in ast.walk(node))
                line = getattr(node, "lineno", 0)
                end = getattr(node, "end_lineno", None) or line
                out.append(Template(file, line, text, "string", end_line=end))
    out.sort(key=lambda t: t.line)
    return out, c.defs


def _addition(node: ast.BinOp) -> bool:
    return isinstance(node.op, ast.Add)


# --- reading a release ----------------------------------------------------------

_WHEEL_VERSION = re.compile(r"^vllm(?:[_-]cpu)?-(\d[^-]*)-")
_VERSION_PY = re.compile(r"""(?:__version__|version)\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""")
_METADATA_VERSION = re.compile(r"^Version:\s*(\S+)", re.MULTILINE)


def _read_zip(path: Path) -> Iterator[tuple[str, str]]:
    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                name = info.filename
                if (name.startswith("vllm/") and name.endswith(".py")) or name.endswith(
                    ".dist-info/METADATA"
                ):
                    yield name, z.read(info).decode("utf-8", errors="replace")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
        raise SourceError(
            f"{path.name} is not a readable wheel (truncated or corrupt? download it again): {e}"
        ) from None
    except OSError as e:
        raise SourceError(f"cannot read {path}: {e.strerror or e}") from None


def _read_tree(path: Path) -> Iterator[tuple[str, str]]:
    root = path / "vllm" if (path / "vllm").is_dir() else path
    if not (root / "__init__.py").exists():
        raise SourceError(f"not a vLLM wheel or source tree (no vllm/__init__.py): {path}")
    for file in sorted(root.rglob("*.py")):
        yield (
            "vllm/" + file.relative_to(root).as_posix(),
            file.read_text("utf-8", errors="replace"),
        )
    for meta in sorted(root.parent.glob("vllm*.dist-info/METADATA")):  # site-packages layout
        yield f"{meta.parent.name}/METADATA", meta.read_text("utf-8", errors="replace")


def read_files(path: Path) -> dict[str, str]:
    """`vllm/**.py` (and a wheel's METADATA) of a wheel, zip or tree, by path."""
    if not path.exists():
        raise SourceError(f"no such path: {path}")
    if path.is_file():
        if not zipfile.is_zipfile(path):
            raise SourceError(
                f"not a readable wheel: {path.name} is no zip file (a download cut short? "
                "`pip download --no-deps vllm==X` gives a wheel)"
            )
        return dict(_read_zip(path))
    return dict(_read_tree(path))


def release_version(path: Path, files: dict[str, str]) -> Version | None:
    """The release from the wheel's name, its METADATA, or `vllm/_version.py`."""
    m = _WHEEL_VERSION.match(path.name)
    if m:
        return versions.parse_version(m[1])
    for name, text in files.items():
        if name.endswith(".dist-info/METADATA"):
            m = _METADATA_VERSION.search(text)
            if m:
                return versions.parse_version(m[1])
    m = _VERSION_PY.search(files.get("vllm/_version.py", ""))
    return versions.parse_version(m[1]) if m else None


def load(path: str | Path, version: str | None = None) -> Release:
    """Read a release: every template with its place, every function name."""
    p = Path(path)
    files = read_files(p)
    py = {k: v for k, v in files.items() if k.endswith(".py")}
    if not py:
        raise SourceError(f"no vllm/*.py files in {p}")
    v = versions.parse_version(version) if version else release_version(p, files)
    if v is None:
        raise SourceError(f"cannot tell the vLLM version of {p.name}; pass --vllm-version")
    names = sorted(py)
    out: list[Template] = []
    functions: dict[str, list[str]] = {}
    for name, (found, defs) in zip(names, _parse_all([(n, py[n]) for n in names]), strict=True):
        out.extend(found)
        for fn, line in defs:
            functions.setdefault(fn, []).append(f"{name}:{line}")
    return Release(p, v, tuple(names), out, functions)


VENDORED = ("vllm/third_party/",)
"""Code vLLM vendors from other projects: not vLLM's messages, not parsed."""


def _parse_one(item: tuple[str, str]) -> tuple[list[Template], list[tuple[str, int]]]:
    return templates(item[1], item[0])


def _parse_all(
    items: list[tuple[str, str]],
) -> list[tuple[list[Template], list[tuple[str, int]]]]:
    """Parse on every core: parsing is the cost (a 3,000-file release, 20 s on one)."""
    items = [(n, "" if n.startswith(VENDORED) else s) for n, s in items]
    workers = min(os.cpu_count() or 1, 8)
    if workers < 2 or sum(len(s) for _, s in items) < 2_000_000:
        return [_parse_one(i) for i in items]
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_parse_one, items, chunksize=32))
