"""Every file format from Python: exact round trips, format from the extension or by name,
and the command line reading what Python wrote."""
import subprocess

import numpy as np
import pytest

import nbody
from conftest import nbody_exe

EXTENSIONS = {"text": ".txt", "csv": ".csv", "hdf5": ".hdf5"}


def save_or_skip(sim, path, **kwargs):
    try:
        sim.save(path, **kwargs)
    except nbody.Error as e:
        if "without HDF5" in str(e):
            pytest.skip(f"nbody was built without HDF5: {e}")
        raise


@pytest.mark.parametrize("fmt", nbody.formats())
def test_round_trip_of_every_format(fmt, tmp_path):
    sim = nbody.generate("plummer", n=300, seed=11, radius=0.01)
    sim.step(3)
    path = tmp_path / f"state{EXTENSIONS.get(fmt, '.dat')}"
    save_or_skip(sim, path)  # format from the extension
    back = nbody.load(path)
    np.testing.assert_array_equal(back.positions, sim.positions)  # 17 significant digits or binary
    np.testing.assert_array_equal(back.velocities, sim.velocities)
    np.testing.assert_array_equal(back.masses, sim.masses)
    np.testing.assert_array_equal(back.radii, sim.radii)
    if fmt != "text":  # the text format has no id column
        np.testing.assert_array_equal(back.ids, sim.ids)
    # By name, whatever the extension.
    named = tmp_path / "named.dat"
    save_or_skip(sim, named, format=fmt)
    np.testing.assert_array_equal(nbody.load(named, format=fmt).positions, sim.positions)


def test_load_takes_run_options(tmp_path):
    path = tmp_path / "k.csv"
    nbody.generate("kepler", e=0.3).save(path)
    sim = nbody.load(path, dt=1e-3, gravity="tree", theta=0.3)
    assert (sim.dt, sim.gravity, sim.theta) == (1e-3, "tree", 0.3)


def test_the_command_line_reads_what_python_writes_and_back(tmp_path):
    exe = nbody_exe()
    if exe is None:
        pytest.skip("the nbody command line is not built")
    sim = nbody.generate("figure-eight")
    sim.x[0] += 1e-3  # an edit through a view reaches the file
    path = tmp_path / "f8.txt"
    sim.save(path)
    out = tmp_path / "out.csv"
    subprocess.run([exe, "run", "-i", path, "--steps", "10", "--dt", "0.001", "-o", out, "--quiet"],
                   check=True, timeout=120)
    ran = nbody.load(path, dt=0.001)
    ran.step(10)
    cli = nbody.load(out)
    np.testing.assert_array_equal(cli.positions, ran.positions)  # the same library, bit for bit
