"""End-to-end tests of the nbody command line: exit codes, error messages, JSON keys.

Run by ctest (which sets NBODY_EXE); standard library only.
"""
import csv
import json
import math
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

EXE = os.environ.get("NBODY_EXE", "nbody")

RUN_KEYS = {"n", "steps", "t", "energy_start", "energy_end", "energy_drift", "momentum",
            "angular_momentum", "steps_per_second", "timings"}
INFO_KEYS = {"n", "total_mass", "kinetic", "potential", "total_energy", "virial_ratio", "momentum",
             "angular_momentum", "com", "com_velocity"}
MODELS = ["uniform-cube", "uniform-sphere", "cold-sphere", "plummer", "hernquist", "nfw", "kepler",
          "figure-eight", "two-clusters", "disk"]


def nbody(*args, check=True):
    proc = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"nbody {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


class CliTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def check_fails(self, args, *fragments):
        proc = nbody(*args, check=False)
        self.assertNotEqual(proc.returncode, 0, f"expected failure for {args}")
        self.assertNotIn("internal error", proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr, f"{args}: {proc.stderr!r}")
        return proc

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path


class TestGenInfoRun(CliTestCase):
    def test_every_model_generates_and_info_reports_json(self):
        for model in MODELS:
            out = self.dir / f"{model}.txt"
            nbody("gen", model, "-n", 100, "--seed", 3, "-o", out)
            info = json.loads(nbody("info", out, "--json").stdout)
            self.assertTrue(INFO_KEYS <= info.keys(), model)
            expected = {"kepler": 2, "figure-eight": 3}.get(model, 100)
            self.assertEqual(info["n"], expected, model)
            self.assertTrue(all(math.isfinite(v) for v in info["momentum"]), model)

    def test_gen_is_deterministic(self):
        a, b = self.dir / "a.txt", self.dir / "b.csv"
        nbody("gen", "plummer", "-n", 50, "--seed", 9, "-o", a)
        nbody("gen", "plummer", "-n", 50, "--seed", 9, "-o", b)
        ia = json.loads(nbody("info", a, "--json").stdout)
        ib = json.loads(nbody("info", b, "--json").stdout)
        self.assertEqual(ia["total_energy"], ib["total_energy"])

    def test_run_json_has_the_documented_keys(self):
        proc = nbody("run", "--model", "plummer", "-n", 200, "--steps", 20, "--dt", 0.01, "--softening", 0.01,
                     "--json")
        result = json.loads(proc.stdout)  # stdout holds only the JSON object
        self.assertTrue(RUN_KEYS <= result.keys())
        self.assertTrue({"gravity", "integrate", "io"} <= result["timings"].keys())
        self.assertEqual(result["n"], 200)
        self.assertEqual(result["steps"], 20)
        self.assertAlmostEqual(result["t"], 0.2, places=12)
        self.assertLess(result["energy_drift"], 1e-3)
        self.assertEqual(len(result["momentum"]), 3)

    def test_timings_split_the_tree_step_into_stages(self):
        proc = nbody("run", "--model", "plummer", "-n", 3000, "--steps", 3, "--gravity", "tree", "--softening", 0.05,
                     "--timings")
        table = proc.stdout[proc.stdout.index("stage "):]
        for stage in ("build", "walk", "integrate", "step"):
            self.assertRegex(table, rf"\n{stage}\s+\d+\.\d+\s+\d+\.\d%", stage)
        result = json.loads(nbody("run", "--model", "plummer", "-n", 3000, "--steps", 3, "--gravity", "tree",
                                  "--json").stdout)
        self.assertTrue({"build", "walk"} <= set(result["gravity_stages"]))
        self.assertGreater(result["gravity_stages"]["walk"], 0)
        direct = json.loads(nbody("run", "--model", "plummer", "-n", 100, "--steps", 2, "--json").stdout)
        self.assertNotIn("gravity_stages", direct)  # the direct sum has one stage

    def test_kepler_run_returns_to_start(self):
        start = self.dir / "k0.txt"
        end = self.dir / "k1.txt"
        nbody("gen", "kepler", "-o", start)
        result = json.loads(nbody("run", "-i", start, "--t-end", 2 * math.pi, "--dt", 2 * math.pi / 1000,
                                  "-o", end, "--json", "--quiet").stdout)
        self.assertAlmostEqual(result["t"], 2 * math.pi, places=12)
        rows0 = [list(map(float, l.split())) for l in start.read_text().splitlines() if not l.startswith("#")]
        rows1 = [list(map(float, l.split())) for l in end.read_text().splitlines() if not l.startswith("#")]
        for r0, r1 in zip(rows0, rows1):
            self.assertLess(math.dist(r0[:3], r1[:3]), 1e-3)

    def test_float_and_double_and_every_integrator(self):
        for precision in ("float", "double"):
            for integrator in ("leapfrog", "euler", "kinematic"):
                result = json.loads(nbody("run", "--model", "plummer", "-n", 100, "--steps", 10, "--precision",
                                          precision, "--integrator", integrator, "--softening", 0.05,
                                          "--threads", 1, "--json", "--quiet").stdout)
                self.assertLess(result["energy_drift"], 1e-2, (precision, integrator))

    def test_dim_2_keeps_the_plane(self):
        out = self.dir / "flat.csv"
        nbody("run", "--model", "uniform-cube", "-n", 64, "--steps", 20, "--dim", 2, "--softening", 0.1, "-o", out,
              "--quiet")
        lines = out.read_text().splitlines()
        self.assertEqual(lines[0], "x,y,z,vx,vy,vz,m,r,id")
        for line in lines[1:]:
            fields = line.split(",")
            self.assertEqual(float(fields[2]), 0.0)
            self.assertEqual(float(fields[5]), 0.0)

    def test_every_writes_numbered_snapshots(self):
        # Like a snapshot series: the start, every K steps and the last step (issue 33).
        out = self.dir / "state.txt"
        nbody("run", "--model", "plummer", "-n", 20, "--steps", 6, "--every", 2, "-o", out, "--quiet")
        names = sorted(p.name for p in self.dir.iterdir())
        self.assertEqual(names, ["state.txt", "state_000000.txt", "state_000002.txt", "state_000004.txt",
                                 "state_000006.txt"])
        self.assertEqual((self.dir / "state_000006.txt").read_text(), out.read_text())
        start = nbody("run", "--model", "plummer", "-n", 20, "--steps", 0, "-o", self.dir / "s.txt", "-q")
        self.assertEqual(start.returncode, 0)
        self.assertEqual((self.dir / "state_000000.txt").read_text(), (self.dir / "s.txt").read_text())

    def test_every_reports_the_start_and_a_last_step_off_the_cadence(self):
        out = self.dir / "o.txt"
        proc = nbody("run", "--model", "plummer", "-n", 20, "--softening", 0.05, "--t-end", 0.05,
                     "--dt", 0.01, "--every", 2, "-o", out)
        steps = [int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("step ")]
        self.assertEqual(steps, [0, 2, 4, 5])
        first = next(line for line in proc.stdout.splitlines() if line.startswith("step "))
        self.assertIn("|dE/E| = 0.000e+00", first)  # step 0: no drift yet
        self.assertEqual(sorted(p.name for p in self.dir.glob("o_*.txt")),
                         ["o_000000.txt", "o_000002.txt", "o_000004.txt", "o_000005.txt"])

    def test_output_replaces_existing_file_atomically(self):
        out = self.write("out.txt", "old contents\n")
        nbody("run", "--model", "kepler", "--steps", 1, "-o", out, "--quiet")
        self.assertNotIn("old", out.read_text())
        # no temporary left, and no used_parameters.toml beside a bare -o FILE
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["out.txt"])

    def test_si_units(self):
        body = "0 0 0 0 0 0 5.972e24\n384400000 0 0 0 1022 0 7.342e22\n"
        moon = self.write("earth_moon.txt", body)
        result = json.loads(nbody("run", "-i", moon, "--G", 6.67430e-11, "--dt", 60, "--steps", 100, "--json",
                                  "--quiet").stdout)
        self.assertLess(result["energy_drift"], 1e-6)


class TestBenchReports(CliTestCase):
    def test_every_quick_suite_writes_csv_json_plots_and_a_report(self):
        out = self.dir / "bench"
        proc = nbody("bench", "all", "--quick", "-o", out)
        suites = ["scaling", "block-size", "threads", "phases", "theta", "theta-pareto", "collisions",
                  "speedup"]
        plots_expected = "plots skipped" not in proc.stdout + proc.stderr
        report = (out / "report.md").read_text()
        for suite in suites:
            data = json.loads((out / f"{suite}.json").read_text())
            self.assertEqual(data["suite"], suite)
            for key in ("git", "date", "cpu", "device"):
                self.assertIn(key, data["meta"], suite)
            with open(out / f"{suite}.csv", newline="") as f:
                rows = list(csv.reader(f))
            self.assertEqual(rows[0], data["columns"], suite)
            self.assertEqual(len(rows) - 1, len(data["rows"]), suite)
            self.assertIn(f"<!-- suite: {suite} -->", report)
            if plots_expected and data["rows"]:
                for plot in data["plots"]:
                    png = (out / plot["file"]).read_bytes()
                    self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n", plot["file"])
                    self.assertGreater(len(png), 5000, plot["file"])
        # Suites that measured something on this machine have rows and sensible numbers.
        scaling = json.loads((out / "scaling.json").read_text())
        # Every CPU solver measured at least its smallest size (slow builds skip larger ones).
        self.assertTrue({"cpu direct scalar", "cpu direct simd", "cpu tree"} <= {r[0] for r in scaling["rows"]})
        self.assertTrue(all(r[4] > 0 for r in scaling["rows"]))
        theta = json.loads((out / "theta.json").read_text())
        medians = [r[4] for r in theta["rows"] if r[0] == "cpu"]
        self.assertEqual(medians, sorted(medians))  # errors grow with theta


class TestBadInput(CliTestCase):
    CASES = {
        "columns": ("0 0 0 0 0 0 1\n1 1 1 0 0 0\n", ":2:", "columns"),
        "not_a_number": ("# header\n0 0 0 0 0 0 1\n0 0 0 abc 0 0 1\n", ":3:", "not a number"),
        "nan": ("0 0 0 0 0 0 1\nnan 0 0 0 0 0 1\n", ":2:", "NaN"),
        "inf": ("0 0 0 0 0 0 1\n0 inf 0 0 0 0 1\n", ":2:", "infinite"),
        "negative_mass": ("0 0 0 0 0 0 1\n\n1 0 0 0 0 0 -2\n", ":3:", "mass"),
        "zero_mass_first": ("0 0 0 0 0 0 0\n1 0 0 0 0 0 1\n", ":2:", "a body with mass after the test particles"),
        "negative_radius": ("0 0 0 0 0 0 1 -1\n", ":1:", "radius"),
    }


    def test_broken_text_files_name_file_and_line(self):
        for name, (text, line, problem) in self.CASES.items():
            path = self.write(f"{name}.txt", text)
            for command in (["info", path], ["run", "-i", path, "--steps", 1]):
                self.check_fails(command, f"{name}.txt{line}", problem)

    def test_broken_csv_names_file_and_line(self):
        path = self.write("bad.csv", "x,y,z,vx,vy,vz,m\n0,0,0,0,0,0,1\n0,0,0,0,0,zz,1\n")
        self.check_fails(["info", path], "bad.csv:3:", "not a number")

    def test_empty_and_missing_files(self):
        empty = self.write("empty.txt", "")
        self.check_fails(["info", empty], "empty.txt", "no particles")
        comments = self.write("comments.txt", "# nothing here\n\n")
        self.check_fails(["info", comments], "comments.txt", "no particles")
        self.check_fails(["info", self.dir / "missing.txt"], "missing.txt")
        self.check_fails(["run", "-i", self.dir / "missing.txt", "--steps", 1], "missing.txt")

    def test_bad_options(self):
        self.check_fails(["run", "--model", "plummer", "-n", 10], "--steps")
        self.check_fails(["run", "--steps", 1], "-i FILE")
        self.check_fails(["run", "--model", "plummer", "--steps", 1, "--integrator", "rk99"], "--integrator")
        self.check_fails(["run", "--model", "plummer", "--steps", 1, "--dt", -1], "--dt")
        self.check_fails(["gen", "galaxy-zoo", "-o", self.dir / "x.txt"], "galaxy-zoo")
        self.check_fails(["gen", "kepler", "--e", 1.5, "-o", self.dir / "x.txt"], "--e")
        self.check_fails(["run", "--model", "plummer", "--steps", 1, "--format", "xml"], "--format", "xml")

    def test_bench_console_suites_refuse_report_options(self):
        self.check_fails(["bench", "tree", "--quick"], "console suite")
        self.check_fails(["bench", "direct", "--device", "all"], "--device: ", "(got all)")

    def test_gpu_errors_are_clear(self):
        run = ["run", "--model", "plummer", "-n", 10, "--steps", 1, "--device", "gpu"]
        if "GPU 0:" in nbody("--version").stdout:
            self.assertEqual(nbody(*run, "--quiet", check=False).returncode, 0)
        else:  # no GPU, or a build without CUDA: a clear message, never a crash
            self.check_fails(run, "--device: ", "(got gpu)")
        self.check_fails([*run, "--kernel", "scalar"], "--kernel: ", "(got scalar)")
        tree = [*run, "--gravity", "tree"]
        if "GPU 0:" in nbody("--version").stdout:
            self.assertEqual(nbody(*tree, "--quiet", check=False).returncode, 0)
        else:
            self.check_fails(tree, "--device: ", "(got gpu)")
        self.check_fails([*tree, "--theta", "-1"], "--theta")

    def test_huge_n_is_refused_with_the_memory_needed(self):
        # 2^32 + 1 bodies: 447 GB of arrays. Refused before anything is allocated, with the
        # bytes needed (it used to abort: std::bad_alloc thrown inside an OpenMP region).
        for args in (["run", "--model", "plummer", "-n", 4294967297, "--steps", 1],
                     ["gen", "plummer", "-n", 4294967297, "-o", self.dir / "huge.txt"]):
            proc = self.check_fails(args, "--count: the bodies alone need", "(got 4294967297)", "GB of memory", "104 bytes each")
            self.assertGreater(proc.returncode, 0)  # an exit status, not a signal (abort)
            self.assertFalse((self.dir / "huge.txt").exists())

    def test_unwritable_output_is_reported(self):
        self.check_fails(["gen", "plummer", "-n", 10, "-o", self.dir / "no" / "such" / "dir.txt"], "dir.txt")


class TestGenThreads(CliTestCase):
    def test_gen_gives_the_same_bytes_for_any_thread_count(self):
        # 10000 bodies: enough for the generator's loops to run on a team of threads.
        for model in ("plummer", "hernquist", "nfw", "two-clusters", "disk", "uniform-sphere"):
            files = []
            for threads in (1, 3):
                out = self.dir / f"{model}_{threads}.txt"
                nbody("gen", model, "-n", 10000, "--seed", 5, "--threads", threads, "-o", out)
                files.append(out.read_bytes())
            env_file = self.dir / f"{model}_env.txt"
            proc = subprocess.run([EXE, "gen", model, "-n", "10000", "--seed", "5", "-o", str(env_file)],
                                  capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "OMP_NUM_THREADS": "2"})
            self.assertEqual(proc.returncode, 0, proc.stderr)
            files.append(env_file.read_bytes())
            self.assertEqual(files[0], files[1], model)
            self.assertEqual(files[0], files[2], model)

    def test_gen_refuses_negative_threads(self):
        self.check_fails(["gen", "plummer", "-n", 10, "--threads", -1, "-o", self.dir / "x.txt"], "--threads")


class TestGenCuspedSpheres(CliTestCase):
    def info(self, *gen_args):
        out = self.dir / "model.txt"
        nbody("gen", *gen_args, "-o", out)
        return json.loads(nbody("info", out, "--json").stdout)

    def test_hernquist_and_nfw_have_unit_mass_and_are_near_virial_equilibrium(self):
        for model in ("hernquist", "nfw"):
            info = self.info(model, "-n", 3000, "--seed", 2)
            self.assertAlmostEqual(info["total_mass"], 1.0, places=12, msg=model)
            self.assertTrue(all(abs(v) < 1e-12 for v in info["com"] + info["momentum"]), model)
            self.assertLess(abs(info["virial_ratio"] - 1.0), 0.15, model)

    def test_rmax_and_concentration_change_the_model(self):
        default = self.info("hernquist", "-n", 2000, "--seed", 2)
        small = self.info("hernquist", "-n", 2000, "--seed", 2, "--rmax", 10)
        self.assertLess(default["potential"], 0)
        self.assertLess(small["potential"], default["potential"])  # more bound: a smaller sphere
        c10 = self.info("nfw", "-n", 2000, "--seed", 2)
        c20 = self.info("nfw", "-n", 2000, "--seed", 2, "--concentration", 20)
        self.assertNotEqual(c10["potential"], c20["potential"])

    def test_run_takes_the_cusped_models(self):
        for model in ("hernquist", "nfw"):
            result = json.loads(nbody("run", "--model", model, "-n", 300, "--steps", 5, "--dt", 0.001,
                                      "--softening", 0.01, "--json").stdout)
            self.assertEqual(result["n"], 300, model)

    def test_bad_model_options_are_refused(self):
        out = self.dir / "x.txt"
        self.check_fails(["gen", "hernquist", "--rmax", 0, "-o", out], "--rmax: truncation radius",
                         "must be positive", "(got 0)")
        self.check_fails(["gen", "hernquist", "--rmax", "inf", "-o", out], "--rmax: ", "(got inf)")
        self.check_fails(["gen", "hernquist", "--rmax", "abc", "-o", out], "--rmax")
        self.check_fails(["run", "--model", "nfw", "--concentration", -1, "--steps", 1],
                         "--concentration: concentration", "(got -1)")
        self.check_fails(["gen", "nfw", "--G", 0, "-o", out], "--G: ", "(got 0)")


class TestBenchOptions(CliTestCase):
    def bench_json(self, *args):
        return json.loads(nbody("bench", *args, "--seconds", 0.01, "--json").stdout)

    def test_softening_reaches_the_console_suites(self):
        self.assertEqual(self.bench_json("direct", "-n", 256)["softening"], 0.01)  # the default
        direct = self.bench_json("direct", "-n", 256, "--softening", 0.02)
        self.assertEqual(direct["softening"], 0.02)
        self.assertTrue(direct["results"])
        self.assertEqual(self.bench_json("tree", "-n", 1000)["softening"], 0.01)
        self.assertEqual(self.bench_json("tree", "-n", 1000, "--eps", 0.03)["softening"], 0.03)
        self.check_fails(["bench", "direct", "--softening", -1], "--softening")

    def test_softening_reaches_the_report_suites(self):
        out = self.dir / "theta"
        nbody("bench", "theta", "--quick", "--softening", 0.05, "-o", out)
        self.assertEqual(json.loads((out / "theta.json").read_text())["meta"]["softening"], 0.05)

    def test_bench_direct_takes_deterministic(self):
        # On the CPU the direct sum is deterministic anyway: the flag is accepted.
        self.assertTrue(self.bench_json("direct", "-n", 256, "--deterministic")["results"])
        gpu = ["bench", "direct", "--device", "gpu", "-n", 4096, "--kernel", "fast", "--deterministic",
               "--softening", 0.02, "--seconds", 0.01, "--json"]
        if "GPU 0:" in nbody("--version").stdout:
            result = json.loads(nbody(*gpu).stdout)
            self.assertTrue(result["deterministic"])
            self.assertEqual(result["softening"], 0.02)
        else:  # the option is known; what fails is the missing GPU
            proc = self.check_fails(gpu, "--device: ", "(got gpu)")
            self.assertNotIn("deterministic", proc.stderr)


if __name__ == "__main__":
    unittest.main()
