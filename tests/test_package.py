"""The package as a worker imports it: beside vLLM, never inside it."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import vllm_bootdiag

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def test_import_pulls_in_neither_vllm_nor_torch() -> None:
    code = (
        "import sys, vllm_bootdiag, vllm_bootdiag.cli; "
        "bad = [m for m in sys.modules if m in ('vllm', 'torch') "
        "or m.startswith(('vllm.', 'torch.'))]; print(bad)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_public_api_is_exported() -> None:
    for name in vllm_bootdiag.__all__:
        assert hasattr(vllm_bootdiag, name), name
    assert callable(vllm_bootdiag.classify) and callable(vllm_bootdiag.plan)


ROOT = Path(__file__).resolve().parent.parent


def _pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def test_version_is_one_value_everywhere() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", vllm_bootdiag.__version__)
    project = _pyproject()
    # hatchling reads the version from the module the package itself exports
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == "vllm_bootdiag/_version.py"
    r = subprocess.run(
        [sys.executable, "-m", "vllm_bootdiag", "--version"],
        capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 0 and r.stdout.strip() == f"vllm-bootdiag {vllm_bootdiag.__version__}"


def test_license_file_is_the_declared_one_and_ships() -> None:
    project = _pyproject()
    assert project["project"]["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert project["project"]["license-files"] == ["LICENSE"]  # into the wheel's dist-info
    assert "LICENSE" in project["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]


def test_python_versions_are_not_capped() -> None:
    """A pure-Python package must not refuse the current interpreter release."""
    project = _pyproject()["project"]
    assert project["requires-python"] == ">=3.10"
    assert "Programming Language :: Python :: 3.14" in project["classifiers"]


def test_console_script_points_at_a_callable_main() -> None:
    target = _pyproject()["project"]["scripts"]["vllm-bootdiag"]
    module, _, attr = target.partition(":")
    assert callable(getattr(importlib.import_module(module), attr))


def test_import_is_lazy() -> None:
    """`import vllm_bootdiag` loads no rule table, planner or network code until a name is used."""
    code = (
        "import sys, vllm_bootdiag, vllm_bootdiag.cli; "
        "heavy = ('vllm_bootdiag.engine', 'vllm_bootdiag.rules', 'vllm_bootdiag.planner', "
        "'vllm_bootdiag.supervisor', 'pydantic', 'urllib.request', 'email'); "
        "print([m for m in heavy if m in sys.modules])"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_cli_groups_table_matches_the_modules() -> None:
    """`cli.GROUPS` says which module adds which subcommands; it must say the truth."""
    import argparse

    from vllm_bootdiag import cli

    seen: list[str] = []
    for module, names in cli.GROUPS.items():
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        assert tuple(sub.choices) == names, module
        seen += names
    full = cli.build_parser()
    choices = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert list(choices) == seen


_PYDANTIC_ALONE = (
    "import sys, pydantic\n"
    "class M(pydantic.BaseModel):\n"
    "    x: int\n"
    "M(x=1)\n"
    "print(' '.join(sys.modules))"
)
"""A program with one pydantic model validated: the modules any such program loads."""


def test_classify_loads_no_planner_supervisor_or_network_code() -> None:
    code = (
        "import sys, runpy; base = sys.argv[2:]\n"
        "sys.argv = ['vllm-bootdiag', 'classify', sys.argv[1]]\n"
        "from vllm_bootdiag.cli import main\n"
        "assert main() == 0\n"
        # (`email` is not in the list: pydantic's plugin loader imports importlib.metadata,
        # and with it email, when the first model class is built, in any pydantic program.)
        "heavy = ('vllm_bootdiag.planning', 'vllm_bootdiag.supervisor', 'vllm_bootdiag.launch', "
        "'urllib.request', 'http.client', 'subprocess')\n"
        "print([m for m in heavy if m in sys.modules and m not in base], "
        "file=sys.stderr)"
    )
    # What pydantic brings in on its own is not ours: on Python 3.10 it imports uuid, and
    # with it platform and subprocess.
    base = subprocess.run(
        [sys.executable, "-c", _PYDANTIC_ALONE],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.split()
    log = str(ROOT / "corpus" / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log")
    r = subprocess.run(
        [sys.executable, "-c", code, log, *base], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "[]"


def test_a_classify_builds_only_what_it_uses() -> None:
    """Patterns compile on first use, and a classify builds no model validator at all (its
    outcomes are built by quick_build), so one classify pays for the rules whose literal it
    found, not the table, nor pydantic's schema builder; a deferred model still validates
    and dumps when it is first used."""
    code = (
        "import sys, vllm_bootdiag\n"
        "from vllm_bootdiag import outcomes\n"
        "from vllm_bootdiag.rules import RULES\n"
        "d = vllm_bootdiag.classify_file(sys.argv[1])\n"
        "compiled = [r.id for r in RULES if 'compiled' in r.__dict__]\n"
        "built = [k for k, c in outcomes.OUTCOME_TYPES.items() if c.__pydantic_complete__]\n"
        "print(len(compiled), len(RULES), sorted(built), d.primary.kind)\n"
        "print('pydantic.plugin._loader' in sys.modules)\n"
        "print(type(d).model_validate_json(d.model_dump_json()) == d)"
    )
    log = str(ROOT / "corpus" / "0.32.0" / "kv_cache_shortfall__llama1b-kvspace1__cpu.log")
    r = subprocess.run([sys.executable, "-c", code, log], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    first, loader, second = r.stdout.splitlines()
    compiled, rules, built = first.split(" ", 2)
    assert 0 < int(compiled) < int(rules) // 4, first
    assert built == "[] kv_cache_shortfall", first
    assert loader == "False"  # no validator was built: pydantic's plugin loader never loaded
    assert second == "True"
