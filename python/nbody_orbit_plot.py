#!/usr/bin/env python3
"""Draw the x-y tracks of the bodies of an `nbody run` from its HDF5 snapshots.

    nbody run -i bodies.txt --integrator ias15 --t-end 70 --snapshot-dt 0.01 --output-dir runs/x
    python3 python/nbody_orbit_plot.py runs/x -o runs/x/orbits.png

Reads DIR/snapshot_*.hdf5 (GADGET layout: /Header attribute Time, /PartType1/Coordinates,
/PartType1/ParticleIDs) with h5py, matches bodies by id, and draws one track per body (a
dot at its last position). When DIR/energy.csv exists (written by --stats-every K), a
second panel shows |dE/E| against time. Needs numpy, h5py and matplotlib.
"""
import argparse
import csv
import sys
from pathlib import Path


def fail(message):
    sys.exit(f"nbody_orbit_plot: {message}")


def read_tracks(files, center, stride):
    """Returns (times, ids, xyz) with xyz[t, body, 3]; NaN where a body is missing."""
    import h5py
    import numpy as np

    frames = []
    for path in files[::stride]:
        try:
            with h5py.File(path, "r") as f:
                t = float(f["Header"].attrs["Time"])
                pos = f["PartType1/Coordinates"][:]
                ids = f["PartType1/ParticleIDs"][:]
                mass = None
                if center == "com":  # equal masses: one value, Header/MassTable[1]
                    bodies = f["PartType1"]
                    mass = (bodies["Masses"][:] if "Masses" in bodies
                            else np.full(len(pos), f["Header"].attrs["MassTable"][1]))
        except (OSError, KeyError) as e:
            fail(f"{path}: not an nbody snapshot ({e})")
        if center == "com":
            pos = pos - (mass[:, None] * pos).sum(axis=0) / mass.sum()
        elif center is not None:
            hit = np.nonzero(ids == center)[0]
            if len(hit) == 0:
                fail(f"{path}: no body with id {center} to center on")
            pos = pos - pos[hit[0]]
        frames.append((t, ids, pos))
    all_ids = np.unique(np.concatenate([ids for _, ids, _ in frames]))
    column = {int(i): k for k, i in enumerate(all_ids)}
    xyz = np.full((len(frames), len(all_ids), 3), np.nan)
    for n, (_, ids, pos) in enumerate(frames):
        xyz[n, [column[int(i)] for i in ids]] = pos
    return np.array([t for t, _, _ in frames]), all_ids, xyz


def read_energy(path):
    """Returns (time, |dE/E|) from an nbody energy.csv."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"time", "rel_energy_error"} <= rows[0].keys():
        fail(f"{path}: no 'time' and 'rel_energy_error' columns (not an nbody energy log?)")
    return ([float(r["time"]) for r in rows], [abs(float(r["rel_energy_error"])) for r in rows])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", type=Path, help="the run's --output-dir (snapshot_*.hdf5, energy.csv)")
    p.add_argument("-o", "--output", type=Path, help="PNG to write (default DIR/orbits.png)")
    p.add_argument("--center", default="none",
                   help="'com' (centre of mass), a body id (1..N: e.g. 1 for the Sun) or 'none'")
    p.add_argument("--labels", help="comma-separated names for the bodies in id order")
    p.add_argument("--title", help="title of the figure")
    p.add_argument("--stride", type=int, default=1, help="read every K-th snapshot (default 1)")
    p.add_argument("--no-energy", action="store_true", help="leave out the |dE/E| panel")
    p.add_argument("--dpi", type=int, default=100)
    a = p.parse_args()

    try:
        import h5py  # noqa: F401
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError as e:
        fail(f"needs numpy, h5py and matplotlib ({e}); e.g. pip install numpy h5py matplotlib")
    if not a.dir.is_dir():
        fail(f"{a.dir}: no such folder")
    files = sorted(a.dir.glob("snapshot_*.hdf5"))
    if not files:
        fail(f"{a.dir}: no snapshot_*.hdf5 (run with --snapshot-dt T --output-dir {a.dir})")
    if a.stride < 1:
        fail("--stride must be at least 1")
    center = None if a.center == "none" else a.center
    if center not in (None, "com"):
        try:
            center = int(center)
        except ValueError:
            fail(f"--center {a.center}: expected 'com', 'none' or a body id")
    times, ids, xyz = read_tracks(files, center, a.stride)
    labels = a.labels.split(",") if a.labels else [f"body {i}" for i in ids]
    if len(labels) != len(ids):
        fail(f"--labels has {len(labels)} names for {len(ids)} bodies")

    energy_csv = a.dir / "energy.csv"
    energy = None if a.no_energy or not energy_csv.exists() else read_energy(energy_csv)
    fig, axes = plt.subplots(1, 2 if energy else 1, figsize=(11 if energy else 6, 5),
                             squeeze=False, gridspec_kw={"width_ratios": [1, 1] if energy else [1]})
    ax = axes[0][0]
    for k, label in enumerate(labels):
        x, y = xyz[:, k, 0], xyz[:, k, 1]
        (line,) = ax.plot(x, y, lw=0.7, label=label)
        last = np.nonzero(~np.isnan(x))[0]
        if len(last):
            ax.plot(x[last[-1]], y[last[-1]], "o", ms=4, color=line.get_color())
    ax.set_aspect("equal", adjustable="datalim")
    where = {None: "", "com": " (centre of mass frame)"}.get(center,
                                                             f" (relative to body {center})")
    ax.set(xlabel="x", ylabel="y", title=f"x-y tracks, t = {times[0]:g} .. {times[-1]:g}{where}")
    ax.legend(fontsize=8, loc="best")
    if energy:
        t, err = energy
        keep = [(ti, e) for ti, e in zip(t, err) if e > 0]  # log axis: exact zeros left out
        ax = axes[0][1]
        if keep:
            ax.semilogy(*zip(*keep), lw=0.8)
        ax.set(xlabel="time", ylabel="|ΔE/E|", title=f"energy error ({energy_csv.name})")
        ax.grid(True, which="major", alpha=0.3)
    if a.title:
        fig.suptitle(a.title)
    fig.tight_layout()
    out = a.output or a.dir / "orbits.png"
    fig.savefig(out, dpi=a.dpi)
    print(f"wrote {out} ({len(times)} snapshots, {len(ids)} bodies)")


if __name__ == "__main__":
    main()
