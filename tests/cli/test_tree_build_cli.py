"""--tree-build (issue #34): the seed documents' insertion build with locks runs the same
simulation as the default Morton build (the same cells and tree order, hence the same forces:
src/tree/tree_insertion_build.cpp), in 3D and 2D, with fixed and adaptive steps; an unknown
build is refused by name.

Run by ctest (which sets NBODY_EXE).
"""
import json
import unittest

from test_cli import CliTestCase, nbody

RUN = ["--model", "plummer", "-n", 3000, "--seed", 5, "--softening", 0.01, "--gravity", "tree",
       "--steps", 4, "--energy", "exact", "-q", "--json"]


def run_json(*args):
    return json.loads(nbody("run", *args).stdout)


class TestTreeBuild(CliTestCase):
    def test_insertion_runs_the_morton_runs_energies(self):
        for extra in ([], ["--dim", 2, "--threads", 3], ["--timestep", "adaptive", "--eta", 0.05]):
            morton = run_json(*RUN, *extra)
            inserted = run_json(*RUN, *extra, "--tree-build", "insertion")
            self.assertIn("insertion", inserted["solver"], extra)
            self.assertNotIn("insertion", morton["solver"], extra)
            scale = abs(morton["energy_start"])
            for key in ("energy_start", "energy_end"):
                self.assertAlmostEqual(inserted[key], morton[key], delta=1e-12 * scale,
                                       msg=f"{key} {extra}")
            for a, b in zip(inserted["momentum"], morton["momentum"]):
                self.assertAlmostEqual(a, b, delta=1e-12, msg=f"momentum {extra}")

    def test_bad_tree_build_is_refused_by_name(self):
        proc = self.check_fails(["run", "--gravity", "tree", "--tree-build", "bogus", "-n", 10],
                                "--tree-build: unknown tree build (available: morton, insertion)",
                                "(got bogus)")
        self.assertEqual(proc.stdout, "")


if __name__ == "__main__":
    unittest.main()
