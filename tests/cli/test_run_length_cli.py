"""No run without an end (issue #32): `nbody run` refuses, before it starts, a step that does
not advance the time (t + dt == t in double) or a run of more than 2^53 steps, with the
smallest workable step in the message: --steps, --t-end, --integrator ias15, --timestep
adaptive, a snapshot far in time and --restart. Every command has a timeout, so a
regression (a run that loops forever) fails instead of hanging.

Run by ctest (which sets NBODY_EXE); standard library only.
"""
import json
import subprocess
import unittest

from test_cli import EXE, CliTestCase

TIMEOUT = 60  # each command takes well under a second; a hang is a failure


def run(*args):
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=TIMEOUT)


class RunLengthCase(CliTestCase):
    def refused(self, args, message):
        """The command fails with exit 1 and exactly this message."""
        proc = run(*args)
        self.assertEqual(proc.returncode, 1, f"{args}: {proc.stdout}{proc.stderr}")
        self.assertIn(f"nbody: error: {message}\n", proc.stderr, args)
        self.assertNotIn("internal error", proc.stderr)
        return proc


class TestRunLength(RunLengthCase):
    MODEL = ["run", "--model", "plummer", "-n", 10, "-q"]

    def test_refuses_t_end_where_the_step_does_not_advance_the_time(self):
        # Doubles near 1e17 are 16 apart: steps of 0.5 would never get there.
        message = ("--dt: at t = 1e+17 a step of 0.5 does not advance the time; the smallest step "
                   "that does is 16 (got 0.5)")
        for extra in ([], ["--integrator", "ias15"], ["--timestep", "adaptive"],
                      ["--integrator", "euler"]):
            with self.subTest(extra=extra):
                self.refused([*self.MODEL, "--t-end", "1e17", "--dt", 0.5, *extra], message)

    def test_refuses_a_tiny_dt_that_would_never_reach_t_end(self):
        # It announced "0 steps" (the count overflowed) and counted past it.
        self.refused([*self.MODEL, "--t-end", 1, "--dt", "1e-300"],
                     "--dt: at t = 1 a step of 1e-300 does not advance the time; the smallest step "
                     "that does is 2.220446049250313e-16 (got 1e-300)")

    def test_refuses_wrong_step_counts(self):
        self.refused([*self.MODEL, "--steps", 2**53 + 1],
                     "--steps: more than a run may take (2^53 = 9007199254740992) "
                     "(got 9007199254740993)")
        self.refused([*self.MODEL, "--steps", 1000, "--dt", "1e306"],
                     "--steps: 1000 steps of 1e+306 from t = 0 go past the largest time a double "
                     "holds (got 1000)")
        # 2^53 steps of 0.5 end at 2^52, where doubles are 1 apart: checked at the end.
        self.refused([*self.MODEL, "--steps", 2**53, "--dt", 0.5],
                     "--dt: at t = 4503599627370496 a step of 0.5 does not advance the time; the "
                     "smallest step that does is 1 (got 0.5)")

    def test_refuses_a_smallest_block_step_below_the_time_resolution(self):
        proc = self.refused([*self.MODEL, "--t-end", "1e6", "--dt", 0.01, "--timestep", "adaptive",
                             "--dt-min", "1e-20"],
                            "--dt-min: at t = 1000000 the smallest block step, --dt / 2^30 = "
                            "9.313225746154785e-12, does not advance the time; a --dt-min of "
                            "1.1641532182693481e-10 or more does (got 1e-20)")
        self.assertEqual(proc.stdout, "")

    def test_a_step_that_advances_the_time_runs_to_the_end(self):
        proc = run(*self.MODEL, "--t-end", 1, "--dt", 0.25, "--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout)
        self.assertEqual(result["steps"], 4)
        self.assertEqual(result["t"], 1)


class TestFarInTime(RunLengthCase):
    """A snapshot and a checkpoint at t = 1e16, where doubles are 2 apart."""

    def setUp(self):
        super().setUp()
        start = self.dir / "start.txt"
        proc = run("gen", "plummer", "-n", 10, "-o", start)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.snapshot = self.dir / "far.hdf5"
        # One step of 1e16 from t = 0: a snapshot (and a checkpoint) whose Time is 1e16.
        proc = run("run", "-i", start, "--steps", 1, "--dt", "1e16", "-o", self.snapshot,
                   "--checkpoint-every", 1, "--output-dir", self.dir / "ck", "-q")
        if "built without HDF5" in proc.stderr:
            self.skipTest("nbody was built without HDF5 (install libhdf5-dev and rebuild)")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_refuses_a_snapshot_far_in_time_with_a_step_too_small(self):
        message = ("--dt: at t = 1.00000000001e+16 a step of 0.5 does not advance the time; the "
                   "smallest step that does is 2 (got 0.5)")
        for extra in ([], ["--integrator", "ias15"], ["--timestep", "adaptive"]):
            with self.subTest(extra=extra):
                self.refused(["run", "-i", self.snapshot, "--t-end", "10000000000100000", "--dt", 0.5,
                              "-q", *extra], message)
        self.refused(["run", "-i", self.snapshot, "--steps", 10, "--dt", 0.5, "-q"],
                     "--dt: at t = 1.0000000000000004e+16 a step of 0.5 does not advance the "
                     "time; the smallest step that does is 2 (got 0.5)")

    def test_the_smallest_step_named_runs_to_the_end_time(self):
        proc = run("run", "-i", self.snapshot, "--t-end", "10000000000100000", "--dt", 2, "--json",
                   "-q")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        result = json.loads(proc.stdout)
        self.assertEqual(result["steps"], 50000)
        self.assertEqual(result["t"], 10000000000100000.0)

    def test_refuses_a_restart_far_in_time_with_a_step_too_small(self):
        checkpoint = self.dir / "ck" / "checkpoint_00000001.h5"
        self.assertTrue(checkpoint.exists())
        self.refused(["run", "--restart", checkpoint, "--t-end", "10000000000100000", "--dt", 0.5,
                      "--override", "--output-dir", self.dir / "ck", "-q"],
                     "--dt: at t = 1.00000000001e+16 a step of 0.5 does not advance the time; the "
                     "smallest step that does is 2 (got 0.5)")


if __name__ == "__main__":
    unittest.main()
