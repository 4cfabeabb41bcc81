"""Energies at the solver's cost (issues #18, #33): --energy and what auto picks, the float64
tree's energy against the exact one, the warning past --energy-tolerance, the first
snapshot, --gravity none, `nbody info` above 65,536 bodies, and -o into a folder that does
not exist yet.

Run by ctest (which sets NBODY_EXE); h5py where installed.
"""
import json
import math
import os
import unittest

from test_cli import CliTestCase, nbody

try:
    import h5py
    import numpy as np
except ImportError:  # the snapshot checks need both
    h5py = None
TOOLS_REQUIRED = os.environ.get("NBODY_PYTHON_TOOLS_REQUIRED") == "1"  # the venv has them

TREE = ["--model", "plummer", "-n", 3000, "--seed", 4, "--softening", 0.05, "--gravity", "tree",
        "--dt", 0.002, "-q", "--json"]


def run_json(*args):
    return json.loads(nbody("run", *args).stdout)


class TestEnergyMethods(CliTestCase):
    def test_auto_picks_by_cost_and_says_why(self):
        # the direct sum: its own float64 potentials, which are the exact W
        direct = run_json("--model", "plummer", "-n", 200, "--steps", 2, "-q", "--json")
        exact = run_json("--model", "plummer", "-n", 200, "--steps", 2, "-q", "--json",
                         "--energy", "exact")
        self.assertEqual(direct["energy_method"], "solver")
        self.assertLess(direct["energy_drift_error"], 1e-12)
        for key in ("energy_start", "energy_end"):
            self.assertAlmostEqual(direct[key], exact[key], delta=1e-13 * abs(exact[key]))
        # a tree run of 2 steps: nothing accurate is cheap, and the output says so
        short = run_json(*TREE, "--steps", 2)
        self.assertEqual(short["energy_method"], "solver")
        self.assertIn("--energy", short["energy_method_reason"])
        self.assertGreaterEqual(short["energy_drift_error"], 1e-5)
        # a longer one of a small system: the exact sum within the budget
        long = run_json(*TREE[:3], 1000, *TREE[4:], "--steps", 60)
        self.assertEqual(long["energy_method"], "exact")
        self.assertLessEqual(long["energy_cost_estimate"], 0.1)
        header = nbody("run", *TREE[:-2], "--steps", 2).stdout
        self.assertIn("energy: solver (", header)

    def test_tree_energy_is_the_exact_one_to_a_millionth(self):
        args = ["--model", "plummer", "-n", 5000, "--seed", 4, "--softening", 0.01, "--gravity",
                "tree", "--steps", 10, "-q", "--json"]
        tree = run_json(*args, "--energy", "tree")
        exact = run_json(*args, "--energy", "exact")
        self.assertEqual(tree["energy_method"], "tree")
        scale = abs(exact["energy_start"])
        for key in ("energy_start", "energy_end"):
            self.assertAlmostEqual(tree[key], exact[key], delta=2e-6 * scale)
        # its error on the drift is well below a drift worth reading (1e-5 and up)
        change = (tree["energy_end"] - tree["energy_start"]) - (
            exact["energy_end"] - exact["energy_start"])
        self.assertLess(abs(change), 2e-6 * scale)
        self.assertEqual(tree["momentum"], exact["momentum"])  # the same trajectory

    def test_solver_energy_tracks_the_exact_one(self):
        exact = run_json(*TREE, "--steps", 20, "--energy", "exact")
        solver = run_json(*TREE, "--steps", 20, "--energy", "solver")
        self.assertEqual(solver["energy_method"], "solver")
        for key in ("energy_start", "energy_end"):
            # the tree's potential (theta 0.5, float) against the float64 pair sum
            self.assertAlmostEqual(solver[key], exact[key], delta=1e-3 * abs(exact[key]))
        # the same trajectory: asking for energies never changes it
        self.assertEqual(solver["momentum"], exact["momentum"])

    def test_every_and_stats_use_the_run_method(self):
        out = self.dir / "out"
        proc = nbody("run", *TREE[:-2], "--steps", 10, "--every", 5, "--stats-every", 5,
                     "--energy", "solver", "--output-dir", out)
        self.assertIn("|dE/E|", proc.stdout)
        rows = (out / "energy.csv").read_text().splitlines()
        self.assertEqual(len(rows), 1 + 3)  # header, steps 0, 5, 10
        for row in rows[1:]:
            total = float(row.split(",")[4])
            self.assertLess(total, 0)

    def test_off_reports_no_energy(self):
        j = run_json(*TREE, "--steps", 3, "--energy", "off")
        self.assertEqual(j["energy_method"], "off")
        self.assertIsNone(j["energy_start"])
        self.assertIsNone(j["energy_drift"])
        text = nbody("run", *TREE[:-2], "--steps", 3, "--energy", "off").stdout
        self.assertNotIn("|dE/E|", text)

    def test_bad_method_is_named(self):
        self.check_fails(["run", *TREE, "--steps", 1, "--energy", "approximate"], "--energy",
                         "approximate")

    def test_auto_costs_at_most_a_tenth_of_a_tree_run_at_60000_bodies(self):
        # issue #33: the exact sum took 94% of this run; auto now picks what fits
        j = run_json("--model", "plummer", "-n", 60000, "--gravity", "tree", "--steps", 3,
                     "--softening", 0.01, "-q", "--json")
        self.assertEqual(j["energy_method"], "solver")
        self.assertLessEqual(j["energy_cost_estimate"], 0.1)
        timings = j["timings"]
        self.assertLess(timings["diagnostics"], 0.1 * timings["total"])


BAD = ["--model", "plummer", "-n", 200, "--seed", 1, "--dt", 0.05, "--t-end", 5]


class TestEnergyWarning(CliTestCase):
    def test_a_run_past_the_tolerance_says_what_would_help(self):
        proc = nbody("run", *BAD, "-q", "--json")  # exits 0: a warning, not an error
        j = json.loads(proc.stdout)
        self.assertGreater(j["energy_drift"], 1e-2)
        self.assertEqual(len(j["warnings"]), 1)
        warning = j["warnings"][0]
        for hint in ("--dt 0.00", "--softening 0.", "--timestep adaptive"):
            self.assertIn(hint, warning)
        self.assertNotIn("ias15", warning)  # 200 bodies: not a few-body problem
        self.assertIn("nbody: warning: |dE/E| = ", proc.stderr)
        # the suggested softening gives a good run
        eps = warning.split("--softening ")[1].split(",")[0]
        good = run_json(*BAD, "--softening", eps, "-q", "--json")
        self.assertLess(good["energy_drift"], 1e-2)
        self.assertEqual(good["warnings"], [])

    def test_few_bodies_are_pointed_to_ias15_and_zero_never_warns(self):
        few = ["--model", "plummer", "-n", 50, "--seed", 1, "--dt", 0.05, "--t-end", 5, "-q"]
        self.assertIn("--integrator ias15", nbody("run", *few).stderr)
        self.assertNotIn("--softening", nbody("run", *few).stderr)
        quiet = nbody("run", *few, "--energy-tolerance", 0, "--json")
        self.assertEqual(json.loads(quiet.stdout)["warnings"], [])
        self.assertNotIn("warning", quiet.stderr)
        self.check_fails(["run", *few, "--energy-tolerance", -1], "--energy-tolerance", "-1")


class TestNoGravity(CliTestCase):
    def test_gravity_none_and_g_zero_skip_the_forces(self):
        for extra in (["--gravity", "none"], ["--G", 0]):
            j = run_json("--model", "uniform-cube", "-n", 2000, "--velocity", 1, "--steps", 5,
                         "--radius", 0.001, "--collisions", "bounce", "-q", "--json", *extra)
            self.assertTrue(j["solver"].startswith("none"), j["solver"])
            # kinetic energy only, kept by elastic bounces
            self.assertAlmostEqual(j["energy_end"], j["energy_start"], delta=1e-12 * j["energy_start"])
            self.assertLess(j["timings"]["gravity"], 0.5 * j["timings"]["total"])


class TestFirstSnapshotAndFiles(CliTestCase):
    @unittest.skipIf(h5py is None and not TOOLS_REQUIRED, "h5py and numpy are not installed")
    def test_first_snapshot_holds_accelerations_and_potentials(self):
        out = self.dir / "out"
        nbody("run", "--model", "plummer", "-n", 300, "--seed", 2, "--softening", 0.05, "--steps", 2,
              "--snapshot-every", 2, "--snapshot-fields", "acceleration,potential", "--output-dir",
              out, "-q")
        with h5py.File(out / "snapshot_0000.hdf5", "r") as f:
            x = f["PartType1/Coordinates"][:]
            m = np.full(len(x), f["Header"].attrs["MassTable"][1])  # equal masses
            acc = f["PartType1/Accelerations"][:]
            phi = f["PartType1/Potential"][:]
        d = x[None, :, :] - x[:, None, :]
        r = np.sqrt((d ** 2).sum(axis=2) + 0.05 ** 2)
        np.fill_diagonal(r, np.inf)
        exact_phi = -(m[None, :] / r).sum(axis=1)
        exact_acc = (m[None, :, None] * d / r[:, :, None] ** 3).sum(axis=1)
        np.testing.assert_allclose(phi, exact_phi, rtol=1e-10)
        np.testing.assert_allclose(acc, exact_acc, rtol=1e-8, atol=1e-10 * np.abs(exact_acc).max())

    def test_output_into_a_missing_folder_creates_it(self):
        target = self.dir / "new" / "deeper" / "out.txt"
        nbody("run", "--model", "plummer", "-n", 50, "--steps", 1, "-q", "-o", target)
        self.assertTrue(target.exists())
        self.assertFalse((target.parent / "used_parameters.toml").exists())  # only with --output-dir


class TestInfoAtScale(CliTestCase):
    def test_info_uses_the_tree_above_65536_bodies_unless_exact(self):
        path = self.dir / "big.txt"
        nbody("gen", "plummer", "-n", 70000, "--seed", 9, "-o", path)
        tree = json.loads(nbody("info", path, "--softening", 0.01, "--json").stdout)
        self.assertEqual(tree["energy_method"], "tree")
        self.assertIn("tree", nbody("info", path, "--softening", 0.01).stdout)
        exact = json.loads(nbody("info", path, "--softening", 0.01, "--exact", "--json").stdout)
        self.assertEqual(exact["energy_method"], "exact")
        # the run's `--energy tree` method: ~1e-6 of W (docs/energy.md)
        self.assertTrue(math.isclose(tree["potential"], exact["potential"], rel_tol=1e-5))
        self.assertEqual(tree["kinetic"], exact["kinetic"])


if __name__ == "__main__":
    unittest.main()
