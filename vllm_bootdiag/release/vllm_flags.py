"""vLLM's command-line flags, their choices, and its config classes, read from a release.

argparse prints `argument --dtype: invalid choice: 'float7' (choose from ...)`,
pydantic `1 validation error for ModelConfig`: the words are argparse's and
pydantic's, the flag, its choices and the class are vLLM's. Since 0.10 vLLM
builds most flags from its config dataclasses (`add_argument("--dtype",
**model_kwargs["dtype"])`, `model_kwargs = get_kwargs(ModelConfig)`), and a
field typed with a `Literal` becomes choices, one typed `Literal | str` a free
value (0.33.0's `cache_dtype: CacheDType | str`, which dropped
`--kv-cache-dtype`'s choices). That is read here statically, as
`engine/arg_utils.py`'s `_compute_kwargs` does at run time; nothing is imported.
"""

from __future__ import annotations

import ast
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .sources import SourceError

ARG_FILES = ("vllm/engine/arg_utils.py",)
CONFIG_PREFIXES = ("vllm/config/", "vllm/config.py")


@dataclass(frozen=True, slots=True)
class Flag:
    """One `--flag` of `vllm serve`, as the release defines it."""

    name: str
    location: str
    kind: str
    """choice | free (a Literal or any string) | bool | int | float | str | other | unknown"""
    choices: tuple[str, ...] | None = None
    field: str | None = None
    """`Class.field` the flag is built from, when it is."""


@dataclass
class Flags:
    """Every flag and config class of one release."""

    flags: dict[str, Flag]
    classes: dict[str, str]
    """Config class name -> `file:line`."""
    fields: dict[str, frozenset[str]] = field(default_factory=dict)
    """Config class name -> its annotated fields (what pydantic names under its header)."""


def _want(name: str) -> bool:
    return name in ARG_FILES or (name.startswith(CONFIG_PREFIXES) and name.endswith(".py"))


def _read(path: Path) -> dict[str, str]:
    """arg_utils.py and the config modules of a wheel, zip or tree."""
    out: dict[str, str] = {}
    try:
        if path.is_file():
            with zipfile.ZipFile(path) as z:
                for name in z.namelist():
                    if _want(name):
                        out[name] = z.read(name).decode("utf-8", "replace")
            return out
        root = path / "vllm" if (path / "vllm").is_dir() else path
        for file in sorted(root.rglob("*.py")):
            name = "vllm/" + file.relative_to(root).as_posix()
            if _want(name):
                out[name] = file.read_text("utf-8", "replace")
    except (zipfile.BadZipFile, OSError) as e:
        raise SourceError(f"cannot read vLLM's flags from {path.name}: {e}") from None
    return out


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _strings(node: ast.AST) -> tuple[str, ...] | None:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(values) == len(node.elts):
            return tuple(str(v) for v in values)
    return None


class _Types:
    """Annotations of config fields resolved to what `_compute_kwargs` makes of them."""

    def __init__(self, trees: dict[str, ast.Module]) -> None:
        self.aliases: dict[str, ast.AST] = {}
        self.fields: dict[str, dict[str, ast.AST]] = {}
        self.classes: dict[str, str] = {}
        for name, tree in trees.items():
            for node in tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = _name(node.targets[0])
                    if target:
                        self.aliases.setdefault(target, node.value)
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    target = _name(node.target)
                    if target:
                        self.aliases.setdefault(target, node.value)
                elif isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, f"{name}:{node.lineno}")
                    body = self.fields.setdefault(node.name, {})
                    for item in node.body:
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            body[item.target.id] = item.annotation

    def members(self, node: ast.AST, depth: int = 0) -> list[ast.AST]:
        """A union's members, aliases followed (`CacheDType | str` -> Literal[...], str)."""
        if depth > 8:
            return [node]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.members(node.left, depth + 1) + self.members(node.right, depth + 1)
        if isinstance(node, ast.Subscript) and _name(node.value) in ("Optional", "Union"):
            inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [m for e in inner for m in self.members(e, depth + 1)]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            expr = _parse(node.value)  # a string annotation
            if expr and expr.body and isinstance(expr.body[0], ast.Expr):
                return self.members(expr.body[0].value, depth + 1)
        name = _name(node) if isinstance(node, ast.Name) else None
        if name and name in self.aliases:
            return self.members(self.aliases[name], depth + 1)
        return [node]

    def kind(self, annotation: ast.AST) -> tuple[str, tuple[str, ...] | None]:
        """(kind, choices) in `_compute_kwargs`'s order: bool, Literal, int, float, str."""
        members = self.members(annotation)
        names = {_name(m) for m in members if not isinstance(m, ast.Subscript)}
        literal: list[str] = []
        for m in members:
            if isinstance(m, ast.Subscript) and _name(m.value) == "Literal":
                elts = m.slice.elts if isinstance(m.slice, ast.Tuple) else [m.slice]
                literal += [str(e.value) for e in elts if isinstance(e, ast.Constant)]
        if "bool" in names:
            return "bool", None
        if literal:
            return ("free", None) if "str" in names else ("choice", tuple(sorted(literal)))
        for kind in ("int", "float", "str"):
            if kind in names:
                return kind, None
        return "other", None


def read(path: str | Path) -> Flags:
    """The flags `vllm serve` takes in the release at `path`."""
    files = _read(Path(path))
    trees = {n: t for n, t in ((n, _parse(s)) for n, s in files.items()) if t is not None}
    types = _Types({n: t for n, t in trees.items() if n.startswith(CONFIG_PREFIXES)})
    flags: dict[str, Flag] = {}
    for file in ARG_FILES:
        tree = trees.get(file)
        if tree is None:
            continue
        kwargs_of: dict[str, str] = {}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.value, ast.Call)
                and _name(node.value.func) == "get_kwargs"
                and node.value.args
            ):
                target, cls = _name(node.targets[0]), _name(node.value.args[0])
                if target and cls:
                    kwargs_of[target] = cls
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node.func) == "add_argument":
                for flag in _flag(node, f"{file}:{node.lineno}", kwargs_of, types):
                    flags.setdefault(flag.name, flag)
    fields = {c: frozenset(f) for c, f in types.fields.items()}
    return Flags(flags, types.classes, fields)


def _flag(call: ast.Call, where: str, kwargs_of: dict[str, str], types: _Types) -> list[Flag]:
    names = [
        a.value
        for a in call.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("--")
    ]
    if not names:
        return []
    kind, choices, field = "unknown", None, None
    for kw in call.keywords:
        if kw.arg == "choices":
            choices = _strings(kw.value)
            kind = "choice" if choices is not None else "unknown"
        elif kw.arg == "type" and _name(kw.value) in ("int", "float", "str") and kind == "unknown":
            kind = _name(kw.value) or kind
        elif kw.arg == "action" and kind == "unknown":
            action = kw.value.value if isinstance(kw.value, ast.Constant) else _name(kw.value)
            if action in ("store_true", "store_false", "BooleanOptionalAction"):
                kind = "bool"
        elif kw.arg is None and isinstance(kw.value, ast.Subscript):
            source, key = _name(kw.value.value), kw.value.slice
            cls = kwargs_of.get(source or "")
            if cls and isinstance(key, ast.Constant) and isinstance(key.value, str):
                field = f"{cls}.{key.value}"
                annotation = types.fields.get(cls, {}).get(key.value)
                if annotation is not None and choices is None:
                    kind, choices = types.kind(annotation)
    return [Flag(n, where, kind, choices, field) for n in names]
