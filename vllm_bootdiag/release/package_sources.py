"""Another package's source read as data: the texts it can print, and its version.

Rules whose wording torch, huggingface_hub, pydantic, argparse ... print are
checked against that package, as vLLM's own rules are against vLLM. A package
comes as a wheel, an sdist, or an unpacked or installed directory; its Python
files give templates (sources.py's extraction), its compiled code (torch's
`libc10_cuda.so`, pydantic_core's Rust extension) printable strings, read by a
bounded streaming scan, and C, C++ and Rust sources (an sdist) their string
literals. Only files holding one of the wanted words are read closely: a 550 MB
torch wheel is one pass.
"""

from __future__ import annotations

import os
import re
import tarfile
import zipfile
import zlib
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from packaging.version import InvalidVersion, Version

from .sources import Release, SourceError, Template, templates

MAX_BYTES = 4 << 30
"""Compiled code read per package at most (torch's CUDA wheel holds 1.1 GB)."""
MAX_STRINGS = 200_000
"""Compiled code's printable strings kept per package (only those holding a wanted word)."""
MAX_STRING = 16384
"""Rust packs its literals into one run (pydantic_core's `Value error, {error}` is inside
7 KB of others): runs are kept whole up to this."""
_CHUNK = 8 << 20
_PRINTABLE = re.compile(rb"[\x20-\x7e\t]{5,}")
_C_STRING = re.compile(rb'"((?:[^"\\\n]|\\.){4,})"')
_CLASS = re.compile(r"^[ \t]*class[ \t]+(\w+)", re.MULTILINE)
_COMPILED = re.compile(r"\.(?:so(?:\.[\d.]+)?|pyd|dylib|dll)$")
_NATIVE_SOURCE = (".rs", ".c", ".cc", ".cpp", ".cu", ".h", ".hpp", ".cuh")
_META_VERSION = re.compile(r"^Version:\s*(\S+)", re.MULTILINE)
_DIST_NAME = re.compile(r"^([A-Za-z0-9_.]+?)-(\d[^-]*?)(?:-|\.tar\.gz$|\.zip$|\.dist-info$)")


@dataclass
class Package:
    """The texts one package prints, as a Release (so the drift tools read it too)."""

    name: str
    """Who prints it, as rules say (`printed_by`: pytorch, pydantic, ...)."""
    release: Release
    versions: list[str] = field(default_factory=list)
    """`distribution version` of each source given (pydantic and pydantic_core)."""
    classes: dict[str, list[str]] = field(default_factory=dict)
    """Class name -> `file:line`: an exception's name is printed from its class."""
    build: str | None = None
    """torch's build: cuda, rocm, xpu or cpu (which device texts it can hold)."""
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        build = f" ({self.build} build)" if self.build else ""
        return (", ".join(self.versions) or f"{self.name} (version unknown)") + build


def words(text: str) -> list[str]:
    """The words a text is looked for by: its longest, and up to two more of 8 letters or
    more. A string holding the text holds them all, and a rewording usually keeps one;
    short common words (`file`, `error`) would have every file of torch read closely."""
    found = sorted(set(re.findall(r"[A-Za-z_][A-Za-z_]{3,}", text)), key=len, reverse=True)
    if not found:
        return [text.strip()] if text.strip() else []
    return [found[0], *[w for w in found[1:3] if len(w) >= 8]]


# --- compiled code -----------------------------------------------------------------


def _strings(stream: IO[bytes], anchors: re.Pattern[bytes], budget: int) -> tuple[list[str], int]:
    """Printable runs holding an anchor, read in chunks (a run cut by a chunk's end is
    carried over, up to MAX_STRING bytes)."""
    out: list[str] = []
    carry, read = b"", 0
    while read < budget:
        chunk = stream.read(min(_CHUNK, budget - read))
        if not chunk:
            break
        read += len(chunk)
        data = carry + chunk
        tail = len(data)
        while tail > 0 and 0x20 <= data[tail - 1] <= 0x7E:
            tail -= 1
        carry = data[tail:][-MAX_STRING:]
        if anchors.search(data, 0, tail) is None:
            continue
        for m in _PRINTABLE.finditer(data, 0, tail):
            if anchors.search(m.group(0)):
                out.append(m.group(0)[:MAX_STRING].decode("ascii"))
    if carry and anchors.search(carry):
        out.append(carry.decode("ascii"))
    return out, read


def _native_literals(text: bytes, anchors: re.Pattern[bytes]) -> list[tuple[int, str]]:
    """String literals of C, C++ or Rust source, with their lines."""
    out = []
    for m in _C_STRING.finditer(text):
        if anchors.search(m.group(1)):
            line = text.count(b"\n", 0, m.start()) + 1
            raw = m.group(1).decode("utf-8", "replace")
            out.append((line, raw.replace('\\"', '"').replace("\\n", "\n")))
    return out


# --- reading a package -------------------------------------------------------------


@dataclass
class _Reader:
    """What one package's files yield, gathered as they stream by."""

    anchors: re.Pattern[bytes]
    templates: list[Template] = field(default_factory=list)
    classes: dict[str, list[str]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    compiled: list[tuple[str, int]] = field(default_factory=list)
    budget: int = MAX_BYTES
    versions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    pending: list[tuple[str, str]] = field(default_factory=list)
    kept: int = 0

    def python(self, name: str, data: bytes) -> None:
        self.files.append(name)
        if self.anchors.search(data):
            self.pending.append((name, data.decode("utf-8", "replace")))

    def finish(self) -> None:
        """Parse the Python files that hold a wanted word (on every core: torch has 800)."""
        items, self.pending = self.pending, []
        workers = min(os.cpu_count() or 1, 8)
        if workers > 1 and sum(len(t) for _, t in items) > 2_000_000:
            with ProcessPoolExecutor(workers) as pool:
                parsed = list(pool.map(_parse, items, chunksize=16))
        else:
            parsed = [_parse(i) for i in items]
        for (name, text), found in zip(items, parsed, strict=True):
            self.templates.extend(found)
            for m in _CLASS.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                self.classes.setdefault(m[1], []).append(f"{name}:{line}")

    def native(self, name: str, data: bytes) -> None:
        self.files.append(name)
        for line, text in _native_literals(data, self.anchors):
            self.templates.append(Template(name, line, text, "string"))

    def strings(self, name: str, found: list[str], read: int) -> None:
        self.files.append(name)
        self.budget -= read
        room = max(MAX_STRINGS - self.kept, 0)
        if len(found) > room:
            self.notes.append(f"{name}: kept {room:,} of {len(found):,} strings")
        self.kept += min(len(found), room)
        for text in found[:room]:
            self.templates.append(Template(name, 0, text, "string"))

    def meta(self, name: str, text: str) -> None:
        m = _META_VERSION.search(text)
        dist = re.search(r"^Name:\s*(\S+)", text, re.MULTILINE)
        if m and dist:
            self.versions.append(f"{dist[1]} {m[1]}")


def _parse(item: tuple[str, str]) -> list[Template]:
    return templates(item[1], item[0], docstrings=False)[0]


def _zip_member(item: tuple[str, str, bytes, int]) -> tuple[str, list[str], int]:
    path, name, anchors, budget = item
    with zipfile.ZipFile(path) as z, z.open(name) as f:
        found, read = _strings(f, re.compile(anchors), budget)
    return name, found, read


def _read_zip(path: Path, r: _Reader) -> None:
    with zipfile.ZipFile(path) as z:
        compiled = []
        for info in z.infolist():
            name = info.filename
            if name.endswith(".py"):
                r.python(name, z.read(info))
            elif name.endswith(_NATIVE_SOURCE):
                r.native(name, z.read(info))
            elif _COMPILED.search(name):
                compiled.append(info)
            elif name.endswith((".dist-info/METADATA", "PKG-INFO")) and name.count("/") <= 1:
                r.meta(name, z.read(info).decode("utf-8", "replace"))
        compiled.sort(key=lambda i: i.file_size)
        items, budget = [], r.budget
        for info in compiled:
            share = min(info.file_size, budget)
            if share < info.file_size:
                r.notes.append(f"{info.filename}: read {share:,} of {info.file_size:,} bytes")
            if share <= 0:
                continue
            budget -= share
            items.append((str(path), info.filename, r.anchors.pattern, share))
    big = sum(i[3] for i in items) > (64 << 20) and (os.cpu_count() or 1) > 1
    if big:
        with ProcessPoolExecutor(min(os.cpu_count() or 1, 8)) as pool:
            results = list(pool.map(_zip_member, items))
    else:
        results = [_zip_member(i) for i in items]
    for name, found, read in results:
        r.strings(name, found, read)


def _read_tar(path: Path, r: _Reader) -> None:
    with tarfile.open(path) as t:
        for m in t:
            if not m.isfile():
                continue
            name = m.name.split("/", 1)[-1] if "/" in m.name else m.name
            f = t.extractfile(m)
            if f is None:
                continue
            if m.name.endswith(".py"):
                r.python(name, f.read())
            elif m.name.endswith(_NATIVE_SOURCE):
                r.native(name, f.read())
            elif _COMPILED.search(m.name):
                r.strings(name, *_strings(f, r.anchors, max(r.budget, 0)))
            elif name == "PKG-INFO":
                r.meta(name, f.read().decode("utf-8", "replace"))


def _read_dir(path: Path, r: _Reader, meta: bool = True) -> None:
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        name = file.relative_to(path.parent).as_posix()
        if file.suffix == ".py":
            r.python(name, file.read_bytes())
        elif file.suffix in _NATIVE_SOURCE:
            r.native(name, file.read_bytes())
        elif _COMPILED.search(file.name):
            with file.open("rb") as f:
                r.strings(name, *_strings(f, r.anchors, max(r.budget, 0)))
    if not meta:
        return
    here = path.name.lower().replace("-", "_")
    for m in [*sorted(path.parent.glob("*.dist-info/METADATA")), path / "PKG-INFO"]:
        dist = _DIST_NAME.match(m.parent.name)
        if m.is_file() and (m.parent == path or (dist and dist[1].lower() == here)):
            r.meta(m.as_posix(), m.read_text("utf-8", "replace"))


def read(name: str, paths: Iterable[str | Path], wanted: Iterable[str]) -> Package:
    """A package from its sources (several for one name: pydantic and pydantic_core)."""
    r = _Reader(re.compile(_anchor_pattern(wanted)))
    shown = []
    for p in map(Path, paths):
        shown.append(p.name)
        try:
            if not p.exists():
                raise SourceError(f"--with {name}: no such path: {p}")
            if p.is_dir():
                _read_dir(p, r)
            elif zipfile.is_zipfile(p):
                _read_zip(p, r)
            elif tarfile.is_tarfile(p):
                _read_tar(p, r)
            else:
                raise SourceError(
                    f"--with {name}: {p.name} is no wheel, sdist or directory "
                    "(a download cut short? `pip download --no-deps NAME` gives a wheel)"
                )
        except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError) as e:
            raise SourceError(f"--with {name}: {p.name} is not a readable archive: {e}") from None
        except OSError as e:
            raise SourceError(f"--with {name}: cannot read {p}: {e.strerror or e}") from None
    if not r.files:
        raise SourceError(f"--with {name}: no source files in {', '.join(shown)}")
    r.finish()
    return _package(name, ", ".join(shown), r, paths)


def _package(name: str, shown: str, r: _Reader, paths: Iterable[str | Path]) -> Package:
    versions = r.versions or [v for v in map(_version_from_name, paths) if v]
    first = versions[0].rsplit(" ", 1)[-1] if versions else "0"
    release = Release(Path(shown), _version(first), tuple(r.files), r.templates)
    build = _torch_build(r.files, versions) if name == "pytorch" else None
    return Package(name, release, versions, r.classes, build, r.notes)


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def _version_from_name(path: str | Path) -> str | None:
    m = _DIST_NAME.match(Path(path).name)
    return f"{m[1]} {m[2]}" if m else None


def _torch_build(files: list[str], versions: list[str]) -> str:
    """cuda, rocm, xpu or cpu, from the libraries a torch wheel carries."""
    libs = " ".join(f.rsplit("/", 1)[-1] for f in files if _COMPILED.search(f))
    for build, lib in (("rocm", "libc10_hip"), ("xpu", "libc10_xpu"), ("cuda", "libc10_cuda")):
        if lib in libs:
            return build
    return "cpu"


def _anchor_pattern(wanted: Iterable[str]) -> bytes:
    found = sorted({w for text in wanted for w in words(text)}, key=len, reverse=True)
    return b"|".join(re.escape(w.encode("ascii", "ignore")) for w in found) or b"(?!)"
