"""`nbody bench theta` (issue #22): median and p99 force errors against time for every opening
criterion and order, the Pareto front of each, the JSON (--json FILE or on stdout), the plot
(--plot, through bench/tree_pareto.py) and the report suite theta-pareto (-o DIR).

Small sweeps on the CPU (N = 2000, 200 sampled bodies, two thetas, one alpha). The plot needs
python3 with matplotlib on PATH (what nbody runs): without it the test checks the message,
unless NBODY_PYTHON_TOOLS_REQUIRED=1. Run by ctest (which sets NBODY_EXE).
"""
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

from test_cli import CliTestCase, nbody

TOOLS_REQUIRED = os.environ.get("NBODY_PYTHON_TOOLS_REQUIRED") == "1"
SMALL = ["-n", 2000, "--sample", 200, "--thetas", "0.4,0.8", "--alphas", 0.002, "--seconds", 0.01,
         "--threads", 2]
SERIES = [f"{c} {o}" for c in ("geometric", "bmax", "relative") for o in ("monopole", "quadrupole")]
POINT_KEYS = {"series", "mac", "quadrupole", "theta", "alpha", "label", "median", "p90", "p99",
              "p999", "max", "rms", "ms", "wall_ms", "build_ms", "walk_ms", "interactions_per_body",
              "evaluations", "front_median", "front_p99"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def python3_has_matplotlib():
    try:
        return subprocess.run(["python3", "-c", "import matplotlib"], capture_output=True).returncode == 0
    except OSError:
        return False


def expected_front(points, key):
    """Per series: not dominated in (ms, key) by another point of the series."""
    def dominated(p):
        return any(q is not p and q["series"] == p["series"] and q["ms"] <= p["ms"]
                   and q[key] <= p[key] and (q["ms"] < p["ms"] or q[key] < p[key]) for q in points)
    return [not dominated(p) for p in points]


class TestBenchTheta(CliTestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp_class = tempfile.TemporaryDirectory()
        cls.json_path = Path(cls._tmp_class.name) / "points.json"
        cls.proc = nbody("bench", "theta", *SMALL, "--json", cls.json_path)
        cls.doc = json.loads(cls.json_path.read_text())

    @classmethod
    def tearDownClass(cls):
        cls._tmp_class.cleanup()

    def test_json_has_every_criterion_and_order(self):
        d = self.doc
        self.assertEqual(d["device"], "cpu")
        self.assertEqual((d["n"], d["sample"], d["softening"], d["precision"], d["model"]),
                         (2000, 200, 0.01, "float", "plummer"))
        self.assertGreater(d["reference_seconds"], 0)
        self.assertEqual(d["references"], [])  # ECL-BH's points: on the GPU only
        self.assertIn("nbody bench theta --device cpu", d["command"])
        points = d["points"]
        self.assertEqual(len(points), 10)  # 2 thetas x 2 criteria x 2 orders + 1 alpha x 2 orders
        self.assertEqual(list(dict.fromkeys(p["series"] for p in points)), SERIES)
        for p in points:
            self.assertTrue(POINT_KEYS <= p.keys(), p)
            relative = p["mac"] == "relative"
            self.assertEqual(p["alpha"] is not None, relative)
            self.assertEqual(p["theta"] is None, relative)
            self.assertEqual(p["quadrupole"], p["series"].endswith("quadrupole"))
            self.assertGreater(p["ms"], 0)
            self.assertAlmostEqual(p["ms"], p["build_ms"] + p["walk_ms"], places=9)
            self.assertGreaterEqual(p["evaluations"], 3)
            self.assertGreater(p["interactions_per_body"], 0)
            self.assertTrue(0 < p["median"] <= p["p99"] <= p["max"], p)
        self.assertEqual(sorted({p["alpha"] for p in points if p["alpha"]}), [0.002])

    def test_geometric_error_falls_as_theta_falls(self):
        for order in (False, True):
            by_theta = {p["theta"]: p for p in self.doc["points"]
                        if p["mac"] == "geometric" and p["quadrupole"] == order}
            self.assertLess(by_theta[0.4]["median"], by_theta[0.8]["median"])
            self.assertLess(by_theta[0.4]["p99"], by_theta[0.8]["p99"])
            self.assertGreater(by_theta[0.4]["interactions_per_body"],
                               by_theta[0.8]["interactions_per_body"])

    def test_front_flags_are_consistent(self):
        points = self.doc["points"]
        for key in ("median", "p99"):
            self.assertEqual([p[f"front_{key}"] for p in points], expected_front(points, key), key)
        for s in SERIES:  # the fastest point and the most accurate are on their series' front
            pts = [p for p in points if p["series"] == s]
            self.assertTrue(min(pts, key=lambda p: (p["ms"], p["median"]))["front_median"], s)
            self.assertTrue(min(pts, key=lambda p: (p["p99"], p["ms"]))["front_p99"], s)

    def test_table_on_stdout_progress_on_stderr(self):
        out, err = self.proc.stdout, self.proc.stderr
        for s in SERIES:
            self.assertIn(s, out)
        self.assertIn("alpha 0.002", out)
        self.assertIn(f"wrote {self.json_path}", out)
        self.assertIn("point 1/10", err)
        self.assertIn("point 10/10: relative quadrupole, alpha 0.002", err)
        self.assertIn("reference: float64 direct sum on 200 sampled bodies", err)

    def test_json_alone_prints_on_stdout(self):
        proc = nbody("bench", "theta", *SMALL, "--criteria", "geometric", "--orders", "monopole",
                     "--json")
        doc = json.loads(proc.stdout)  # stdout holds the JSON alone; the table went to stderr
        self.assertEqual([p["series"] for p in doc["points"]], ["geometric monopole"] * 2)
        self.assertIn("geometric monopole", proc.stderr)

    def test_plot(self):
        png = self.dir / "pareto.png"
        args = ["bench", "theta", *SMALL, "--criteria", "geometric,relative", "--plot", png]
        if python3_has_matplotlib():
            proc = nbody(*args)
            self.assertIn(f"wrote {png}", proc.stdout)
            data = png.read_bytes()
            self.assertEqual(data[:8], PNG_MAGIC)
            self.assertGreater(len(data), 20000)
            self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["pareto.png"])  # no temp JSON
        elif TOOLS_REQUIRED:
            self.fail("python3 on PATH has no matplotlib, which the venv should provide")
        else:
            self.check_fails(args, "--plot: ", f"(no plot drawn) (got {png})")

    def test_suite_before_json_still_parses(self):
        # --json takes an optional FILE: a suite named right after it is still the suite.
        proc = nbody("bench", "--json", "theta", *SMALL, "--criteria", "bmax", "--orders",
                     "monopole")
        self.assertEqual(len(json.loads(proc.stdout)["points"]), 2)

    def test_report_suite(self):
        out = self.dir / "report"
        nbody("bench", "theta", "--quick", "--thetas", "0.5", "--alphas", "0.002", "-o", out)
        doc = json.loads((out / "theta-pareto.json").read_text())
        self.assertEqual(doc["suite"], "theta-pareto")
        rows = [dict(zip(doc["columns"], r)) for r in doc["rows"]]
        self.assertEqual([r["series"] for r in rows], SERIES)
        self.assertTrue(all(r["device"] == "cpu" and r["n"] == 5000 for r in rows))
        self.assertTrue(all(r["front_median"] and r["front_p99"] for r in rows))  # one per series
        self.assertTrue((out / "theta.json").exists())  # the theta suite runs beside it
        self.assertIn("<!-- suite: theta-pareto -->", (out / "report.md").read_text())



class TestBenchThetaEdges(CliTestCase):
    """Bad input and the GPU path, without TestBenchTheta's sweep (setUpClass): the sanitizer
    pass and the cuda preset run only these."""

    def test_bad_input_names_the_option(self):
        cases = [(["--thetas", "0"], "--thetas: must be a finite number > 0 (0 is the direct sum) (got 0)"),
                 (["--thetas", "0.5,-0.1"], "--thetas: must be a finite number > 0 (0 is the direct sum) (got -0.1)"),
                 (["--thetas", "abc"], "--thetas: not a number (got abc)"),
                 (["--thetas", ""], "--thetas: must not be empty"),
                 (["--alphas", "0"], "--alphas: must be a finite number > 0 (got 0)"),
                 (["--alphas", "-1e-3"], "--alphas: must be a finite number > 0 (got -1e-3)"),
                 (["--alphas", ""], "--alphas: must not be empty"),
                 (["--criteria", "barnes"], "--criteria: unknown opening criterion (available: geometric, bmax, relative) (got barnes)"),
                 (["--criteria", ""], "--criteria: must not be empty"),
                 (["--orders", "octupole"], "--orders: unknown order (available: monopole, quadrupole) (got octupole)"),
                 (["--sample", "-5"], "--sample"),
                 (["--device", "all"], "--device: bench theta without -o runs on one device (cpu or gpu) (got all)"),
                 (["--theta", "0.5"], "--theta: bench theta sweeps --thetas"),
                 (["--quadrupole"], "--quadrupole"),
                 (["--plot", self.dir / "p.jpg"], "must name a .png file")]
        for extra, message in cases:
            self.check_fails(["bench", "theta", "-n", 500, "--seconds", 0.001, *extra], message)
        self.check_fails(["bench", "tree", "--json", self.dir / "t.json"], "only bench theta")
        self.check_fails(["bench", "theta", "--json", self.dir / "t.json", "-o", self.dir / "r"],
                         "only bench theta without -o")
        self.check_fails(["bench", "theta", "--plot", self.dir / "p.png", "-o", self.dir / "r"],
                         "--plot")
        self.assertFalse((self.dir / "t.json").exists())

    def test_gpu(self):
        args = ["bench", "theta", "--device", "gpu", "-n", 20000, "--sample", 200, "--thetas", 0.5,
                "--alphas", 0.002, "--seconds", 0.01]
        if "GPU 0:" not in nbody("--version").stdout:
            self.check_fails(args, "--device: ", "(got gpu)")
            return
        doc = json.loads(nbody(*args, "--json").stdout)
        self.assertEqual(doc["device"], "gpu")
        self.assertEqual(doc["softening"], 0.05)  # the GPU's default
        self.assertEqual(len(doc["points"]), 6)
        self.assertEqual([r["ms"] for r in doc["references"]], [9.97, 46.0])
        self.assertTrue(all("Burtscher" in r["source"] for r in doc["references"]))


if __name__ == "__main__":
    unittest.main()
