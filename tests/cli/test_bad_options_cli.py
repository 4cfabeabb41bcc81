"""Every option of every subcommand is checked where it enters (issue 32): one message style,
`nbody: error: WHERE: WHAT (got VALUE)`, and a non-zero exit.

Each test is one class of bad value; its name holds bad/refus/empty/wrong/invalid so that it
also runs under the sanitizers. Standard library only (ctest sets NBODY_EXE).
"""
import json
import unittest

from test_cli import CliTestCase, nbody

UINT_MAX = "18446744073709551615"


class BadOptionsTestCase(CliTestCase):
    def setUp(self):
        super().setUp()
        self.bodies = self.dir / "p.txt"
        nbody("gen", "plummer", "-n", 20, "-o", self.bodies, "-q")

    def refused(self, args, where, value, *fragments):
        """The command fails with `nbody: error: WHERE: ... (got VALUE)` on one short line."""
        proc = self.check_fails(args, "nbody: error: ", f"{where}: ", f"(got {value})", *fragments)
        first = proc.stderr.splitlines()[0]
        self.assertLess(len(first), 300, first)  # never DBL_MAX in 309 digits
        self.assertNotIn("\x1b", proc.stderr)
        return proc

    def run_args(self, *extra):
        return ["run", "-i", self.bodies, "--steps", 1, "-q", *extra]


class TestBadNumbers(BadOptionsTestCase):
    def test_bad_negative_counts_are_refused_not_wrapped_to_2_64(self):
        self.refused(["run", "-i", self.bodies, "--steps", "-1"], "--steps", "-1",
                     "must be a whole number >= 0")
        self.refused(self.run_args("--every", "-1"), "--every", "-1")
        self.refused(self.run_args("--seed", "-1"), "--seed", "-1")
        self.refused(["gen", "plummer", "--seed", "-1", "-o", self.dir / "x.txt"], "--seed", "-1")
        for option in ("--snapshot-every", "--stats-every", "--checkpoint-every"):
            self.refused(self.run_args(option, "-1"), option, "-1")
        self.refused(["accuracy", "-i", self.bodies, "--sample", "-1"], "--sample", "-1")
        self.refused(self.run_args("--max-bodies-per-rank", "-1"), "--max-bodies-per-rank", "-1")

    def test_bad_fractional_and_huge_counts_are_refused(self):
        self.refused(["run", "-i", self.bodies, "--steps", "1.5"], "--steps", "1.5",
                     "must be a whole number")
        self.refused(["gen", "plummer", "-n", "2.5", "-o", self.dir / "x.txt"], "--count", "2.5")
        self.refused(["run", "-i", self.bodies, "--steps", "99999999999999999999"], "--steps",
                     "99999999999999999999", f"from 0 to {UINT_MAX}")
        self.refused(self.run_args("--threads", "99999999999"), "--threads", "99999999999",
                     "from -2147483648 to 2147483647")
        self.refused(["run", "-i", self.bodies, "--steps", "abc"], "--steps", "abc")

    def test_bad_non_finite_numbers_are_refused(self):
        self.refused(["run", "-i", self.bodies, "--t-end", "inf"], "--t-end", "inf",
                     "must be a finite number")
        self.refused(["run", "-i", self.bodies, "--t-end", "1e400"], "--t-end", "1e400")
        self.refused(self.run_args("--snapshot-dt", "nan"), "--snapshot-dt", "nan")
        self.refused(self.run_args("--dt", "nan"), "--dt", "nan")
        self.refused(self.run_args("--softening", "-inf"), "--softening", "-inf")
        self.refused(["info", self.bodies, "--G", "nan"], "--G", "nan")
        self.refused(["info", self.bodies, "--softening", "inf"], "--softening", "inf")

    def test_bad_range_messages_are_short(self):
        self.refused(["gen", "plummer", "-n", "0", "-o", self.dir / "x.txt"], "--count", "0",
                     "must be a whole number >= 1")
        self.refused(self.run_args("--snapshot-dt", "0"), "--snapshot-dt", "0",
                     "must be a number > 0")
        self.refused(self.run_args("--checkpoint-keep", "0"), "--checkpoint-keep", "0",
                     "from 1 to 1000000")

    def test_bad_model_parameters_are_refused_for_gen_and_run(self):
        cases = [("--e", "1", "eccentricity must be in [0, 1)"), ("--e", "-0.1", "eccentricity"),
                 ("--a", "-1", "semi-major axis"), ("--rmax", "nan", "finite"),
                 ("--rmax", "0", "truncation radius"), ("--concentration", "0", "concentration"),
                 ("--mass", "0", "total mass"), ("--size", "-1", "sphere radius"),
                 ("--velocity", "-1", "velocity range"), ("--separation", "0", "distance"),
                 ("--impact", "-1", "impact parameter"), ("--disk-mass", "-1", "disk mass"),
                 ("--scale-length", "0", "scale length"), ("--radius", "-1", "body radius")]
        for option, value, what in cases:
            with self.subTest(option=option, value=value):
                self.refused(["gen", "kepler", option, value, "-o", self.dir / "x.txt"], option, value,
                             what)
                self.refused(["run", "--model", "kepler", "--steps", 1, option, value], option, value)
        self.refused(["gen", "two-clusters", "-n", "1", "-o", self.dir / "x.txt"], "-n", "1",
                     "needs at least 2 bodies")

    def test_bad_values_of_the_other_commands_are_refused(self):
        png = self.dir / "r.png"
        render = ["render", "-i", self.bodies, "-o", png, "--frames", 1]
        self.refused(render + ["--width", "8"], "--width", "8", "from 16 to 16384")
        self.refused(render + ["--fps", "0"], "--fps", "0", "from 1 to 240")
        self.refused(render + ["--azimuth", "400"], "--azimuth", "400")
        self.refused(render + ["--zoom", "nan"], "--zoom", "nan")
        self.refused(["render", "-i", self.bodies, "-o", png, "--frames", "0"], "--frames", "0")
        self.refused(["view", "-i", self.bodies, "--width", "10"], "--width", "10")
        self.refused(["view", "-i", self.bodies, "--frames", "-1"], "--frames", "-1")
        self.refused(["bench", "direct", "--seconds", "0"], "--seconds", "0", "must be a number > 0")
        self.refused(["bench", "collisions", "--restitution", "2"], "--restitution", "2")
        self.refused(["bench", "collisions", "--collision-iterations", "-1"],
                     "--collision-iterations", "-1")
        self.refused(["bench", "direct", "-n", "0"], "--count", "0")
        for bad in ("0", "-1", "1.5", "nan", "99999999999999999999"):
            self.refused(["bench", "scaling-mpi", "--from-ranks", bad], "--from-ranks", bad)
        self.refused(["bench", "scaling-mpi", "--from-ranks", "2"], "--from-ranks", "2",
                     "at most the 1 ranks of mpirun")
        self.refused(["bench", "scaling-mpi", "--scaling", "sideways"], "--scaling", "sideways")
        self.refused(["bench", "collisions", "--quick", "--volume-fraction", "2"], "--volume-fraction",
                     "2", "must be a number > 0 and < 1")
        self.refused(["accuracy", "-i", self.bodies, "--theta", "nan"], "--theta", "nan")

    def test_leading_zeros_are_decimal_not_octal(self):
        result = json.loads(nbody("run", "-i", self.bodies, "--steps", "010", "--json").stdout)
        self.assertEqual(result["steps"], 10)


class TestBadText(BadOptionsTestCase):
    def test_empty_paths_are_refused(self):
        x = self.dir / "x.txt"
        self.refused(self.run_args("-o", ""), "--output", "''", "must not be empty")
        self.refused(self.run_args("--restart", ""), "--restart", "''")
        self.refused(self.run_args("--output-dir", ""), "--output-dir", "''")
        self.refused(self.run_args("--config", ""), "--config", "''")
        self.refused(["run", "-i", "", "--steps", 1], "--input", "''")
        self.refused(["gen", "plummer", "-o", ""], "--output", "''")
        self.refused(["gen", "plummer", "-o", x, "--format", ""], "--format", "''")
        self.refused(["info", ""], "file", "''")
        self.refused(["render", "-i", self.bodies, "-o", ""], "--output", "''")

    def test_control_bytes_in_text_are_refused_and_escaped(self):
        self.refused(["gen", "plummer", "-o", "a\x1b[31mb.txt"], "--output", "a\\x1b[31mb.txt",
                     "must not contain control characters")
        self.refused(self.run_args("--gravity", "tree\n"), "--gravity", "tree\\x0a")

    def test_unknown_and_incomplete_options_are_refused_in_nbody_style(self):
        self.check_fails(["run", "--no-such-option"], "nbody: error: ", "--no-such-option", "--help")
        self.check_fails(["run", "-i", self.bodies, "--steps"], "nbody: error: --steps")
        self.check_fails(["gen"], "nbody: error: ", "MODEL")
        self.assertEqual(nbody("run", "--help").returncode, 0)
        self.assertEqual(nbody("gen", "--help").returncode, 0)


class TestBadCommandLines(BadOptionsTestCase):
    """Every kind of command-line mistake: one line `nbody: error: WHERE: WHAT`, the nearest name
    where there is one, a pointer to the command's --help, and exit status 2 (docs/bad-input.md,
    "Exit codes"); a refused value exits 2 too, a bad file or run 1."""

    def usage_error(self, args, first_line, help_of=None):
        proc = nbody(*args, check=False)
        self.assertEqual(proc.returncode, 2, f"{args}: {proc.stderr}")
        lines = proc.stderr.splitlines()
        self.assertEqual(lines[0], "nbody: error: " + first_line, args)
        if help_of is not None:
            self.assertEqual(lines[1], f"Run '{help_of} --help' for more information.", args)
        self.assertEqual(proc.stdout, "")
        return proc

    def test_bad_unknown_options_get_the_nearest_name(self):
        self.usage_error(["run", "--tend", "10"], "--tend: unknown option (did you mean --t-end?)",
                         "nbody run")
        self.usage_error(["run", "--model", "plummer", "--tend=10"],
                         "--tend: unknown option (did you mean --t-end?)", "nbody run")
        self.usage_error(["run", "--t_end", "1"], "--t_end: unknown option (did you mean --t-end?)")
        self.usage_error(["info", self.bodies, "--jsn"], "--jsn: unknown option (did you mean --json?)",
                         "nbody info")
        self.usage_error(["run", "--frobnicate"], "--frobnicate: unknown option", "nbody run")
        self.usage_error(["run", "-x", "-3"], "-x: unknown option")  # no guess for one letter
        # Reported before the required option it hides (CLI11 alone says "--output is required").
        self.usage_error(["render", "-i", self.bodies, "--ouptut", "x.png"],
                         "--ouptut: unknown option (did you mean --output?)", "nbody render")

    def test_bad_unknown_commands_get_the_nearest_name(self):
        self.usage_error(["runn", "--steps", "3"], "runn: unknown command (did you mean run?)",
                         "nbody")
        self.usage_error(["frobnicate"], "frobnicate: unknown command (the commands: gen, run, "
                         "info, bench, accuracy, render, view)")
        self.usage_error([], "a command is required (gen, run, info, bench, accuracy, render, view)",
                         "nbody")

    def test_bad_missing_and_extra_arguments(self):
        self.usage_error(["run", "--model", "plummer", "--steps"],
                         "--steps: missing value (expects a whole number >= 0)", "nbody run")
        self.usage_error(["run", "--model", "plummer", "--t-end"],
                         "--t-end: missing value (expects a number)")
        self.usage_error(["gen", "plummer", "-o"], "--output: missing value", "nbody gen")
        self.usage_error(["run", "--model", "plummer", "--steps", 1, "--format"],
                         "--format: missing value (expects one of {text,csv,hdf5,auto})")
        self.usage_error(["info"], "FILE: missing (nbody info needs this argument)", "nbody info")
        self.usage_error(["render", "-i", self.bodies], "--output: missing (nbody render needs this "
                         "option)")
        self.usage_error(["info", self.bodies, "extra"],
                         "extra: unexpected argument (nbody info takes FILE)", "nbody info")
        self.usage_error(["run", "-i", self.bodies, "--steps", 1, "extra"],
                         "extra: unexpected argument (nbody run takes options only)")
        self.usage_error(["bench"], "SUITE: missing (nbody bench needs one of direct, tree, "
                         "collisions, scaling, block-size, threads, phases, theta, speedup, all, "
                         "scaling-mpi, timestep, seeds, small, test-particles)", "nbody bench")

    def test_bad_option_combinations(self):
        self.usage_error(["run", "--model", "plummer", "--steps", 1, "--t-end", 2],
                         "--steps: cannot be given with --t-end (give one of them)", "nbody run")
        self.usage_error(["run", "-i", self.bodies, "--model", "plummer", "--steps", 1],
                         "--input: cannot be given with --model (give one of them)")
        self.usage_error(["run", "--model", "plummer", "--steps", 1, "--quiet=maybe"],
                         "--quiet: takes no value, or true or false (got maybe)")
        self.usage_error(["run", "--model", "plummer"],
                         "nbody run needs a length: --steps K or --t-end T", "nbody run")
        self.usage_error(["accuracy"], "nbody accuracy needs bodies: give an input file (-i FILE) "
                         "or a model (--model MODEL -n N)", "nbody accuracy")

    def test_bad_values_and_files_exit_2_and_1(self):
        proc = self.usage_error(["run", "-i", self.bodies, "--steps", "-1"],
                                "--steps: must be a whole number >= 0 (got -1)")
        self.assertEqual(len(proc.stderr.splitlines()), 1)  # the message says all
        self.usage_error(["gen", "plumer", "-o", self.dir / "x.txt"],
                         "model: must be one of uniform-cube, uniform-sphere, cold-sphere, plummer, "
                         "hernquist, nfw, kepler, figure-eight, two-clusters, disk, giants (got plumer); "
                         "did you mean plummer?")
        self.usage_error(["run", "-i", self.dir / "missing.txt", "--steps", 1],
                         f"--input: no such file (got {self.dir / 'missing.txt'})")
        self.usage_error(["run", "-i", self.dir, "--steps", 1],
                         f"--input: is a directory, not a file (got {self.dir})")
        bad = self.dir / "bad.txt"
        bad.write_text("1 2 3\n")
        proc = nbody("info", bad, check=False)  # a file nbody cannot read: an input error
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertTrue(proc.stderr.startswith(f"nbody: error: {bad}"), proc.stderr)

    def test_help_and_version_exit_0_and_name_the_exit_codes(self):
        proc = nbody("--help")
        self.assertEqual(proc.returncode, 0)
        self.assertIn("Exit status: 0 success; 1 an error in the input or the run; 2 a command line",
                      proc.stdout)
        self.assertEqual(nbody("--version").returncode, 0)
        self.assertEqual(nbody("run", "--tend", "--help").returncode, 0)  # help wins


class TestBadConfigValues(BadOptionsTestCase):
    def config(self, text):
        path = self.dir / "run.toml"
        path.write_bytes(text.encode())
        return ["run", "-i", self.bodies, "-q", "--config", path]

    def test_bad_config_values_name_the_file_and_line(self):
        self.refused(self.config("dt = 0.01\nsteps = 1\nblock-size = 1\n"), "run.toml:3: block-size",
                     "1", "GPU only")
        self.refused(self.config("# a run\nt-end = inf\n"), "run.toml:2: t-end", "inf",
                     "must be a finite number")
        self.refused(self.config("steps = 1\nsnapshot_dt = nan\n"), "run.toml:2: snapshot_dt", "nan")
        self.refused(self.config("steps = 1\noutput = \"\"\n"), "run.toml:2: output", "''")
        self.refused(self.config("steps = 1\ne = 1.5\n"), "run.toml:2: e", "1.5")
        self.refused(self.config("steps = 0.5\n"), "run.toml:1: steps", "0.5",
                     "expects a non-negative integer")

    def test_refused_huge_count_in_a_config_names_the_line_and_the_memory(self):
        path = self.dir / "huge.toml"
        path.write_text("model = \"plummer\"\nn = \"4294967297\"\nsteps = 1\n")
        self.refused(["run", "--config", path], "huge.toml:2: n", "4294967297", "GB of memory")

    def test_non_ascii_config_key_is_refused_with_its_line(self):
        self.refused(self.config("steps = 1\n\u00e9t\u00e9 = 2\n"), "run.toml:2", "\\xc3",
                     "non-ASCII")
        # Inside strings and comments UTF-8 is fine.
        proc = nbody(*self.config("# \u00e9t\u00e9\nsteps = 1\nformat = \"auto\" # \u00e9\n"),
                     check=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)


if __name__ == "__main__":
    unittest.main()
