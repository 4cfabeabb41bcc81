"""End-to-end tests of `nbody run --config FILE`: a TOML file gives the same run as the same
options on the command line, the command line wins over the file, the used-parameters file
of a run reads back to the same run, and bad files fail with the file, line and key.

Run by ctest (which sets NBODY_EXE); standard library only.
"""
import json
import unittest
from pathlib import Path

from test_cli import CliTestCase, nbody

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "run.toml"
# Keys that measure the machine, not the physics.
VOLATILE = {"steps_per_second", "wall_seconds", "timings", "gravity_stages"}

RUN_TOML = """\
# a Plummer sphere with the tree
model = "plummer"
n = 300
seed = 7
steps = 10
dt = 0.01
gravity = "tree"
theta = 0.6
softening = 0.05
"""
SAME_OPTIONS = ["--model", "plummer", "-n", 300, "--seed", 7, "--steps", 10, "--dt", 0.01, "--gravity", "tree",
                "--theta", 0.6, "--softening", 0.05]


def run_json(*args):
    result = json.loads(nbody("run", *args, "--json", "--quiet").stdout)
    return {k: v for k, v in result.items() if k not in VOLATILE}


class TestConfigFile(CliTestCase):
    def setUp(self):
        super().setUp()
        probe = nbody("run", "--config", self.write("probe.toml", "steps = 0.5\n"), check=False)
        if "built without toml++" in probe.stderr:
            self.skipTest("nbody was built without toml++")

    def test_file_gives_the_same_run_as_the_command_line(self):
        config = self.write("run.toml", RUN_TOML)
        from_file = run_json("--config", config)
        from_command_line = run_json(*SAME_OPTIONS)
        self.assertEqual(from_file, from_command_line)
        self.assertEqual(from_file["n"], 300)
        self.assertEqual(from_file["steps"], 10)
        self.assertIn("tree", from_file["solver"])
        self.assertEqual(from_file["softening"], 0.05)

    def test_command_line_overrides_the_file(self):
        config = self.write("run.toml", RUN_TOML)
        result = run_json("--config", config, "--steps", 4, "--softening", 0.1)
        self.assertEqual(result["steps"], 4)
        self.assertEqual(result["softening"], 0.1)
        self.assertEqual(result["n"], 300)
        # --t-end on the command line excludes the file's steps = 10 instead of clashing with it.
        result = run_json("--config", config, "--t-end", 0.05)
        self.assertEqual(result["steps"], 5)
        self.assertAlmostEqual(result["t"], 0.05, places=12)
        # -i FILE on the command line excludes the file's model = "plummer".
        bodies = self.dir / "bodies.txt"
        nbody("gen", "uniform-sphere", "-n", 50, "--seed", 1, "-o", bodies)
        self.assertEqual(run_json("--config", config, "-i", bodies)["n"], 50)

    def test_used_parameters_read_back_to_the_same_run(self):
        config = self.write("run.toml", RUN_TOML + "collisions = \"none\"\n")
        out = self.dir / "first" / "final.txt"
        out.parent.mkdir()
        first = run_json("--config", config, "--integrator", "euler", "-o", out, "--output-dir", out.parent)
        used = out.parent / "used_parameters.toml"
        text = used.read_text()
        self.assertIn('\nintegrator = "euler"\n', text)
        self.assertIn("\ncount = 300\n", text)
        self.assertIn("\ntheta = 0.6\n", text)
        self.assertIn("\n# t-end: not used (excluded by --steps)\n", text)
        self.assertNotIn("\nconfig", text)
        # Every default is listed (restitution = 1.0 with no collisions among them) and
        # reads back without complaint; the output goes elsewhere this time.
        second_out = self.dir / "second.txt"
        second = run_json("--config", used, "-o", second_out)
        first.pop("output", None)
        second.pop("output", None)
        self.assertEqual(first, second)
        self.assertEqual(out.read_text(), second_out.read_text())

    def test_example_file_runs(self):
        result = run_json("--config", EXAMPLE)
        self.assertIn("tree", result["solver"])
        self.assertLess(result["energy_drift"], 1e-2)

    def test_unknown_key(self):
        config = self.write("run.toml", "model = \"plummer\"\nn = 10\nstpes = 3\n")
        self.check_fails(["run", "--config", config], "run.toml:3:", "unknown key 'stpes'", "did you mean 'steps'")

    def test_wrong_type(self):
        config = self.write("run.toml", "model = \"plummer\"\n\nsteps = 0.5\n")
        self.check_fails(["run", "--config", config], "run.toml:3: steps: expects a non-negative integer (got 0.5)")
        config = self.write("run.toml", "quadrupole = \"yes\"\n")
        self.check_fails(["run", "--config", config], "run.toml:1: quadrupole: expects true or false (got \"yes\")")

    def test_bad_value(self):
        config = self.write("run.toml", "model = \"plummer\"\nsteps = 3\ngravity = \"fast\"\n")
        # The library's message, as on the command line and in Python, with the file, line and key.
        self.check_fails(["run", "--config", config],
                         "run.toml:3: gravity: unknown gravity solver (available: direct, tree, none) (got fast)")
        config = self.write("run.toml", "model = \"nosuchmodel\"\nsteps = 3\n")
        self.check_fails(["run", "--config", config], "run.toml:1: model: ", "nosuchmodel")

    def test_bad_syntax(self):
        config = self.write("run.toml", "model = \"plummer\"\nsteps = = 3\n")
        self.check_fails(["run", "--config", config], "run.toml:2:")

    def test_sections_nesting_and_missing_files(self):
        config = self.write("run.toml", "steps = 3\n[gravity]\ntheta = 0.5\n")
        self.check_fails(["run", "--config", config], "run.toml:2: [gravity]", "top level")
        config = self.write("run.toml", "config = \"other.toml\"\n")
        self.check_fails(["run", "--config", config], "run.toml:1: config:", "no nesting")
        config = self.write("run.toml", "model = \"plummer\"\nsteps = 3\nt_end = 1.0\n")
        self.check_fails(["run", "--config", config], "run.toml:3:", "exclude each other")
        self.check_fails(["run", "--config", self.dir / "missing.toml"], "missing.toml: cannot open the config file")


if __name__ == "__main__":
    unittest.main()
