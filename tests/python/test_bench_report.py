"""Tests of python/nbody_bench_report.py, the plots and Markdown report of `nbody bench`.

Synthetic suite JSON for every plot kind in, PNGs and report.md out. Run by ctest (which sets
NBODY_BENCH_REPORT); standard library only, plus matplotlib for the image checks, which are
skipped with a reason when it is not installed.
"""
import copy
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(os.environ.get("NBODY_BENCH_REPORT",
                             Path(__file__).resolve().parents[2] / "python" / "nbody_bench_report.py"))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
NO_MATPLOTLIB = "matplotlib is not installed: PNG checks skipped (scripts/setup.sh installs it)"

META = {"cpu": "AMD EPYC 7B13", "threads": 2, "gpu": "NVIDIA H200", "device": "all",
        "git": "0c3bb76", "date": "2026-11-21T09:30:00Z", "quick": True, "precision": "float",
        "theta": 0.5, "softening": 0.01}


def scaling_suite():
    """line plots: log-log, one line per solver; a filter; a null y (a solver that did not run)."""
    rows = []
    for solver, device, rate in (("direct-simd-double", "cpu", 4e9), ("tree-cpu", "cpu", 2e8),
                                 ("direct-fast", "gpu", 2e12)):
        for n in (1024, 4096, 16384, 65536):
            per_step = (n * n / rate) if "direct" in solver else n * 12 * 400 / rate
            rows.append([solver, device, n, per_step, 1.0 / per_step])
    rows.append(["direct-naive", "gpu", 1024, None, None])
    return {
        "suite": "scaling", "title": "Steps per second against N", "meta": META,
        "columns": ["solver", "device", "n", "seconds_per_step", "steps_per_second"],
        "rows": rows,
        "plots": [
            {"file": "scaling.png", "kind": "line", "x": "n", "y": "steps_per_second",
             "group": "solver", "logx": True, "logy": True, "xlabel": "N (bodies)",
             "ylabel": "steps per second", "title": "Steps per second against N"},
            {"file": "scaling_cpu.png", "kind": "line", "x": "n", "y": "seconds_per_step",
             "group": "solver", "logx": True, "logy": True, "filter": {"device": "cpu"}},
        ],
        "notes": ["The CPU tree overtakes the CPU direct sum at N = 2048."],
    }


def phases_suite():
    """stacked bars with shares, string x categories."""
    stages = {"bbox": 0.1, "sort": 0.4, "build": 0.6, "summarise": 0.3, "force": 3.2,
              "integrate": 0.1}
    rows = [[config, stage, ms * scale, None]
            for config, scale in (("gpu-tree 1M", 1.0), ("cpu-tree 150k", 30.0))
            for stage, ms in stages.items()]
    return {
        "suite": "phases", "title": "Time per stage per step",
        "meta": dict(META, device="gpu", n=1000000),
        "columns": ["config", "stage", "ms_per_step", "share"],
        "rows": rows,
        "plots": [{"file": "phases.png", "kind": "stacked_bar", "x": "config", "y": "ms_per_step",
                   "group": "stage", "share": True, "ylabel": "ms per step"}],
        "notes": ["The force walk takes most of the step."],
    }


def theta_suite():
    """a line plot with a list of y columns and a group; grouped bars."""
    rows = [[solver, theta, 1e-4 * theta ** 2 * k, 1e-3 * theta ** 2 * k, 5.0 / (theta + 0.1) * k]
            for solver, k in (("tree-monopole", 1.0), ("tree-quadrupole", 0.25))
            for theta in (0.2, 0.4, 0.6, 0.8, 1.0)]
    return {
        "suite": "theta", "title": "Force error and time against θ",
        "meta": {k: v for k, v in META.items() if k not in ("theta", "gpu")},
        "columns": ["solver", "theta", "error_median", "error_p99", "ms_per_step"],
        "rows": rows,
        "plots": [
            {"file": "theta_error.png", "kind": "line", "x": "theta",
             "y": ["error_median", "error_p99"], "group": "solver", "logy": True},
            {"file": "theta_time.png", "kind": "bar", "x": "theta", "y": "ms_per_step",
             "group": "solver", "ylabel": "ms per step"},
        ],
    }


def timestep_suite():
    """a line plot in two panels (a list of x columns), points labelled from a column, a line
    per pair of columns (mode and criterion, null for the fixed steps)."""
    rows = [["fixed", 1 / 16 / 2 ** k, None, f"dt {1 / 16 / 2 ** k:.4g}", 16 * 2 ** k,
             0.5 * 2 ** k, 3e-4 / 4 ** k, None] for k in range(4)]
    rows += [["adaptive", 1 / 16, eta, f"η {eta:g}", 16 * (1 + 4 * (0.1 / eta) ** 0.5),
              0.5 * (1 + 4 * (0.1 / eta) ** 0.5), 3e-5 * eta / 0.1, criterion]
             for criterion in ("acceleration", "dynamical") for eta in (0.1, 0.025)]
    return {
        "suite": "timestep", "title": "Fixed against adaptive steps",
        "meta": dict(META, device="cpu", gpu=None, n=20000, model="plummer"),
        "columns": ["mode", "dt", "eta", "label", "force_evaluations_per_body", "wall_seconds",
                    "energy_error", "criterion"],
        "rows": rows,
        "plots": [{"file": "timestep.png", "kind": "line",
                   "x": ["wall_seconds", "force_evaluations_per_body"], "y": "energy_error",
                   "group": ["mode", "criterion"], "labels": "label", "logx": True, "logy": True,
                   "xlabel": ["wall seconds", "force evaluations per body"],
                   "ylabel": "|ΔE/E|", "title": "Fixed and adaptive steps"}],
        "notes": ["Headline: adaptive steps take ×0.5 the force evaluations."],
    }


SUITES = {"scaling": scaling_suite, "phases": phases_suite, "theta": theta_suite}


class ReportTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def write_suite(self, doc, name=None):
        path = self.dir / f"{name or doc['suite']}.json"
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=1))
        return path

    def report(self, suite, *, check=True, without_matplotlib=False):
        """Runs the script on self.dir; without_matplotlib makes `import matplotlib` fail."""
        if without_matplotlib:
            code = ("import runpy, sys; sys.modules['matplotlib'] = None; "
                    f"sys.argv = [{str(SCRIPT)!r}, {str(self.dir)!r}, {suite!r}]; "
                    f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')")
            command = [sys.executable, "-c", code]
        else:
            command = [sys.executable, str(SCRIPT), str(self.dir), suite]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, MPLBACKEND="Agg"))
        if check and proc.returncode != 0:
            raise AssertionError(f"report {suite} failed ({proc.returncode}):\n{proc.stderr}")
        return proc

    def read_report(self):
        return (self.dir / "report.md").read_text(encoding="utf-8")


class TestPlots(ReportTestCase):
    @unittest.skipUnless(HAVE_MATPLOTLIB, NO_MATPLOTLIB)
    def test_every_plot_kind_writes_a_nonblank_png(self):
        from matplotlib.image import imread
        for make in SUITES.values():
            doc = make()
            self.write_suite(doc)
            self.report(doc["suite"])
            for spec in doc["plots"]:
                path = self.dir / spec["file"]
                with self.subTest(plot=spec["file"]):
                    self.assertTrue(path.exists())
                    self.assertEqual(path.read_bytes()[:8], PNG_MAGIC)
                    self.assertGreater(path.stat().st_size, 5000)
                    pixels = imread(path)
                    self.assertGreater(float(pixels.std()), 0.0)
                    self.assertGreater(pixels.shape[1], 1000)  # 8 in at 150 dpi
        self.assertEqual(sorted(p.name for p in self.dir.glob("*.tmp")), [])

    @unittest.skipUnless(HAVE_MATPLOTLIB, NO_MATPLOTLIB)
    def test_panels_and_point_labels(self):
        from matplotlib.image import imread
        self.write_suite(timestep_suite())
        self.report("timestep")
        pixels = imread(self.dir / "timestep.png")
        self.assertGreater(pixels.shape[1], 1.5 * 8 * 150)  # two panels: wider than one
        self.assertGreater(float(pixels.std()), 0.0)
        report = self.read_report()
        self.assertIn("![Fixed and adaptive steps](timestep.png)", report)
        self.assertIn("| adaptive | 0.0625 | 0.025 | η 0.025 |", report)
        self.assertIn("*CPU AMD EPYC 7B13 (2 threads) · N = 20000 · float", report)

    @unittest.skipUnless(HAVE_MATPLOTLIB, NO_MATPLOTLIB)
    def test_a_line_per_group_of_columns_and_quiet_minor_labels(self):
        """group [mode, criterion]: one line each for fixed, adaptive acceleration and
        adaptive dynamical (a null value left out of the name); a value of 0 left off a log
        axis; a log axis over two decades has no labels on its minor ticks (they ran into
        each other)."""
        sys.path.insert(0, str(SCRIPT.parent))
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from matplotlib.ticker import NullFormatter
            import nbody_bench_plots as plots
            from nbody_bench_records import as_records
        finally:
            sys.path.remove(str(SCRIPT.parent))
        doc = timestep_suite()
        doc["rows"][3][6] = 0.0  # the reference's own error: no place on a log axis
        spec = dict(doc["plots"][0], x="wall_seconds")
        fig, ax = plt.subplots()
        try:
            plots.draw_line(ax, spec, as_records(doc))
            plots.decorate(ax, spec, doc)
            _, labels = ax.get_legend_handles_labels()
            self.assertEqual(labels, ["fixed", "adaptive acceleration", "adaptive dynamical"])
            self.assertEqual([len(line.get_xdata()) for line in ax.lines], [3, 2, 2])
            self.assertIsInstance(ax.xaxis.get_minor_formatter(), NullFormatter)
        finally:
            plt.close(fig)

    @unittest.skipUnless(HAVE_MATPLOTLIB, NO_MATPLOTLIB)
    def test_plot_with_no_rows_left_is_still_written(self):
        doc = scaling_suite()
        doc["plots"][1]["filter"] = {"device": "tpu"}
        self.write_suite(doc)
        proc = self.report("scaling")
        self.assertIn("no rows to plot", proc.stderr)
        self.assertEqual((self.dir / "scaling_cpu.png").read_bytes()[:8], PNG_MAGIC)

    def test_without_matplotlib_the_report_is_written_and_plots_skipped(self):
        self.write_suite(scaling_suite())
        proc = self.report("scaling", without_matplotlib=True)
        self.assertEqual(proc.returncode, 0)
        self.assertIn("plots skipped: matplotlib is not installed (pip install matplotlib, "
                      "or apt install python3-matplotlib)", proc.stderr)
        report = self.read_report()
        self.assertIn("## Steps per second against N (scaling)", report)
        self.assertIn("| direct-simd-double | cpu | 1024 |", report)
        self.assertIn("- The CPU tree overtakes the CPU direct sum at N = 2048.", report)
        self.assertNotIn("](scaling.png)", report)  # no links to images that do not exist
        self.assertFalse((self.dir / "scaling.png").exists())


class TestReport(ReportTestCase):
    def test_section_has_label_table_notes_and_images(self):
        doc = scaling_suite()
        self.write_suite(doc)
        (self.dir / "scaling.csv").write_text("solver,device,n,seconds_per_step,steps_per_second\n")
        self.report("scaling")
        report = self.read_report()
        self.assertTrue(report.startswith("# nbody benchmarks\n"))
        self.assertIn("<!-- suite: scaling -->\n## Steps per second against N (scaling)\n", report)
        label = ("*CPU AMD EPYC 7B13 (2 threads) · GPU NVIDIA H200 · N = 1024–65536 · float · "
                 "θ = 0.5 · softening 0.01 · git 0c3bb76 · 2026-11-21T09:30:00Z · --quick*")
        self.assertIn(label, report)
        self.assertIn("| solver | device | n | seconds_per_step | steps_per_second |\n"
                      "|---|---|---:|---:|---:|\n", report)
        # 1024^2 / 4e9 s = 0.000262144 s, 3814.697... steps/s: 4 significant digits
        self.assertIn("| direct-simd-double | cpu | 1024 | 0.0002621 | 3815 |", report)
        self.assertIn("| direct-naive | gpu | 1024 | — | — |", report)
        self.assertEqual(report.count("\n| "), len(doc["rows"]) + 1)  # every row, plus header
        self.assertIn("- The CPU tree overtakes the CPU direct sum at N = 2048.\n", report)
        self.assertIn("[scaling.csv](scaling.csv)", report)
        if HAVE_MATPLOTLIB:
            self.assertIn("![Steps per second against N](scaling.png)", report)
            self.assertIn("](scaling_cpu.png)", report)
        else:
            print(f"\n  image links not checked: {NO_MATPLOTLIB}", file=sys.stderr)
        self.assertTrue(report.rstrip().endswith("<!-- end suite: scaling -->"))

    def test_label_names_only_the_devices_measured(self):
        doc = theta_suite()  # a CPU suite with no GPU and no fixed theta
        self.write_suite(doc)
        self.report("theta")
        report = self.read_report()
        self.assertIn("*CPU AMD EPYC 7B13 (2 threads) · float · θ = 0.2–1 · softening 0.01 · "
                      "git 0c3bb76", report)
        self.assertNotIn("GPU", report)
        doc = phases_suite()
        self.write_suite(doc)
        self.report("phases")
        self.assertIn("*GPU NVIDIA H200 · N = 1000000 · float", self.read_report())

    def test_rerun_replaces_the_section_and_keeps_first_run_order(self):
        for suite in ("scaling", "phases", "theta"):
            self.write_suite(SUITES[suite]())
            self.report(suite, without_matplotlib=True)
        doc = phases_suite()
        doc["notes"] = ["Second run."]
        self.write_suite(doc)
        self.report("phases", without_matplotlib=True)
        self.report("scaling", without_matplotlib=True)
        report = self.read_report()
        self.assertEqual(report.count("# nbody benchmarks"), 1)
        for suite in SUITES:
            self.assertEqual(report.count(f"<!-- suite: {suite} -->"), 1, suite)
            self.assertEqual(report.count(f"<!-- end suite: {suite} -->"), 1, suite)
        order = [report.index(f"<!-- suite: {s} -->") for s in ("scaling", "phases", "theta")]
        self.assertEqual(order, sorted(order))
        self.assertIn("- Second run.", report)
        self.assertNotIn("The force walk takes most of the step.", report)

    def test_text_outside_the_sections_is_kept(self):
        (self.dir / "report.md").write_text("# nbody benchmarks\n\nRun on the lab machine.\n")
        self.write_suite(theta_suite())
        self.report("theta", without_matplotlib=True)
        self.report("theta", without_matplotlib=True)
        report = self.read_report()
        self.assertIn("Run on the lab machine.\n", report)
        self.assertEqual(report.count("<!-- suite: theta -->"), 1)

    def test_cells_are_escaped_and_floats_shortened(self):
        doc = {"suite": "odd", "title": "Odd values", "columns": ["name", "x", "y"],
               "rows": [["a|b", 1.23456789e-7, 123456789.0], ["c", 3, None]], "plots": []}
        self.write_suite(doc)
        self.report("odd")
        report = self.read_report()
        self.assertIn("| a\\|b | 1.235e-07 | 1.235e+08 |", report)
        self.assertIn("| c | 3 | — |", report)


class TestBadInput(ReportTestCase):
    def assert_fails(self, text_or_doc, *needles, suite="scaling"):
        path = self.dir / f"{suite}.json"
        text = text_or_doc if isinstance(text_or_doc, str) else json.dumps(text_or_doc)
        path.write_text(text)
        proc = self.report(suite, check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(str(path), proc.stderr)
        for needle in needles:
            self.assertIn(needle, proc.stderr)
        self.assertFalse((self.dir / "report.md").exists())

    def test_invalid_json_names_file_and_line(self):
        self.assert_fails('{"suite": "scaling",\n "title": }', ":2: invalid JSON")

    def test_missing_key(self):
        doc = scaling_suite()
        del doc["columns"]
        self.assert_fails(doc, "missing key 'columns'")

    def test_unknown_plot_kind(self):
        doc = scaling_suite()
        doc["plots"][1]["kind"] = "pie"
        self.assert_fails(doc, "plots[1]", "unknown plot kind 'pie'")

    def test_unknown_column(self):
        for key, value in (("x", "bodies"), ("y", ["steps_per_second", "fps"]), ("group", "algo"),
                           ("group", ["solver", "algo"]), ("filter", {"gpu": "H200"})):
            doc = scaling_suite()
            doc["plots"][0][key] = value
            with self.subTest(key=key):
                self.assert_fails(doc, "plots[0]", "unknown column")

    def test_a_list_of_group_columns_only_for_lines(self):
        doc = scaling_suite()
        doc["plots"][0]["group"] = []
        self.assert_fails(doc, "plots[0]", "'group' must be a column")
        doc = phases_suite()
        doc["plots"][0]["group"] = ["config", "stage"]
        self.assert_fails(doc, "plots[0]", "for a line a non-empty list", suite="phases")

    def test_ragged_row_and_wrong_suite(self):
        doc = scaling_suite()
        doc["rows"][3] = doc["rows"][3][:-1]
        self.assert_fails(doc, "rows[3]")
        doc = copy.deepcopy(scaling_suite())
        doc["suite"] = "phases"
        self.assert_fails(doc, "expected 'scaling'")

    def test_panels_and_labels_are_checked(self):
        doc = phases_suite()
        doc["plots"][0]["x"] = ["config", "stage"]
        self.assert_fails(doc, "plots[0]", "one x and one y column", suite="phases")
        doc = timestep_suite()
        doc["plots"][0]["labels"] = "name"
        self.assert_fails(doc, "plots[0]", "unknown column 'name'", suite="timestep")
        doc = timestep_suite()
        doc["plots"][0]["x"] = ["wall_seconds", "evaluations"]
        self.assert_fails(doc, "plots[0]", "unknown column 'evaluations'", suite="timestep")

    def test_plot_file_must_stay_in_the_folder(self):
        doc = scaling_suite()
        doc["plots"][0]["file"] = "../scaling.png"
        self.assert_fails(doc, "plain file name")

    def test_missing_file(self):
        proc = self.report("nothing", check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(str(self.dir / "nothing.json"), proc.stderr)

    def test_help(self):
        proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(proc.returncode, 0)
        self.assertIn("stacked_bar", proc.stdout)


if __name__ == "__main__":
    unittest.main()
