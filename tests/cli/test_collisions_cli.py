"""End-to-end tests of `nbody run --collisions`: the JSON summary (contacts, merges, overlap,
energy bookkeeping), conservation laws read from the output files, radii from files and
--radius, and clear errors for bad values.

Run by ctest (which sets NBODY_EXE); standard library only.
"""
import json
import math
import unittest

from test_cli import CliTestCase, nbody

COLLISION_KEYS = {"model", "restitution", "iterations", "contacts", "merges", "n_end", "max_overlap",
                  "energy_lost", "energy_balance"}


def run_json(*args):
    return json.loads(nbody("run", *args, "--json").stdout)


def info(path):
    return json.loads(nbody("info", path, "--json").stdout)


class TestCollisionRuns(CliTestCase):
    def cloud(self, name="cloud.txt", n=1500, radius=0.04, velocity=0.5, dim=3):
        """A uniform cube of bodies with radii (the 8th column of the file)."""
        path = self.dir / name
        nbody("gen", "uniform-cube", "-n", n, "--seed", 5, "--radius", radius, "--velocity", velocity,
              "--dim", dim, "-o", path)
        first = path.read_text().splitlines()
        body = next(line for line in first if line and not line.startswith("#"))
        self.assertEqual(len(body.split()), 8)
        return path

    def test_bounce_json_momentum_and_energy_bookkeeping(self):
        start = self.cloud()
        end = self.dir / "end.txt"
        result = run_json("-i", start, "--steps", 40, "--dt", 0.002, "--softening", 0.02,
                          "--collisions", "bounce", "--restitution", 0.5, "--collision-iterations", 2, "-o", end)
        c = result["collisions"]
        self.assertTrue(COLLISION_KEYS <= c.keys())
        self.assertEqual(c["model"], "bounce")
        self.assertGreater(c["contacts"], 100)
        self.assertEqual(c["merges"], 0)
        self.assertEqual(c["n_end"], 1500)
        self.assertGreater(c["energy_lost"], 0)  # e = 0.5 turns kinetic energy into heat
        self.assertIn("collisions", result["timings"])
        self.assertGreater(result["timings"]["collisions"], 0)
        # E + lost is conserved much better than E alone (the pair's own potential is
        # booked; the random overlapping start's pushes through third bodies are not).
        e0, e1 = result["energy_start"], result["energy_end"]
        self.assertLess(abs(e1 + c["energy_lost"] - e0), 0.2 * abs(e1 - e0))
        before, after = info(start), info(end)
        p_scale = before["total_mass"] * 0.5
        for a, b in zip(before["momentum"], after["momentum"]):
            self.assertAlmostEqual(a, b, delta=1e-12 * p_scale)
        self.assertEqual(before["total_mass"], after["total_mass"])

    def test_tree_search_runs_like_the_grid(self):
        """--collision-search tree (seed 001's quadtree/octree): the same first-stage contacts
        as the grid (the same pairs; later stages may differ in the last bits, each search
        resolving its pairs in its own order)."""
        start = self.cloud(n=600, radius=0.06)
        common = ["-i", start, "--steps", 1, "--dt", 1e-4, "--collisions", "bounce"]
        grid = run_json(*common)["collisions"]
        tree = run_json(*common, "--collision-search", "tree")["collisions"]
        self.assertGreater(grid["contacts"], 20)
        self.assertEqual(tree["contacts"], grid["contacts"])
        self.assertEqual(tree["n_end"], 600)
        merged = run_json(*common[:-1], "merge", "--collision-search", "tree")["collisions"]
        self.assertEqual(merged["model"], "merge")
        self.assertGreater(merged["merges"], 5)

    def test_energy_closes_to_rounding_without_gravity(self):
        # With negligible G every energy change is a collision's, and all of it is booked.
        start = self.cloud(velocity=1.0)
        for model in (["bounce", "--restitution", 0.3], ["bounce", "--restitution", 1], ["merge"]):
            result = run_json("-i", start, "--steps", 30, "--dt", 0.005, "--G", 1e-12, "--collisions", *model)
            c = result["collisions"]
            self.assertGreater(c["contacts"], 100, model)
            self.assertLess(c["energy_balance"], 1e-12, model)
            e0, e1 = result["energy_start"], result["energy_end"]
            self.assertAlmostEqual(e0 - e1, c["energy_lost"], delta=1e-12 * e0)

    def test_merge_conserves_mass_and_momentum_and_counts_merges(self):
        for dim in (3, 2):
            start = self.cloud(f"cloud{dim}.txt", radius=0.05, dim=dim)
            end = self.dir / f"end{dim}.txt"
            # Two passes a stage: a merge can make the merged body overlap a body whose pair the
            # pass took earlier (the pairs go in the order of their ids, within each cluster),
            # which the second pass merges. With one pass, the last stage of this cloud left
            # one such overlap (0.21 of the smaller radius) in 3D, none on other seeds; the
            # order of the search's grid, used before, left one on none of four seeds but as
            # many in earlier stages (a second pass merged 1 more body on 3 of 6 seeds).
            result = run_json("-i", start, "--steps", 20, "--dt", 0.002, "--softening", 0.02, "--dim", dim,
                              "--collisions", "merge", "--collision-iterations", 2, "-o", end)
            c = result["collisions"]
            self.assertGreater(c["merges"], 50)
            self.assertEqual(c["n_end"], 1500 - c["merges"])
            before, after = info(start), info(end)
            self.assertEqual(after["n"], c["n_end"])
            self.assertAlmostEqual(before["total_mass"], after["total_mass"], delta=1e-13)
            for a, b in zip(before["momentum"], after["momentum"]):
                self.assertAlmostEqual(a, b, delta=1e-12)
            self.assertEqual(c["max_overlap"], 0.0)  # every overlapping pair merged

    def test_head_on_pair_from_a_file_exchanges_velocities(self):
        # Radii from the 8th column; G negligible: an elastic head-on collision of equal masses.
        start = self.write("pair.txt", "-0.155 0 0  1 0 0  1 0.1\n0.155 0 0  -1 0 0  1 0.1\n")
        end = self.dir / "pair_end.txt"
        result = run_json("-i", start, "--steps", 10, "--dt", 0.01, "--G", 1e-12, "--collisions", "bounce", "-o", end)
        self.assertEqual(result["collisions"]["contacts"], 1)
        rows = [list(map(float, line.split())) for line in end.read_text().splitlines()
                if line and not line.startswith("#")]
        self.assertAlmostEqual(rows[0][3], -1.0, delta=1e-9)
        self.assertAlmostEqual(rows[1][3], 1.0, delta=1e-9)

    def test_radius_option_gives_a_file_radii(self):
        start = self.dir / "plain.txt"
        nbody("gen", "uniform-cube", "-n", 500, "--seed", 6, "-o", start)  # no radii
        result = run_json("-i", start, "--steps", 5, "--radius", 0.05, "--collisions", "merge")
        self.assertGreater(result["collisions"]["merges"], 0)

    def test_no_collisions_object_without_collisions(self):
        result = run_json("--model", "uniform-cube", "-n", 100, "--radius", 0.1, "--steps", 2)
        self.assertNotIn("collisions", result)
        self.assertNotIn("collisions", result["timings"])


class TestCollisionBench(CliTestCase):
    def test_bench_collisions_json(self):
        result = json.loads(nbody("bench", "collisions", "-n", 3000, "--seconds", 0.01, "--json").stdout)
        self.assertEqual(result["suite"], "collisions")
        self.assertEqual([row["n"] for row in result["by_n"]], [1000, 3000])
        self.assertEqual([row["iterations"] for row in result["by_iterations"]], [1, 2, 4, 8])
        for row in result["by_n"] + result["by_iterations"]:
            self.assertGreater(row["seconds_per_step"], 0)
            self.assertGreater(row["candidates_per_step"], 0)

    def test_bench_collisions_bad_values(self):
        proc = nbody("bench", "collisions", "--volume-fraction", 2, check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--volume-fraction", proc.stderr)


class TestCollisionErrors(CliTestCase):
    RUN = ["run", "--model", "uniform-cube", "-n", 50, "--radius", 0.05, "--steps", 2]


    def test_bad_values_name_the_option(self):
        self.check_fails([*self.RUN, "--collisions", "foo"], "--collisions", "foo")
        self.check_fails([*self.RUN, "--collisions", "bounce", "--restitution", 2], "--restitution", "2")
        self.check_fails([*self.RUN, "--collisions", "bounce", "--restitution", -0.5], "--restitution")
        self.check_fails([*self.RUN, "--collisions", "bounce", "--collision-iterations", 0],
                         "--collision-iterations")
        self.check_fails([*self.RUN, "--collisions", "merge", "--restitution", 0.5], "--restitution", "bounce")
        self.check_fails([*self.RUN, "--collision-iterations", 3], "--collision-iterations")
        self.check_fails([*self.RUN, "--collisions", "bounce", "--collision-search", "bogus"],
                         "--collision-search", "bogus")

    def test_bodies_without_radii(self):
        self.check_fails(["run", "--model", "uniform-cube", "-n", 50, "--steps", 2, "--collisions", "bounce"],
                         "--collisions: every body has radius 0", "(got bounce)")

    def test_gpu_runs_or_says_why_not(self):
        run = [*self.RUN, "--collisions", "bounce", "--device", "gpu"]
        if "GPU 0:" in nbody("--version").stdout:
            self.assertEqual(nbody(*run, check=False).returncode, 0)
        else:  # no GPU, or a build without CUDA
            self.check_fails(run, "--device: ", "(got gpu)")


if __name__ == "__main__":
    unittest.main()
