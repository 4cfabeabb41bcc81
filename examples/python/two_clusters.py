#!/usr/bin/env python3
"""Two Plummer clusters collide, driven from Python: the Barnes-Hut tree steps them, the
energy drift |dE/E| is recorded along the way, and two pictures are written:

    OUT/energy_drift.png   |dE/E| against time
    OUT/positions.png      x-y scatter plots of the bodies at four times

    python examples/python/two_clusters.py runs/python            # ~15 s on two cores
    python examples/python/two_clusters.py runs/big -n 20000 --t-end 12

Needs the nbody module (`pip install .` at the repository root) and matplotlib.
"""
import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt
import numpy as np

import nbody


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", nargs="?", default="runs/python", help="folder for the PNG files")
    p.add_argument("-n", type=int, default=4000, help="bodies in both clusters together")
    p.add_argument("--t-end", type=float, default=8.0, help="simulated time to reach")
    p.add_argument("--dt", type=float, default=0.01, help="time step")
    p.add_argument("--theta", type=float, default=0.6, help="tree opening angle")
    p.add_argument("--samples", type=int, default=40, help="energy measurements along the run")
    p.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    return p.parse_args()


def main():
    args = parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    # Two Plummer spheres (Hénon units each) on a parabolic orbit, 6 apart, impact parameter 1.
    sim = nbody.generate("two-clusters", n=args.n, seed=1, separation=6.0, impact=1.0,
                         gravity="tree", theta=args.theta, softening=0.02, dt=args.dt,
                         device=args.device)
    print(sim)

    e0 = sim.energy().total
    times, drifts = [0.0], [0.0]
    snapshot_times = [args.t_end * k / 3 for k in range(1, 4)]
    snapshots = [(0.0, sim.x.copy(), sim.y.copy())]  # views of the state: copy to keep
    sample_times = [args.t_end * k / args.samples for k in range(1, args.samples + 1)]
    start = time.perf_counter()
    for t in sorted(set(sample_times) | set(snapshot_times)):
        sim.evolve(t)  # steps of dt, the last one shortened to land on t exactly
        times.append(sim.time)
        drifts.append(abs(sim.energy().total - e0) / abs(e0))
        if t in snapshot_times:
            snapshots.append((sim.time, sim.x.copy(), sim.y.copy()))
    seconds = time.perf_counter() - start
    print(f"{sim.steps_done} steps to t = {sim.time:g} in {seconds:.1f} s "
          f"({sim.steps_done / seconds:.0f} steps/s), final |dE/E| = {drifts[-1]:.2e}")

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(times[1:], np.maximum(drifts[1:], 1e-16), marker=".")
    ax.set_xlabel("time")
    ax.set_ylabel("|E - E0| / |E0|")
    ax.set_title(f"Energy drift: {args.n} bodies, tree θ = {args.theta}, dt = {args.dt}")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "energy_drift.png", dpi=120)

    fig, axes = plt.subplots(2, 2, figsize=(8, 8), sharex=True, sharey=True)
    for ax, (t, x, y) in zip(axes.flat, snapshots):
        ax.scatter(x, y, s=min(2.0, 4000 / args.n), alpha=0.5, color="navy", linewidths=0)
        ax.set_title(f"t = {t:.2f}")
        ax.set_aspect("equal")
    lim = 6.0
    axes[0, 0].set_xlim(-lim, lim)
    axes[0, 0].set_ylim(-lim, lim)
    fig.suptitle("Two clusters colliding (x-y)")
    fig.tight_layout()
    fig.savefig(out / "positions.png", dpi=120)
    print(f"wrote {out / 'energy_drift.png'} and {out / 'positions.png'}")


if __name__ == "__main__":
    main()
