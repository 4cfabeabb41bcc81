#!/usr/bin/env python3
"""Accuracy against time for every opening criterion of the tree (issue #22): plots the median
and p99 relative force errors against the time of one force evaluation (the tree's build + walk
stages), one line per criterion and order, the Pareto front of each emphasized, from the JSON
of `nbody bench theta` (which does the sweep: theta for the geometric and bmax criteria, alpha
for the relative one, monopole and quadrupole). On a GPU sweep the JSON carries the ECL-BH
points of the issue (Burtscher & Pingali's ECL-BH 4.5 on an H200, Plummer N = 1,048,576,
eps = 0.05), which the plot marks.

    nbody bench theta --device gpu --json pareto.json
    python3 bench/tree_pareto.py --from-json pareto.json --out pareto.png

or, the same in one call (runs `nbody bench theta`, then plots; `nbody bench theta --plot
FILE.png` runs this script):

    python3 bench/tree_pareto.py --device gpu -n 1048576 --softening 0.05 --out pareto.png
    python3 bench/tree_pareto.py --device cpu -n 100000 --softening 0.01 --out pareto_cpu.png

Input (`nbody bench theta --json FILE`, docs/json.md): an object with `points`, a list of
{series, ms, median, p99, front_median, front_p99, theta or alpha, ...}, optional
`references` [{label, median, p99, ms, source}] and the run's settings (model, n, softening,
precision, device, cpu, gpu, threads, git, date) for the labels.

Exit codes: 0 done; 1 bad input (the message names the file and the problem); 2 bad
arguments; 3 no plot (matplotlib missing); otherwise nbody's exit code.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CRITERIA_COLORS = {"geometric": "C0", "bmax": "C1", "relative": "C2"}
POINT_KEYS = {"series": str, "ms": (int, float), "median": (int, float), "p99": (int, float),
              "front_median": bool, "front_p99": bool}
NO_MATPLOTLIB = "tree_pareto: matplotlib is not installed: no plot (pip install matplotlib)"


class BadInput(Exception):
    """Input that cannot be plotted; the message names the problem."""


def load_points(path: Path) -> dict:
    """Reads and checks the JSON of `nbody bench theta`."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}:{e.lineno}: invalid JSON: {e.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
        raise BadInput(f"{path}: expected an object with a list 'points' (nbody bench theta --json)")
    if not doc["points"]:
        raise BadInput(f"{path}: 'points' is empty")
    for i, p in enumerate(doc["points"]):
        for key, kind in POINT_KEYS.items():
            if not isinstance(p, dict) or not isinstance(p.get(key), kind):
                raise BadInput(f"{path}: points[{i}]: missing or bad '{key}'")
    for i, r in enumerate(doc.get("references") or []):
        if not all(isinstance(r.get(k), (int, float)) for k in ("median", "p99", "ms")):
            raise BadInput(f"{path}: references[{i}]: needs median, p99 and ms")
    return doc


def knob_text(p: dict) -> str:
    return f"α {p['alpha']:g}" if p.get("alpha") is not None else (
        f"θ {p['theta']:g}" if p.get("theta") is not None else "")


def title_of(doc: dict) -> str:
    device = doc.get("device", "?")
    where = doc.get("gpu") if device == "gpu" else doc.get("cpu")
    threads = f", {doc['threads']} threads" if device == "cpu" and doc.get("threads") else ""
    return (f"{doc.get('model', 'plummer').capitalize()} N = {doc.get('n', '?')}, "
            f"eps = {doc.get('softening', '?')}, {doc.get('precision', '?')}, {device}"
            + (f" ({where}{threads})" if where else ""))


def plot(doc: dict, out: Path) -> None:
    """Two panels, median and p99 against ms, log-log; each series' front drawn bold."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    series = list(dict.fromkeys(p["series"] for p in doc["points"]))
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharex=True)
    for ax, key in zip(axes, ("median", "p99")):
        for s in series:
            pts = sorted((p for p in doc["points"] if p["series"] == s), key=lambda p: p["ms"])
            criterion, _, order = s.partition(" ")
            color = CRITERIA_COLORS.get(criterion)
            style = "--" if order == "quadrupole" else "-"
            marker = "s" if order == "quadrupole" else "o"
            ax.plot([p["ms"] for p in pts], [p[key] for p in pts], style, color=color,
                    marker=marker, markerfacecolor="none", linewidth=0.8, alpha=0.4)
            color = ax.lines[-1].get_color()
            front = [p for p in pts if p[f"front_{key}"]]
            ax.plot([p["ms"] for p in front], [p[key] for p in front], style, color=color,
                    marker=marker, linewidth=2.2, markersize=6, label=s)
            for p in front:
                ax.annotate(knob_text(p), (p["ms"], p[key]), textcoords="offset points",
                            xytext=(4, 3), fontsize=6, color=color)
        refs = doc.get("references") or []
        for r in refs:
            ax.plot(r["ms"], r[key], "k*", markersize=13)
            ax.annotate(r.get("label", ""), (r["ms"], r[key]), textcoords="offset points",
                        xytext=(6, -10), fontsize=7)
        if refs:
            ax.plot([], [], "k*", markersize=10, label="ECL-BH 4.5 (Burtscher & Pingali, H200)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        # Ticks at 1, 2, 5 per decade, written plainly: a sweep often spans less than a decade.
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("ms per force evaluation (build + walk)")
        ax.set_ylabel(f"{key} relative force error")
        ax.grid(True, which="both", alpha=0.3)
    # One legend under both panels, clear of every point.
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7,
               bbox_to_anchor=(0.5, 0.035 + 0.025 * len(doc.get("references") and [1] or [])))
    fig.suptitle(title_of(doc) + "; bold: the Pareto front of each criterion and order",
                 fontsize=10)
    notes = [f"errors against the float64 direct sum on {doc.get('sample', '?')} sampled bodies"]
    notes += [f"git {doc['git']}"] if doc.get("git") else []
    notes += [str(doc["date"])] if doc.get("date") else []
    sources = sorted({r["source"] for r in doc.get("references") or [] if r.get("source")})
    text = " · ".join(notes) + "".join(f"\n{s}" for s in sources)
    fig.text(0.5, 0.01, text, ha="center", va="bottom", fontsize=7, color="0.3")
    fig.tight_layout(rect=(0, 0.14 + 0.03 * len(sources), 1, 0.97))
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    fig.savefig(tmp, dpi=120, format="png")
    plt.close(fig)
    os.replace(tmp, out)


def sweep(a: argparse.Namespace, json_path: Path) -> int:
    """Runs `nbody bench theta` with the script's options; the JSON goes to json_path."""
    cmd = [a.exe, "bench", "theta", "--device", a.device, "--json", str(json_path)]
    for flag, value in (("-n", a.n), ("--softening", a.softening), ("--precision", a.precision),
                        ("--sample", a.sample), ("--threads", a.threads), ("--seed", a.seed),
                        ("--thetas", a.thetas), ("--alphas", a.alphas),
                        ("--criteria", a.criteria), ("--orders", a.orders),
                        ("--seconds", a.seconds)):
        if value is not None:
            cmd += [flag, str(value)]
    print("tree_pareto: " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd).returncode


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog="Without --from-json the sweep options go to nbody bench "
                                       "theta; unset ones take its defaults.")
    p.add_argument("--from-json", type=Path, help="plot this JSON of nbody bench theta (no sweep)")
    p.add_argument("--out", type=Path, help="PNG of the two fronts")
    p.add_argument("--json", type=Path, help="sweep: keep the measurements in this JSON file")
    p.add_argument("--exe", default=os.environ.get("NBODY_EXE", "build/release/src/nbody"))
    p.add_argument("--device", default="cpu", choices=("cpu", "gpu"))
    p.add_argument("-n", type=int)
    p.add_argument("--softening", type=float)
    p.add_argument("--precision", default="float")
    p.add_argument("--sample", type=int)
    p.add_argument("--threads", type=int, help="CPU threads (0: all)")
    p.add_argument("--seed", type=int)
    p.add_argument("--thetas", help="e.g. 0.3,0.5,0.7")
    p.add_argument("--alphas", help="e.g. 0.0005,0.002")
    p.add_argument("--criteria", help="e.g. geometric,relative")
    p.add_argument("--orders", help="monopole,quadrupole")
    p.add_argument("--seconds", type=float, help="timing budget per point")
    a = p.parse_args(argv)
    if a.from_json and not a.out:
        p.error("--from-json needs --out")

    with tempfile.TemporaryDirectory() as tmp:
        path = a.from_json
        if path is None:
            path = a.json or Path(tmp) / "tree_pareto.json"
            status = sweep(a, path)
            if status != 0:
                return status
        try:
            doc = load_points(path)
        except BadInput as e:
            print(f"tree_pareto: {e}", file=sys.stderr)
            return 1
        if not a.out:
            return 0
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(NO_MATPLOTLIB, file=sys.stderr)
            return 3
        plot(doc, a.out)
    print(f"tree_pareto: wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
