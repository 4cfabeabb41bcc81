"""Hierarchical time steps on the command line (issue #19): --timestep adaptive, --eta,
--dt-min, the JSON `timestep` object, --timings' bin table, and the messages for bad
options.

Run by ctest (which sets NBODY_EXE).
"""
import json
import math
import unittest

from test_cli import CliTestCase, nbody

KEPLER = ["--model", "kepler", "--e", 0.9, "--dt", 2 * math.pi / 64, "-q"]


def run_json(*args):
    return json.loads(nbody("run", *args, "--json").stdout)


class TestAdaptiveRuns(CliTestCase):
    def test_json_timestep_object(self):
        fixed = run_json(*KEPLER, "--steps", 64)
        self.assertEqual(fixed["timestep"]["mode"], "fixed")
        self.assertEqual(fixed["timestep"]["substeps"], 64)
        self.assertEqual(fixed["timestep"]["force_evaluations_per_body"], 64.0)
        self.assertEqual(fixed["timestep"]["bins"], [])
        self.assertIsNone(fixed["timestep"]["eta"])

        adaptive = run_json(*KEPLER, "--steps", 64, "--timestep", "adaptive", "--eta", 1e-4)
        t = adaptive["timestep"]
        self.assertEqual(t["mode"], "adaptive")
        self.assertEqual(t["eta"], 1e-4)
        self.assertEqual(sum(t["bins"]), 2)
        self.assertGreater(len(t["bins"]), 4)  # back at pericentre: a deep bin
        self.assertGreater(t["substeps"], 64)
        self.assertGreater(t["force_evaluations_per_body"], 64)
        self.assertEqual(t["floored"], 0)
        # one orbit at the pericentre's step would take 64 * 2^(deepest bin) evaluations
        self.assertLess(t["force_evaluations_per_body"], 64 * 2 ** (len(t["bins"]) - 1) / 4)
        self.assertLess(abs(adaptive["energy_drift"]), 1e-3)
        self.assertEqual(adaptive["steps"], 64)

    def test_dt_min_floors_and_warns(self):
        dt = 2 * math.pi / 64
        proc = nbody("run", *KEPLER[:-1], "--steps", 4, "--timestep", "adaptive", "--eta", 1e-4,
                     "--dt-min", dt / 8)
        self.assertIn("--dt-min", proc.stdout + proc.stderr)
        j = run_json(*KEPLER, "--steps", 4, "--timestep", "adaptive", "--eta", 1e-4, "--dt-min", dt / 8)
        self.assertLessEqual(len(j["timestep"]["bins"]), 4)
        self.assertGreater(j["timestep"]["floored"], 0)

    def test_timings_show_the_bins(self):
        proc = nbody("run", "--model", "plummer", "-n", 500, "--softening", 0.01, "--dt", 0.05,
                     "--steps", 3, "--timestep", "adaptive", "--timings")
        self.assertIn("substeps", proc.stdout)
        self.assertIn("force evaluations per body", proc.stdout)
        self.assertRegex(proc.stdout, r"\nbin +step +bodies\n0 +0\.05 +\d+")

    def test_tree_with_t_end_lands_on_it(self):
        j = run_json("--model", "plummer", "-n", 1000, "--softening", 0.01, "--gravity", "tree",
                     "--dt", 0.03, "--t-end", 0.1, "--timestep", "adaptive")
        self.assertAlmostEqual(j["t"], 0.1, delta=1e-12)
        self.assertEqual(sum(j["timestep"]["bins"]), 1000)
        self.assertLess(abs(j["energy_drift"]), 1e-3)

    def test_dynamical_criterion_is_reported_and_follows_the_orbit(self):
        # Kepler e = 0.9: |a|^2 / |phi| is G M / r^3, so pericentre takes a deeper bin.
        j = run_json(*KEPLER, "--steps", 64, "--timestep", "adaptive", "--timestep-criterion",
                     "dynamical", "--eta", 0.01)
        t = j["timestep"]
        self.assertEqual(t["criterion"], "dynamical")
        self.assertGreaterEqual(len(t["bins"]), 4)
        self.assertLess(abs(j["energy_drift"]), 1e-3)
        fixed = run_json(*KEPLER, "--steps", 4)
        self.assertIsNone(fixed["timestep"]["criterion"])

    def test_dynamical_criterion_restarts_byte_for_byte_and_is_kept(self):
        run = ["--model", "plummer", "-n", 500, "--softening", 0.01, "--gravity", "tree",
               "--timestep", "adaptive", "--timestep-criterion", "dynamical", "--dt", 0.05, "-q"]
        whole = run_json(*run, "--steps", 4)
        nbody("run", *run, "--steps", 2, "--checkpoint-every", 2, "--output-dir", self.dir / "a")
        checkpoint = self.dir / "a" / "checkpoint_00000002.h5"
        resumed = run_json("--restart", checkpoint, "--steps", 4, "--output-dir", self.dir / "b",
                           "-q")
        self.assertEqual(resumed["timestep"]["criterion"], "dynamical")
        self.assertEqual(resumed["energy_end"], whole["energy_end"])
        self.check_fails(["run", "--restart", checkpoint, "--timestep-criterion", "acceleration",
                          "--steps", 4, "--output-dir", self.dir / "c"],
                         "--timestep-criterion: differs from the checkpoint's dynamical")


    def test_jerk_criterion_is_reported_restarts_and_is_cpu_direct_only(self):
        # Kepler e = 0.9: |a| / |da/dt| shrinks at pericentre, which takes a deeper bin.
        j = run_json(*KEPLER, "--steps", 64, "--timestep", "adaptive", "--timestep-criterion",
                     "jerk", "--eta", 0.01)
        self.assertEqual(j["timestep"]["criterion"], "jerk")
        self.assertGreaterEqual(len(j["timestep"]["bins"]), 4)
        self.assertLess(abs(j["energy_drift"]), 1e-3)
        run = ["--model", "plummer", "-n", 300, "--softening", 0.01, "--gravity", "direct",
               "--timestep", "adaptive", "--timestep-criterion", "jerk", "--dt", 0.05, "-q"]
        whole = run_json(*run, "--steps", 4)
        nbody("run", *run, "--steps", 2, "--checkpoint-every", 2, "--output-dir", self.dir / "a")
        resumed = run_json("--restart", self.dir / "a" / "checkpoint_00000002.h5", "--steps", 4,
                           "--output-dir", self.dir / "b", "-q")
        self.assertEqual(resumed["timestep"]["criterion"], "jerk")
        self.assertEqual(resumed["energy_end"], whole["energy_end"])
        base = ["run", "--model", "plummer", "-n", 100, "--steps", 1, "--timestep", "adaptive",
                "--timestep-criterion", "jerk"]
        self.check_fails([*base, "--gravity", "tree"],
                         "--timestep-criterion: needs --gravity direct (the jerk is summed over "
                         "every pair) (got jerk)")
        self.check_fails([*base, "--gravity", "direct", "--device", "gpu"],
                         "--timestep-criterion: runs on the CPU (--device cpu) for now (got jerk)")


class TestAdaptiveOptionErrors(CliTestCase):
    def test_bad_values(self):
        base = ["run", "--model", "kepler", "--steps", 1, "--timestep", "adaptive"]
        self.check_fails([*base, "--eta", 0], "--eta")
        self.check_fails([*base, "--eta", "nan"], "--eta")
        self.check_fails([*base, "--dt-min", -1], "--dt-min")
        self.check_fails(["run", "--model", "kepler", "--steps", 1, "--timestep", "sometimes"],
                         "--timestep", "fixed", "adaptive")
        self.check_fails([*base, "--integrator", "euler"], "--timestep: needs --integrator leapfrog", "(got adaptive)")
        self.check_fails([*base, "--damping", 0.99], "--damping")
        self.check_fails([*base, "--timestep-criterion", "density"], "--timestep-criterion",
                         "acceleration", "dynamical", "(got density)")


if __name__ == "__main__":
    unittest.main()
