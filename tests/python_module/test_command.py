"""pip install . installs the `nbody` command beside the module (pyproject.toml: the cli
component, into the environment's scripts folder, e.g. .venv/bin)."""
import importlib.metadata
import subprocess
import sysconfig
from pathlib import Path

import pytest

import nbody

DIST = "nbody-simulator"  # the distribution name (pyproject.toml; `nbody` on PyPI is another project)


def installed_files():
    try:
        return importlib.metadata.files(DIST) or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"nbody is imported from {Path(nbody.__file__).parent}, not installed by pip install .")


def test_pip_install_puts_the_command_in_the_environment():
    command = Path(sysconfig.get_path("scripts")) / "nbody"
    recorded = [f for f in installed_files() if f.name == "nbody" and f.parent.name == "bin"]
    assert recorded, f"{DIST} installed no bin/nbody"
    assert Path(recorded[0].locate()).resolve() == command.resolve()
    proc = subprocess.run([str(command), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"nbody {importlib.metadata.version(DIST)} "), proc.stdout


def test_the_module_comes_from_the_same_distribution():
    modules = [f for f in installed_files() if f.parts[0] == "nbody" and f.name.startswith("_nbody")]
    assert modules, f"{DIST} installed no nbody/_nbody extension"
    assert Path(modules[0].locate()).resolve().parent == Path(nbody.__file__).resolve().parent
