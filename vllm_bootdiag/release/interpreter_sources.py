"""argparse, Python and the OS as this interpreter prints them: defaults needing no download.

argparse's messages are its stdlib module's; Python's are a few stdlib modules
(imports, process bootstrap, tracebacks, JSON) and the interpreter binary's C
strings (`cannot import name`); the OS's are the C library's errno texts
(`os.strerror`) and the dynamic loader's (`cannot open shared object file`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from .package_sources import MAX_BYTES, Package, _anchor_pattern, _Reader, _strings, _version
from .sources import Release, SourceError, Template


def _stdlib(module: str) -> Path:
    """A stdlib module's source file, found without importing anything new."""
    import sysconfig

    return Path(sysconfig.get_paths()["stdlib"]) / module


PYTHON_FILES = (
    "importlib/_bootstrap.py",
    "multiprocessing/process.py",
    "traceback.py",
    "json/decoder.py",
)
"""The stdlib files whose texts rules read (imports, process bootstrap, tracebacks, JSON)."""


def interpreter(name: str, wanted: Iterable[str]) -> Package:
    """argparse, python or os as this interpreter (and its C library) prints them."""
    r = _Reader(re.compile(_anchor_pattern(wanted)))
    version = f"Python {sys.version.split()[0]}"
    if name == "argparse":
        r.python("argparse.py", _stdlib("argparse.py").read_bytes())
    elif name == "python":
        for module in PYTHON_FILES:
            file = _stdlib(module)
            if file.is_file():
                r.python(module, file.read_bytes())
        for binary in _binaries():
            with binary.open("rb") as f:
                r.strings(binary.name, *_strings(f, r.anchors, MAX_BYTES))
    elif name == "os":
        import platform

        lib, libv = platform.libc_ver()
        version = f"{lib or 'libc'} {libv or '(version unknown)'}"
        for code in range(1, 134):
            text = os.strerror(code)
            if not text.startswith("Unknown error"):
                r.templates.append(Template(f"strerror({code})", 0, text, "string"))
        r.files.append("os.strerror")
        for loader in _loaders():
            with loader.open("rb") as f:
                r.strings(loader.name, *_strings(f, r.anchors, MAX_BYTES))
    else:
        raise SourceError(f"--with {name}: give its wheel or directory (--with {name}=PATH)")
    r.finish()
    return Package(name, Release(Path(version), _version("0"), tuple(r.files), r.templates),
                   [version], r.classes, None, r.notes)  # fmt: skip


def _binaries() -> Iterator[Path]:
    """The interpreter's executable and shared libpython, where C-level messages live."""
    import sysconfig

    exe = Path(os.path.realpath(sys.executable))
    if exe.is_file():
        yield exe
    lib = sysconfig.get_config_var("LDLIBRARY") or ""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    shared = Path(libdir) / lib
    if (lib.endswith(".so") or ".so." in lib) and shared.is_file():
        yield Path(os.path.realpath(shared))


def _loaders() -> Iterator[Path]:
    """The dynamic loader, which words `cannot open shared object file` and kin."""
    seen: set[str] = set()
    for pattern in ("/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*-linux-gnu/ld-linux*"):
        for p in sorted(Path("/").glob(pattern.lstrip("/"))):
            real = os.path.realpath(p)
            if real not in seen and Path(real).is_file():
                seen.add(real)
                yield Path(real)
