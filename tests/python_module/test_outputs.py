"""Options through save()/load(), and what `nbody run` writes while it runs, from Python:
snapshot series, energy log, checkpoints, and a restart that goes on bit for bit."""
import csv

import numpy as np
import pytest

import nbody


def cluster(**options):
    options = {"gravity": "tree", "theta": 0.4, **options}
    return nbody.generate("plummer", n=48, seed=5, softening=0.05, dt=0.01, **options)


def test_hdf5_keeps_the_options(tmp_path):
    sim = cluster(integrator="euler", G=2.0, energy_method="solver", quadrupole=True)
    sim.evolve(0.05)
    sim.save(tmp_path / "s.hdf5")
    back = nbody.load(tmp_path / "s.hdf5")
    assert back.options == sim.options and back.time == sim.time
    np.testing.assert_array_equal(back.positions, sim.positions)
    assert nbody.load(tmp_path / "s.hdf5", softening=0.1).softening == 0.1  # keywords win
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "s.hdf5") as f:  # GADGET-4's place for them
        assert f["Parameters"].attrs["softening"] == 0.05
        assert f["Parameters"].attrs["gravity"] in ("tree", b"tree")


def test_text_and_csv_hold_bodies_only(tmp_path):
    sim = cluster()
    sim.save(tmp_path / "s.csv")
    assert nbody.load(tmp_path / "s.csv").softening == 0  # the default: CSV has no options


def test_outputs_and_restart(tmp_path):
    outputs = dict(snapshot_dt=0.1, stats_every=10, checkpoint_every=20)
    whole = cluster()
    whole.evolve(0.6, output_dir=tmp_path / "whole", **outputs)

    first = cluster()
    first.evolve(0.3, output_dir=tmp_path / "split", **outputs)
    again = nbody.load_checkpoint(tmp_path / "split")  # the newest checkpoint in the folder
    assert again.steps_done == 20 and again.options == first.options
    again.evolve(0.6, output_dir=tmp_path / "split", **outputs)

    np.testing.assert_array_equal(again.positions, whole.positions)  # bit for bit
    snaps = sorted(p.name for p in (tmp_path / "whole").glob("snapshot_*.hdf5"))
    assert snaps == [f"snapshot_{i:04d}.hdf5" for i in range(7)]
    assert sorted(p.name for p in (tmp_path / "split").glob("snapshot_*.hdf5")) == snaps
    s3 = nbody.load(tmp_path / "whole" / "snapshot_0003.hdf5")
    assert s3.time == pytest.approx(0.3, abs=1e-12) and s3.options == whole.options
    logs = [list(csv.DictReader(open(tmp_path / d / "energy.csv"))) for d in ("whole", "split")]
    assert logs[0] == logs[1]
    assert [int(r["step"]) for r in logs[0]] == list(range(0, 61, 10))
    assert abs(float(logs[0][-1]["rel_energy_error"])) < 1e-3
    checkpoints = sorted(p.name for p in (tmp_path / "whole").glob("checkpoint_*.h5"))
    assert checkpoints == ["checkpoint_00000040.h5", "checkpoint_00000060.h5"]  # 2 kept


def test_save_checkpoint(tmp_path):
    sim = cluster(integrator="ias15", gravity="direct")
    sim.evolve(0.2)
    sim.save_checkpoint(tmp_path / "c.h5")
    back = nbody.load_checkpoint(tmp_path / "c.h5")
    assert back.options == sim.options and back.steps_done == sim.steps_done
    sim.evolve(0.4)
    back.evolve(0.4)
    np.testing.assert_array_equal(back.positions, sim.positions)


def test_output_errors(tmp_path):
    sim = cluster()
    with pytest.raises(nbody.Error, match=r"^snapshot_dt: must be a finite number >= 0"):
        sim.evolve(1, snapshot_dt=-1, output_dir=tmp_path)
    # steps land on each snapshot time: one that cannot be counted (or does not advance
    # the time) is refused before anything is written, not a run without end
    for tiny in (1e-300, 5e-324):
        with pytest.raises(nbody.Error, match=r"^snapshot_dt: too small to reach t = 1: .*\(got "):
            sim.evolve(1, snapshot_dt=tiny, output_dir=tmp_path / "tiny")
        assert not (tmp_path / "tiny" / "snapshot_0000.hdf5").exists()
    # the output cadences are counts: a negative or huge one is refused by name, a float
    # or a bool is a TypeError naming it
    for name, bad in (("stats_every", -1), ("snapshot_every", 2**64), ("checkpoint_every", -5),
                      ("checkpoint_keep", 0)):
        with pytest.raises(nbody.Error, match=rf"^{name}: must be an integer from \d to 2\^64 - 1"):
            sim.evolve(1, output_dir=tmp_path / "bad", **{name: bad})
    for name, bad in (("stats_every", 1.5), ("checkpoint_every", True)):
        with pytest.raises(TypeError, match=rf"^evolve\(\): {name} expects an integer"):
            sim.evolve(1, output_dir=tmp_path / "bad", **{name: bad})
    with pytest.raises(nbody.FileError, match="no checkpoint_<step>.h5 in this folder"):
        nbody.load_checkpoint(tmp_path)
    assert sim.time == 0 and not list(tmp_path.iterdir())
