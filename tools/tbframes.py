"""Build Python 3.11 traceback frames from a real vLLM/torch source tree.

Why: reconstructed GPU logs must show the frames that release would really print. Each frame is
located by (file, function, the call or ``raise`` being executed) in the installed source, and
rendered the way CPython 3.11's ``traceback`` does (``File ...`` line, the stripped source line,
and the ``^^^`` carets unless the expression spans the whole line). Stdlib only.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

SITE = "<venv>/lib/python3.11/site-packages"


@dataclass(frozen=True)
class Frame:
    """One traceback frame: where it is and the lines it prints."""

    rel: str
    lineno: int
    func: str
    lines: tuple[str, ...]


@functools.cache
def _parse(path: Path) -> tuple[ast.Module, tuple[str, ...]]:
    text = path.read_text()
    return ast.parse(text), tuple(text.splitlines(keepends=True))


def _find_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """``func``, ``Class.func`` or ``outer.inner`` (a function nested in a function)."""
    scope: ast.AST = tree
    parts = name.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        found = None
        for node in ast.walk(scope):
            if node is scope:
                continue
            ok = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or (
                not last and isinstance(node, ast.ClassDef)
            )
            if ok and getattr(node, "name", None) == part:
                found = node
                break
        if found is None:
            raise LookupError(f"function {name} not found")
        scope = found
    assert isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef)
    return scope


def decorators(site_packages: Path, rel: str, func: str) -> list[str]:
    """The decorator expressions of a function, as source text."""
    tree, _ = _parse(site_packages / rel)
    return [ast.unparse(d) for d in _find_function(tree, func).decorator_list]


def frame(
    site_packages: Path,
    rel: str,
    func: str,
    needle: str,
    nth: int = 0,
    within: str = "",
    contains: str = "",
) -> Frame:
    """The frame of ``func`` in ``rel`` while it executes the call starting with ``needle``.

    ``needle`` is the start of the call expression (``self.model_runner.profile_run(``) or
    ``raise`` for a raise statement; ``nth`` picks a later occurrence; ``within`` restricts the
    search to the first statement whose source starts with it.
    """
    tree, lines = _parse(site_packages / rel)
    scope: ast.AST = _find_function(tree, func)
    if within:
        text = "".join(lines)
        stmts = [
            n
            for n in ast.walk(scope)
            if isinstance(n, ast.stmt)
            and (ast.get_source_segment(text, n) or "").startswith(within)
        ]
        if not stmts:
            raise LookupError(f"statement {within!r} not found in {rel}:{func}")
        scope = min(stmts, key=lambda n: n.lineno)
    hits: list[ast.AST] = []
    for node in ast.walk(scope):
        wanted = ast.Raise if needle.startswith("raise") else ast.Call
        if isinstance(node, wanted):
            seg = ast.get_source_segment("".join(lines), node) or ""
            if seg.startswith(needle) and contains in seg:
                hits.append(node)
    if not hits or len(hits) <= nth:
        raise LookupError(f"{needle!r} not found in {rel}:{func}")
    node = sorted(hits, key=lambda n: (n.lineno, n.col_offset))[nth]
    raw = lines[node.lineno - 1]
    stripped = raw.strip()
    lead = len(raw) - len(raw.lstrip())
    start = node.col_offset
    end = node.end_col_offset if node.end_lineno == node.lineno else len(raw.rstrip())
    assert end is not None
    name = func.rpartition(".")[2]
    out = [f'  File "{SITE}/{rel}", line {node.lineno}, in {name}', f"    {stripped}"]
    if end - start < len(stripped):
        out.append("    " + " " * (start - lead) + "^" * (end - start))
    return Frame(rel, node.lineno, name, tuple(out))


def statement_line(site_packages: Path, rel: str, func: str, needle: str) -> int:
    """Line of the first statement in ``func`` whose source starts with ``needle`` (for logs)."""
    tree, lines = _parse(site_packages / rel)
    fn = _find_function(tree, func)
    for node in sorted(ast.walk(fn), key=lambda n: getattr(n, "lineno", 0)):
        if isinstance(node, ast.stmt | ast.expr) and hasattr(node, "lineno"):
            seg = ast.get_source_segment("".join(lines), node) or ""
            if seg.startswith(needle):
                return node.lineno
    raise LookupError(f"{needle!r} not found in {rel}:{func}")


@dataclass(frozen=True)
class LogSite:
    """Where a logger call or raise lives, and its format string as written in the source."""

    rel: str
    lineno: int
    template: str

    @property
    def basename(self) -> str:
        """What ``[%(fileinfo)s:%(lineno)d]`` shows."""
        return self.rel.rsplit("/", 1)[-1]

    @property
    def source(self) -> str:
        """``vllm/v1/worker/gpu_worker.py:759``."""
        return f"{self.rel}:{self.lineno}"


def _template_of(node: ast.Call | ast.Raise, text: str) -> str:
    call = node.exc if isinstance(node, ast.Raise) else node
    if isinstance(call, ast.Call) and call.args:
        arg = call.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        return ast.unparse(arg)
    return ast.get_source_segment(text, node) or ""


def log_site(site_packages: Path, rel: str, fragment: str, nth: int = 0) -> LogSite:
    """The logger call or ``raise`` whose message contains ``fragment`` (first line, template)."""
    tree, lines = _parse(site_packages / rel)
    text = "".join(lines)
    hits: list[ast.Call | ast.Raise] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            if fragment in (ast.get_source_segment(text, node.exc) or ""):
                hits.append(node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr.startswith(("info", "warning", "error", "debug", "exception"))
            and node.args
            and fragment in (ast.get_source_segment(text, node.args[0]) or "")
        ):
            hits.append(node)
    if not hits or len(hits) <= nth:
        raise LookupError(f"{fragment!r} not logged or raised in {rel}")
    node = sorted(hits, key=lambda n: n.lineno)[nth]
    return LogSite(rel, node.lineno, _template_of(node, text))
