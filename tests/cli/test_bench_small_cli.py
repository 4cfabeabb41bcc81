"""`nbody bench small` (issue #38): microseconds per step of few-body runs for each
integrator, the threads the run chose, and REBOUND's figure beside them when the Python in
NBODY_PYTHON has REBOUND (here: the Python running this test). Run by ctest (NBODY_EXE).
"""
import importlib.util
import json
import os
import subprocess
import sys
import unittest

from test_cli import EXE, CliTestCase

HAVE_REBOUND = importlib.util.find_spec("rebound") is not None


def bench_small(*args, python=sys.executable):
    env = {**os.environ, "NBODY_PYTHON": python}
    proc = subprocess.run([EXE, "bench", "small", *map(str, args)], capture_output=True,
                          text=True, timeout=300, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"nbody bench small failed ({proc.returncode}):\n{proc.stderr}")
    return proc


class TestBenchSmall(CliTestCase):
    def test_quick_table_rows_and_rebound_column(self):
        proc = bench_small("--quick", "--json")
        doc = json.loads(proc.stdout)
        self.assertEqual(doc["suite"], "small")
        self.assertEqual(doc["columns"], ["integrator", "n", "threads", "steps", "us_per_step",
                                          "rebound_us_per_step", "vs_rebound"])
        rows = [dict(zip(doc["columns"], r)) for r in doc["rows"]]
        self.assertEqual([(r["integrator"], r["n"]) for r in rows],
                         [(i, n) for i in ("leapfrog", "leapfrog-adaptive", "ias15") for n in (3, 100)])
        for r in rows:
            self.assertEqual(r["threads"], 1)  # too few bodies to share (default_threads)
            self.assertGreater(r["us_per_step"], 0)
            self.assertGreater(r["steps"], 0)
        by = {(r["integrator"], r["n"]): r for r in rows}
        # 100 bodies cost more a step than 3.
        for integrator in ("leapfrog", "leapfrog-adaptive", "ias15"):
            self.assertGreater(by[(integrator, 100)]["us_per_step"], by[(integrator, 3)]["us_per_step"])
        self.assertIn("microseconds", proc.stderr + doc["title"].lower())
        if not HAVE_REBOUND:
            self.assertTrue(any("no REBOUND" in n for n in doc["notes"]), doc["notes"])
            self.skipTest("rebound is not installed: the REBOUND column is null, as the note says")
        for r in rows:
            if r["integrator"] == "leapfrog-adaptive":
                self.assertIsNone(r["rebound_us_per_step"])
            else:
                self.assertGreater(r["rebound_us_per_step"], 0)
                self.assertAlmostEqual(r["vs_rebound"], r["us_per_step"] / r["rebound_us_per_step"])
        self.assertIsInstance(doc["meta"]["rebound"], str)

    def test_a_broken_python_is_named_not_run_through_the_shell(self):
        # NBODY_PYTHON is one word for the shell (quoted): a missing program, or text that
        # would be shell syntax, leaves the REBOUND column empty with a note, and runs nothing.
        marker = self.dir / "ran"
        python = f"/nonexistent/python'; touch {marker}; echo '"
        doc = json.loads(bench_small("--quick", "--json", python=python).stdout)
        self.assertFalse(marker.exists())
        self.assertTrue(all(r[5] is None for r in doc["rows"]))
        self.assertTrue(any("no REBOUND for /nonexistent/python" in n for n in doc["notes"]),
                        doc["notes"])


if __name__ == "__main__":
    unittest.main()
