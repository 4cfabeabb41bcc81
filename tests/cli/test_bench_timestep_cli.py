"""`nbody bench timestep` (issue #19): fixed against adaptive steps at a fixed end time.

The quick suite (N = 2000, two dts, two etas) with -o: the CSV columns, the JSON keys, the
report's headline, and adaptive runs that need fewer force evaluations than the smallest fixed
step; without -o, a table (and --json). The PNG check needs matplotlib: skipped without it,
unless NBODY_PYTHON_TOOLS_REQUIRED=1 (the venv has it). Run by ctest (which sets NBODY_EXE).
"""
import csv
import importlib.util
import json
import os
import unittest

from test_cli import CliTestCase, nbody

TOOLS_REQUIRED = os.environ.get("NBODY_PYTHON_TOOLS_REQUIRED") == "1"  # the venv has them
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

COLUMNS = ["mode", "dt", "eta", "label", "steps", "substeps", "force_evaluations_per_body",
           "deepest_bin", "smallest_step", "wall_seconds", "energy_error", "evaluations_vs_fixed",
           "wall_vs_fixed", "criterion", "lagrangian_error"]


class TestBenchTimestep(CliTestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        from pathlib import Path
        cls._out_tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls._out_tmp.name) / "bench"
        cls.proc = nbody("bench", "timestep", "--quick", "-o", cls.out)
        cls.doc = json.loads((cls.out / "timestep.json").read_text())

    @classmethod
    def tearDownClass(cls):
        cls._out_tmp.cleanup()

    def records(self):
        return [dict(zip(self.doc["columns"], row)) for row in self.doc["rows"]]

    def test_csv_columns_and_rows(self):
        with open(self.out / "timestep.csv", newline="") as f:
            rows = list(csv.reader(f))
        self.assertEqual(rows[0], COLUMNS)
        self.assertEqual(len(rows) - 1, 6)  # two dts, two etas for each of two criteria
        self.assertEqual([r[0] for r in rows[1:]], ["fixed"] * 2 + ["adaptive"] * 4)
        self.assertEqual([r[13] for r in rows[1:]], [""] * 2 + ["acceleration"] * 2 + ["dynamical"] * 2)

    def test_json_keys(self):
        doc = self.doc
        self.assertEqual(doc["suite"], "timestep")
        self.assertEqual(doc["columns"], COLUMNS)
        for key in ("cpu", "threads", "git", "date", "device", "quick", "model", "n", "gravity",
                    "theta", "softening", "t_end", "energy_method", "dts", "etas", "criteria",
                    "seed", "command"):
            self.assertIn(key, doc["meta"])
        self.assertEqual(doc["meta"]["n"], 2000)
        self.assertEqual(doc["meta"]["gravity"], "tree")
        self.assertEqual(doc["meta"]["energy_method"], "exact")
        self.assertIn(doc["meta"]["model"], ("hernquist", "plummer"))
        self.assertEqual(doc["plots"][0]["x"], ["wall_seconds", "force_evaluations_per_body"])

    def test_runs_are_sensible(self):
        records = self.records()
        fixed = [r for r in records if r["mode"] == "fixed"]
        adaptive = [r for r in records if r["mode"] == "adaptive"]
        dt_max, dt_min = max(r["dt"] for r in fixed), min(r["dt"] for r in fixed)
        self.assertAlmostEqual(dt_max / dt_min, 8.0)
        for r in fixed:
            self.assertIsNone(r["eta"])
            self.assertEqual(r["deepest_bin"], 0)
            self.assertAlmostEqual(r["force_evaluations_per_body"], r["steps"])
            self.assertEqual(r["smallest_step"], r["dt"])
        smallest = next(r for r in fixed if r["dt"] == dt_min)
        for r in adaptive:
            self.assertEqual(r["dt"], dt_max)
            self.assertGreater(r["eta"], 0)
            self.assertGreaterEqual(r["force_evaluations_per_body"], r["steps"])
            self.assertLess(r["force_evaluations_per_body"], smallest["force_evaluations_per_body"])
            self.assertAlmostEqual(r["smallest_step"], dt_max / 2 ** r["deepest_bin"])
        for r in records:
            self.assertGreater(r["wall_seconds"], 0)
            self.assertGreater(r["energy_error"], 0)
            self.assertLess(r["energy_error"], 0.1)
        # The Lagrangian radii against the smallest fixed step's: 0 there, small elsewhere.
        self.assertEqual(smallest["lagrangian_error"], 0)
        for r in records:
            self.assertGreaterEqual(r["lagrangian_error"], 0)
            self.assertLess(r["lagrangian_error"], 0.5)
        self.assertTrue(any(n.startswith("Lagrangian radii") for n in self.doc["notes"]))
        # Smaller eta: no fewer force evaluations, with either criterion.
        for criterion in ("acceleration", "dynamical"):
            by_eta = sorted((r for r in adaptive if r["criterion"] == criterion),
                            key=lambda r: -r["eta"])
            self.assertEqual(len(by_eta), 2)
            self.assertLessEqual(by_eta[0]["force_evaluations_per_body"],
                                 by_eta[1]["force_evaluations_per_body"])

    def test_report_has_headline_machine_and_command(self):
        report = (self.out / "report.md").read_text()
        self.assertIn("<!-- suite: timestep -->", report)
        self.assertIn("- Headline: ", report)
        self.assertRegex(report, r"Headline: (at equal \|ΔE/E\|, adaptive over fixed steps: force "
                                 r"evaluations per body ×[0-9.e+-]+.*, wall time ×|no adaptive)")
        self.assertIn("- Machine: nbody ", report)
        self.assertIn("- Command: `nbody bench timestep --model ", report)
        self.assertIn("| mode | dt | eta | label |", report)

    def test_png(self):
        if not HAVE_MATPLOTLIB and not TOOLS_REQUIRED:
            self.skipTest("matplotlib is not installed: PNG check skipped")
        for name in ("timestep.png", "timestep_lagrangian.png"):  # energy and structure
            png = (self.out / name).read_bytes()
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n", name)
            self.assertGreater(len(png), 5000, name)
            self.assertIn(f"]({name})", (self.out / "report.md").read_text())

    def test_without_output_prints_a_table_and_json(self):
        proc = nbody("bench", "timestep", "--quick", "-n", 500, "--dts", "0.25,0.125", "--etas",
                     0.05, "--t-end", 0.5, "--gravity", "direct", "--timestep-criteria",
                     "dynamical", "--seed", 3, "--json")
        doc = json.loads(proc.stdout)
        self.assertEqual([r[0] for r in doc["rows"]], ["fixed", "fixed", "adaptive"])
        self.assertEqual(doc["rows"][2][13], "dynamical")
        self.assertEqual(doc["meta"]["seed"], 3)
        self.assertIn("--timestep-criteria dynamical --seed 3", doc["meta"]["command"])
        self.assertEqual(doc["meta"]["gravity"], "direct")
        self.assertIsNone(doc["meta"]["theta"])
        self.assertEqual(doc["meta"]["t_end"], 0.5)
        self.assertIn("mode", proc.stderr)  # the table
        self.assertIn("note: Headline:", proc.stderr)
        self.assertFalse(os.path.exists("nbody-bench/timestep.json"))

    def test_hierarchical_rows(self):
        proc = nbody("bench", "timestep", "--quick", "-n", 300, "--dts", "0.25,0.125", "--etas",
                     0.05, "--t-end", 0.5, "--gravity", "direct", "--timestep-modes",
                     "hierarchical", "--json")
        doc = json.loads(proc.stdout)
        self.assertEqual([r[0] for r in doc["rows"]], ["fixed", "fixed", "hierarchical"])
        self.assertEqual(doc["rows"][2][3], "hold η 0.05")
        self.assertIn("--timestep-modes hierarchical", doc["meta"]["command"])
        self.assertTrue(any("momentum kept to rounding" in n for n in doc["notes"]))


class TestBenchTimestepBadInput(CliTestCase):
    """Without the quick suite the class above runs first: the sanitizer pass runs only these."""

    def test_bad_options(self):
        self.check_fails(["bench", "timestep", "--device", "all"], "--device: bench timestep runs on one device (cpu or gpu) (got all)")
        self.check_fails(["bench", "timestep", "--gravity", "both"], "--gravity: bench timestep takes direct or tree (got both)")
        self.check_fails(["bench", "timestep", "--etas", -1], "--etas")
        self.check_fails(["bench", "timestep", "--model", "nonsense"], "--model")
        self.check_fails(["bench", "timestep", "--timestep-criteria", "density"],
                         "--timestep-criteria")
        self.check_fails(["bench", "timestep", "--seed", -1], "--seed", "(got -1)")
        self.check_fails(["bench", "timestep", "--timestep-modes", "fixed"], "--timestep-modes")
        self.check_fails(["bench", "timestep", "--seed", "1e40"], "--seed", "(got 1e40)")
        self.check_fails(["bench", "timestep", "--gravity", "tree", "--timestep-criteria",
                          "acceleration,jerk"],
                         "--timestep-criteria: jerk needs --gravity direct and --device cpu (the "
                         "jerk is summed over every pair) (got acceleration,jerk)")


if __name__ == "__main__":
    unittest.main()
