"""nbody.yt_load: yt's projection of an nbody snapshot with no arguments (issue 33 item 5)."""

import numpy as np
import pytest

import nbody


def picture(path):
    """The pixels of a PNG that has something drawn on it."""
    image = pytest.importorskip("matplotlib.image", reason="matplotlib is not installed")
    pixels = image.imread(str(path))
    assert min(pixels.shape[:2]) > 100
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)) > 16, f"{path} is blank"
    return pixels


@pytest.mark.parametrize("model, dim", [("plummer", 3), ("disk", 2)])
def test_projection_of_a_snapshot_needs_no_arguments(tmp_path, model, dim):
    yt = pytest.importorskip("yt", reason="yt is not installed (scripts/setup.sh puts it in .venv)")
    yt.set_log_level(40)
    sim = nbody.generate(model, n=1000, seed=3, dim=dim)
    path = tmp_path / "snap.hdf5"
    sim.save(str(path))
    ds = nbody.yt_load(path)
    # the domain holds every body, with room on each side, also a flat (2D) system
    lo, hi = ds.domain_left_edge.d, ds.domain_right_edge.d
    for axis, xs in enumerate((sim.x, sim.y, sim.z)):
        assert lo[axis] < xs.min() and xs.max() < hi[axis]
    [name] = yt.ParticleProjectionPlot(ds, "z").save(str(tmp_path / "projection.png"))
    picture(name)


def test_bad_padding_and_empty_files_are_refused(tmp_path):
    pytest.importorskip("yt", reason="yt is not installed (scripts/setup.sh puts it in .venv)")
    path = tmp_path / "snap.hdf5"
    nbody.generate("plummer", n=10, seed=1).save(str(path))
    with pytest.raises(ValueError, match="padding"):
        nbody.yt_load(path, padding=-1)
    with pytest.raises(ValueError, match="padding"):
        nbody.yt_load(path, padding=float("nan"))
