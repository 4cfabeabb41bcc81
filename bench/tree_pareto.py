#!/usr/bin/env python3
"""Accuracy against time for every opening criterion of the tree (issue #22): runs
`nbody accuracy` over a sweep of theta (geometric, bmax, geometric + quadrupole) and alpha
(relative), and plots the median and p99 relative force errors against the time of one force
evaluation (the tree's build + walk stages), with the ECL-BH points of the issue marked on
the GPU plot (Burtscher & Pingali's ECL-BH 4.5 on an H200, Plummer N = 1,048,576,
eps = 0.05).

    python3 bench/tree_pareto.py --device gpu -n 1048576 --softening 0.05 --out pareto.png
    python3 bench/tree_pareto.py --device cpu -n 100000 --softening 0.01 --out pareto_cpu.png

Writes the table to stdout (and --json FILE); the plot needs matplotlib.
"""
import argparse
import json
import os
import subprocess
import sys

SWEEPS = [
    ("geometric", ["--mac", "geometric"], "--theta", [0.3, 0.4, 0.5, 0.6, 0.7]),
    ("bmax", ["--mac", "bmax"], "--theta", [0.3, 0.4, 0.5, 0.6]),
    ("relative", ["--mac", "relative"], "--alpha", [0.0005, 0.001, 0.002, 0.004, 0.008]),
    ("geometric + quadrupole", ["--mac", "geometric", "--quadrupole"], "--theta", [0.5, 0.7]),
]
# (median, p99, ms per step) of ECL-BH 4.5 measured beside nbody (issue #22).
ECL_BH = [(7.16e-4, 4.26e-3, 9.97), (1.43e-4, 9.83e-4, 46.0)]


def run(exe, common, extra, knob, value):
    cmd = [exe, "accuracy", *common, *extra, knob, str(value), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    stages = r.get("build_seconds", 0) + r.get("walk_seconds", 0)
    r["ms"] = 1e3 * (stages if stages > 0 else r["tree_seconds"])
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--exe", default=os.environ.get("NBODY_EXE", "build/release/src/nbody"))
    p.add_argument("--device", default="cpu")
    p.add_argument("-n", type=int, default=100000)
    p.add_argument("--softening", type=float, default=0.01)
    p.add_argument("--precision", default="float")
    p.add_argument("--sample", type=int, default=4096)
    p.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    p.add_argument("--out", help="PNG of the two fronts")
    p.add_argument("--json", help="the measurements as JSON")
    a = p.parse_args()
    common = ["--model", "plummer", "-n", str(a.n), "--softening", str(a.softening),
              "--device", a.device, "--precision", a.precision, "--sample", str(a.sample),
              "--threads", str(a.threads)]
    rows = []
    print(f"{'criterion':<24} {'knob':>8} {'median':>10} {'p99':>10} {'ms':>8} {'inter/body':>10}")
    for label, extra, knob, values in SWEEPS:
        for v in values:
            r = run(a.exe, common, extra, knob, v)
            rows.append({"criterion": label, knob.lstrip("-"): v, "median": r["median"],
                         "p99": r["p99"], "ms": r["ms"],
                         "interactions_per_body": r.get("interactions_per_body", 0)})
            print(f"{label:<24} {v:>8g} {r['median']:>10.3e} {r['p99']:>10.3e} {r['ms']:>8.2f} "
                  f"{r.get('interactions_per_body', 0):>10.0f}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": a.device, "n": a.n, "softening": a.softening,
                       "precision": a.precision, "rows": rows}, f, indent=1)
    if not a.out:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print("tree_pareto: matplotlib is missing: no plot", file=sys.stderr)
        return 0
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharex=True)
    for ax, key in zip(axes, ("median", "p99")):
        for label, *_ in SWEEPS:
            pts = sorted((r["ms"], r[key]) for r in rows if r["criterion"] == label)
            ax.plot([t for t, _ in pts], [e for _, e in pts], "o-", label=label)
        if a.device == "gpu":
            ax.plot([t for *_, t in ECL_BH], [m if key == "median" else q for m, q, _ in ECL_BH],
                    "k*", markersize=12, label="ECL-BH 4.5 (H200)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("ms per force evaluation (build + walk)")
        ax.set_ylabel(f"{key} relative force error")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Plummer N = {a.n}, eps = {a.softening}, {a.precision}, {a.device}")
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"tree_pareto: wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
