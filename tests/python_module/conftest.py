"""Shared helpers for the tests of the Python module (pytest; run by ./test.sh after
`pip install .`). The command line, when found (NBODY_EXE, or the release preset's binary),
is used to check that errors read the same from Python as from `nbody`."""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nbody

ROOT = Path(__file__).resolve().parents[2]


def nbody_exe():
    """The nbody binary, or None."""
    exe = os.environ.get("NBODY_EXE")
    if exe and Path(exe).exists():
        return exe
    built = ROOT / "build" / "release" / "src" / "nbody"
    return str(built) if built.exists() else None


def cli_error(*args, cwd=None):
    """What `nbody ARGS` prints after 'nbody: error: ' (it must fail that way), worded as
    the module words it: Python's names for the options (softening, not --softening)."""
    exe = nbody_exe()
    if exe is None:
        pytest.skip("the nbody command line is not built (set NBODY_EXE to compare messages)")
    proc = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)
    assert proc.returncode != 0, proc.stdout
    prefix = "nbody: error: "
    lines = [line for line in proc.stderr.splitlines() if line.startswith(prefix)]
    assert lines, proc.stderr
    return nbody._nbody._python_wording(lines[-1][len(prefix):])


def gpu_or_skip():
    info = nbody.build_info()
    if not info["gpus"]:
        pytest.skip(f"no usable GPU: {info['gpu_status']}")


def relative_errors(a, b):
    """|a_i - b_i| / |b_i| per body for (N, 3) arrays."""
    return np.linalg.norm(a - b, axis=1) / np.linalg.norm(b, axis=1)


@pytest.fixture
def random_bodies():
    """12 bodies, seeded: positions in [-1, 1]^3, small velocities, masses around 1/12."""
    rng = np.random.default_rng(7)
    n = 12
    return (rng.uniform(-1, 1, (n, 3)), rng.uniform(-0.1, 0.1, (n, 3)), rng.uniform(0.5, 1.5, n) / n)
