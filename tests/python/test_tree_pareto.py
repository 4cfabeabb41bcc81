"""Tests of bench/tree_pareto.py, the plot of `nbody bench theta` (issue #22).

A synthetic JSON of nbody bench theta in (a CPU sweep, and a GPU sweep with ECL-BH's points),
a PNG out; bad input; the sweep mode, which runs `nbody bench theta` (here a stand-in that
records its arguments). Run by ctest (bench_report); standard library only, plus matplotlib
for the plots, which are skipped with a reason when it is not installed.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

SCRIPT = Path(os.environ.get("NBODY_TREE_PARETO",
                             Path(__file__).resolve().parents[2] / "bench" / "tree_pareto.py"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
NO_MATPLOTLIB = "matplotlib is not installed: PNG checks skipped (scripts/setup.sh installs it)"
ECL_BH_SOURCE = ("ECL-BH 4.5 (Burtscher and Pingali), measured on an H200 with one float64 "
                 "checker, Plummer N = 1,048,576, eps = 0.05, float (issue #22)")


def sweep_doc(device="cpu"):
    """Points shaped like nbody bench theta's: error ~ theta^3, time ~ theta^-1.5."""
    points = []
    for mac, knob, values in (("geometric", "theta", (0.3, 0.5, 0.7)),
                              ("bmax", "theta", (0.3, 0.5, 0.7)),
                              ("relative", "alpha", (0.0005, 0.002, 0.008))):
        for quadrupole in (False, True):
            for v in values:
                x = v if knob == "theta" else 0.5 * (v / 0.002) ** 0.33
                ms = 20 * x ** -1.5 * (2.0 if quadrupole else 1.0)
                median = 3e-3 * x ** 3 * (0.3 if quadrupole else 1.0)
                points.append({"series": f"{mac} {'quadrupole' if quadrupole else 'monopole'}",
                               "mac": mac, "quadrupole": quadrupole,
                               "theta": v if knob == "theta" else None,
                               "alpha": v if knob == "alpha" else None,
                               "median": median, "p99": 8 * median, "ms": ms,
                               "front_median": True, "front_p99": True})
    points[1]["ms"] = points[0]["ms"] * 1.1  # dominated: slower and less accurate than [0]
    points[1]["front_median"] = points[1]["front_p99"] = False
    doc = {"suite": "theta", "device": device, "model": "plummer", "n": 100000,
           "softening": 0.01, "precision": "float", "cpu": "AMD EPYC", "threads": 2,
           "gpu": "NVIDIA H200" if device == "gpu" else None, "sample": 2000, "git": "abc1234",
           "date": "2026-11-24T12:00:00Z", "points": points, "references": []}
    if device == "gpu":
        doc["references"] = [
            {"label": "ECL-BH 4.5 (1)", "median": 7.16e-4, "p99": 4.26e-3, "ms": 9.97,
             "source": ECL_BH_SOURCE},
            {"label": "ECL-BH 4.5 (2)", "median": 1.43e-4, "p99": 9.83e-4, "ms": 46.0,
             "source": ECL_BH_SOURCE}]
    return doc


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=120)


class TreeParetoTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, doc):
        path = self.dir / name
        path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
        return path

    def check_png(self, path):
        data = path.read_bytes()
        self.assertEqual(data[:8], PNG_MAGIC, path)
        self.assertGreater(len(data), 20000, path)

    @unittest.skipUnless(HAVE_MATPLOTLIB, NO_MATPLOTLIB)
    def test_plots_cpu_and_gpu_sweeps(self):
        for device in ("cpu", "gpu"):
            src, png = self.write(f"{device}.json", sweep_doc(device)), self.dir / f"{device}.png"
            proc = run("--from-json", src, "--out", png)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn(f"wrote {png}", proc.stderr)
            self.check_png(png)
        self.assertFalse(list(self.dir.glob(".*.tmp")))  # written atomically, nothing left over

    @unittest.skipUnless(HAVE_MATPLOTLIB, NO_MATPLOTLIB)
    def test_gpu_plot_marks_the_ecl_bh_points(self):
        sys.path.insert(0, str(SCRIPT.parent))
        try:
            import tree_pareto
        finally:
            sys.path.pop(0)
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        drawn = []
        real_savefig = plt.Figure.savefig

        def capture(fig, *args, **kwargs):
            drawn.append(fig)
            return real_savefig(fig, *args, **kwargs)

        plt.Figure.savefig = capture
        try:
            tree_pareto.plot(sweep_doc("gpu"), self.dir / "gpu.png")
        finally:
            plt.Figure.savefig = real_savefig
        (fig,) = drawn
        texts = [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]
        self.assertEqual(sum("ECL-BH 4.5 (1)" in t for t in texts), 2)  # one per panel
        self.assertTrue(any("Burtscher" in t for t in texts))
        stars = [line for ax in fig.axes for line in ax.lines
                 if line.get_marker() == "*" and len(line.get_xdata()) == 1]
        self.assertEqual(sorted({float(s.get_xdata()[0]) for s in stars}), [9.97, 46.0])
        labels = fig.axes[0].get_legend_handles_labels()[1]
        self.assertEqual(labels[:6], ["geometric monopole", "geometric quadrupole",
                                      "bmax monopole", "bmax quadrupole", "relative monopole",
                                      "relative quadrupole"])
        self.assertTrue(any(label.startswith("ECL-BH 4.5") for label in labels))

    def test_bad_input_is_named(self):
        cases = [("not json", "invalid JSON"), ({"rows": []}, "list 'points'"),
                 ({"points": []}, "'points' is empty"),
                 ({"points": [{"series": "geometric monopole", "ms": 1.0, "median": 1e-3}]},
                  "points[0]: missing or bad 'p99'")]
        for i, (doc, message) in enumerate(cases):
            src = self.write(f"bad{i}.json", doc)
            proc = run("--from-json", src, "--out", self.dir / "x.png")
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn(str(src), proc.stderr)
            self.assertIn(message, proc.stderr)
        self.assertEqual(run("--from-json", src).returncode, 2)  # --from-json without --out
        self.assertFalse((self.dir / "x.png").exists())

    def test_sweep_mode_runs_nbody_bench_theta(self):
        log = self.dir / "args.json"
        fake = self.dir / "nbody"
        fake.write_text(textwrap.dedent(f"""\
            #!{sys.executable}
            import json, sys
            args = sys.argv[1:]
            json.dump(args, open({str(log)!r}, "w"))
            out = args[args.index("--json") + 1]
            json.dump(json.loads({json.dumps(sweep_doc())!r}), open(out, "w"))
            """))
        fake.chmod(0o755)
        kept = self.dir / "kept.json"
        png = self.dir / "sweep.png"
        args = ["--exe", fake, "--device", "cpu", "-n", 5000, "--thetas", "0.4,0.7", "--json", kept]
        if HAVE_MATPLOTLIB:
            args += ["--out", png]
        proc = run(*args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        called = json.loads(log.read_text())
        self.assertEqual(called[:4], ["bench", "theta", "--device", "cpu"])
        self.assertEqual(called[called.index("--json") + 1], str(kept))
        self.assertEqual(called[called.index("-n") + 1], "5000")
        self.assertEqual(called[called.index("--thetas") + 1], "0.4,0.7")
        self.assertNotIn("--softening", called)  # unset: nbody's default for the device
        self.assertEqual(len(json.loads(kept.read_text())["points"]), 18)
        if HAVE_MATPLOTLIB:
            self.check_png(png)

    def test_sweep_mode_passes_nbody_failure_on(self):
        fake = self.dir / "nbody"
        fake.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(7)\n")
        fake.chmod(0o755)
        self.assertEqual(run("--exe", fake).returncode, 7)


if __name__ == "__main__":
    unittest.main()
