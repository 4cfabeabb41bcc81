"""Runs that survive interruption (issue 9): checkpoints, --restart, SIGINT/SIGTERM, kill -9
during snapshot writes, the energy log and the snapshot schedule.

The central check: a run stopped and restarted ends byte for byte where an uninterrupted
run of the same command ends (the final particle file and energy.csv compared as bytes).
"""
import csv
import json
import os
import signal
import subprocess
import time
import unittest

from test_cli import EXE, CliTestCase, nbody

try:
    import h5py
except ImportError:  # pragma: no cover - reported by the tests that need it
    h5py = None

TOOLS_REQUIRED = os.environ.get("NBODY_PYTHON_TOOLS_REQUIRED") == "1"

# A small cluster with softening: fast on two cores, and chaotic enough that any
# difference in the last bit grows visibly within the run.
BASE = ["--model", "plummer", "-n", 256, "--seed", 5, "--softening", 0.02, "--dt", 0.005, "-q"]


def steps_of(directory):
    return sorted(int(p.stem.split("_")[1]) for p in directory.glob("checkpoint_*.h5"))


class TestRestartEqualsUninterrupted(CliTestCase):
    def assert_restart_matches(self, extra, split_at=70, total=130):
        whole, parts = self.dir / "whole", self.dir / "parts"
        common = [*BASE, *extra, "--stats-every", 10, "--snapshot-every", 40]
        nbody("run", *common, "--steps", total, "--output-dir", whole, "-o", whole / "final.txt")
        # The same command, stopped early at a checkpoint, then continued twice over.
        nbody("run", *common, "--steps", split_at, "--checkpoint-every", 25, "--output-dir", parts,
              "-o", parts / "final.txt")
        self.assertEqual(steps_of(parts)[-1], split_at)
        nbody("run", *common, "--steps", total, "--checkpoint-every", 25, "--output-dir", parts,
              "-o", parts / "final.txt", "--restart", "latest")
        for name in ("final.txt", "energy.csv", "snapshot_0003.hdf5"):
            if name.endswith(".hdf5") and h5py is None:
                continue
            a, b = (whole / name).read_bytes(), (parts / name).read_bytes()
            self.assertEqual(a, b, f"{extra}: {name} differs between the uninterrupted and the restarted run")
        rows = list(csv.DictReader((parts / "energy.csv").open()))
        self.assertEqual([int(r["step"]) for r in rows], list(range(0, total + 1, 10)))

    def test_direct_leapfrog(self):
        self.assert_restart_matches(["--gravity", "direct"])

    def test_tree_quadrupole(self):
        self.assert_restart_matches(["--gravity", "tree", "--theta", 0.6, "--quadrupole"])

    def test_merging_collisions(self):
        self.assert_restart_matches(["--radius", 0.02, "--collisions", "merge"])

    def test_adaptive_steps(self):
        # Bins from the accelerations at each synchronised step: the checkpoint's state
        # (with its accelerations) gives the bins the uninterrupted run takes.
        self.assert_restart_matches(["--gravity", "tree", "--timestep", "adaptive", "--eta", 0.0005])

    def test_adaptive_steps_with_merges(self):
        self.assert_restart_matches(["--radius", 0.02, "--collisions", "merge", "--timestep", "adaptive",
                                     "--eta", 0.0005])

    def test_hierarchical_steps(self):
        # The bins from the checkpoint's accelerations (the levels' last forces summed).
        self.assert_restart_matches(["--timestep", "hierarchical", "--eta", 0.0005])

    def test_test_particles_merging(self):
        # The checkpoint keeps n_active, counted down by the active bodies merged away.
        self.assert_restart_matches(["--n-active", 40, "--radius", 0.02, "--collisions", "merge"])

    def test_test_particles_of_type_1_adaptive(self):
        self.assert_restart_matches(["--n-active", 40, "--test-particle-type", 1, "--timestep",
                                     "adaptive", "--eta", 0.0005])

    def test_t_end_is_absolute(self):
        whole, parts = self.dir / "whole", self.dir / "parts"
        common = [*BASE, "--t-end", 0.5225, "--stats-every", 7]
        nbody("run", *common, "--output-dir", whole, "-o", whole / "final.txt")
        nbody("run", *BASE, "--steps", 33, "--checkpoint-every", 11, "--stats-every", 7, "--output-dir", parts)
        # The same --t-end command run twice after the interruption: the second finds the
        # job done at t = 0.5225 and changes nothing.
        for _ in range(2):
            nbody("run", *common, "--output-dir", parts, "-o", parts / "final.txt", "--restart", parts,
                  "--checkpoint-every", 11)
        self.assertEqual((whole / "final.txt").read_bytes(), (parts / "final.txt").read_bytes())
        self.assertEqual((whole / "energy.csv").read_bytes(), (parts / "energy.csv").read_bytes())


BASE_400 = [400 if a == 256 else a for a in BASE]  # a little slower per step


class TestSignals(CliTestCase):
    def interrupt(self, sig):
        """Starts a long run, sends sig once it has logged a few rows; returns the checkpoint step."""
        out = self.dir / "run"
        args = ["run", *BASE_400, "--steps", 10**7, "--stats-every", 20, "--output-dir", out]
        proc = subprocess.Popen([EXE, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        log = out / "energy.csv"
        deadline = time.time() + 120
        while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 4):
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 128 + sig, err)
        name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
        self.assertIn(name, err)
        self.assertIn("--restart", err)
        steps = steps_of(out)
        self.assertEqual(len(steps), 1, err)
        return out, steps[0]

    def test_sigint_writes_a_checkpoint_and_the_restart_matches(self):
        out, step = self.interrupt(signal.SIGINT)
        total = step + 30
        nbody("run", *BASE_400, "--steps", total, "--stats-every", 20, "--output-dir", out,
              "--restart", "latest", "-o", out / "final.txt")
        whole = self.dir / "whole"
        nbody("run", *BASE_400, "--steps", total, "--stats-every", 20, "--output-dir", whole,
              "-o", whole / "final.txt")
        self.assertEqual((whole / "final.txt").read_bytes(), (out / "final.txt").read_bytes())
        self.assertEqual((whole / "energy.csv").read_bytes(), (out / "energy.csv").read_bytes())

    def test_sigterm_writes_a_checkpoint(self):
        self.interrupt(signal.SIGTERM)


@unittest.skipIf(h5py is None and not TOOLS_REQUIRED, "h5py is not installed")
class TestKillDuringSnapshotWrites(CliTestCase):
    def test_kill_9_leaves_every_snapshot_whole(self):
        out = self.dir / "run"
        # Small enough that the debug (sanitizer) build reaches its first snapshot quickly
        # (the run starts with an O(N^2) energy), large enough that a write takes a while.
        n = 20000
        for delay in (0.3, 0.7, 1.3, 2.1):
            proc = subprocess.Popen([EXE, "run", "--model", "uniform-cube", "-n", str(n), "--seed", "2", "--gravity",
                                     "tree", "--theta", "1.0", "--softening", "0.05", "--steps", "100000",
                                     "--snapshot-every", "1", "--output-dir", str(out), "-q"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.time() + 400
            while time.time() < deadline and not list(out.glob("snapshot_*.hdf5")):
                time.sleep(0.02)
            time.sleep(delay)
            proc.kill()  # SIGKILL: no handler runs
            proc.wait(timeout=60)
            snapshots = sorted(out.glob("snapshot_*.hdf5"))
            self.assertTrue(snapshots)
            for path in snapshots:
                with h5py.File(path, "r") as f:
                    self.assertEqual(f["PartType1/Coordinates"].shape, (n, 3), path)
                    self.assertGreater(f["Header"].attrs["MassTable"][1], 0, path)  # equal masses
                    f["PartType1/Coordinates"][-1]  # the last row is readable
            for path in out.glob("snapshot_*"):
                self.assertTrue(path.name.endswith(".hdf5"), path)
            # Leftover temporaries are hidden dot-files, never snapshot_* names.
            for stray in out.glob(".*"):
                self.assertIn(".tmp-", stray.name)


class TestOutputs(CliTestCase):
    def test_energy_log_columns_and_conservation(self):
        out = self.dir / "out"
        nbody("run", *BASE, "--steps", 50, "--stats-every", 10, "--output-dir", out)
        rows = list(csv.DictReader((out / "energy.csv").open()))
        self.assertEqual(list(rows[0].keys()), ["step", "time", "kinetic", "potential", "total", "rel_energy_error",
                                                "energy_lost", "px", "py", "pz", "Lx", "Ly", "Lz"])
        self.assertEqual([int(r["step"]) for r in rows], [0, 10, 20, 30, 40, 50])
        self.assertEqual(float(rows[0]["rel_energy_error"]), 0.0)
        for r in rows:
            self.assertAlmostEqual(float(r["kinetic"]) + float(r["potential"]), float(r["total"]), places=12)
            self.assertLess(float(r["rel_energy_error"]), 1e-3)
            self.assertLess(abs(float(r["px"])), 1e-10)
        self.assertAlmostEqual(float(rows[-1]["time"]), 0.25, places=12)
        self.assertTrue((out / "used_parameters.toml").exists())

    @unittest.skipIf(h5py is None and not TOOLS_REQUIRED, "h5py is not installed")
    def test_snapshot_dt_schedule_and_fields(self):
        out = self.dir / "out"
        nbody("run", *BASE, "--t-end", 0.1, "--snapshot-dt", 0.03, "--snapshot-precision", "float",
              "--snapshot-fields", "acceleration,potential", "--output-dir", out)
        snaps = sorted(out.glob("snapshot_*.hdf5"))
        self.assertEqual([p.name for p in snaps], [f"snapshot_{i:04d}.hdf5" for i in range(4)])
        times = []
        for p in snaps:
            with h5py.File(p, "r") as f:
                times.append(float(f["Header"].attrs["Time"]))
                self.assertEqual(f["PartType1/Coordinates"].dtype.itemsize, 4)
                self.assertEqual(f["PartType1/Accelerations"].shape, (256, 3))
                phi = f["PartType1/Potential"][:]
                self.assertTrue((phi < 0).all())
        for i, t in enumerate(times):
            self.assertGreaterEqual(t, 0.03 * i - 1e-9)
            self.assertLess(t, 0.03 * i + 0.005 + 1e-9)

    def test_checkpoints_are_pruned_to_keep(self):
        out = self.dir / "out"
        nbody("run", *BASE, "--steps", 60, "--checkpoint-every", 10, "--checkpoint-keep", 3, "--output-dir", out)
        self.assertEqual(steps_of(out), [40, 50, 60])


# The scenario of issue 33: a tree run with softening, continued with nothing but a new end.
SCENARIO = ["--model", "plummer", "-n", 300, "--seed", 7, "--gravity", "tree", "--softening", 0.01]


class TestACheckpointIsTheRun(CliTestCase):
    def first_part(self, *extra):
        parts = self.dir / "parts"
        nbody("run", *SCENARIO, "--t-end", 0.2, "--checkpoint-every", 10, "--output-dir", parts,
              "-o", parts / "final.txt", "-q", *extra)
        self.assertEqual(steps_of(parts), [10, 20])
        return parts

    def test_restart_with_only_t_end_continues_the_same_run(self):
        whole = self.dir / "whole"
        nbody("run", *SCENARIO, "--t-end", 0.3, "-o", whole / "final.txt", "-q")
        parts = self.first_part()
        (parts / "final.txt").unlink()
        # From the first checkpoint, as after an interruption there: solver, softening,
        # -o and the checkpoint cadence all come from the checkpoint.
        proc = nbody("run", "--restart", parts / "checkpoint_00000010.h5", "--t-end", 0.3)
        self.assertIn("tree-", proc.stdout)
        self.assertIn("softening = 0.01", proc.stdout)
        self.assertEqual((whole / "final.txt").read_bytes(), (parts / "final.txt").read_bytes())
        self.assertEqual(steps_of(parts), [20, 30])  # every 10 steps, --checkpoint-keep 2
        used = (parts / "used_parameters.toml").read_text()
        for line in ('model = "plummer"', "count = 300", "seed = 7", 'gravity = "tree"', "softening = 0.01"):
            self.assertIn(f"\n{line}\n", used)  # how the run began, and goes on
        self.assertIn("# Restarted from ", used)

    def test_physics_change_is_refused_then_allowed_with_override(self):
        parts = self.first_part()
        self.check_fails(["run", "--restart", parts, "--t-end", 0.3, "--softening", 0.02],
                         "nbody: error: --softening: differs from the checkpoint's 0.01; the run would not "
                         "continue the same physics (add --override to change it) (got 0.02)")
        self.check_fails(["run", "--restart", parts, "--t-end", 0.3, "--gravity", "direct", "--dt", 0.02],
                         "--dt: differs from the checkpoint's 0.01", "--gravity differ too")
        self.assertEqual(steps_of(parts), [10, 20])  # nothing written
        # The same values as the checkpoint's, output options and --threads: no refusal.
        nbody("run", "--restart", parts, "--t-end", 0.22, "--softening", 0.01, "--gravity", "tree",
              "--threads", 1, "--stats-every", 1, "-q")
        self.assertEqual(steps_of(parts), [20, 22])
        proc = nbody("run", "--restart", parts, "--t-end", 0.26, "--softening", 0.02, "--override", "--json")
        self.assertIn("restart: --softening 0.01 -> 0.02 (--override)\n", proc.stderr)
        self.assertIn("softening = 0.02", proc.stderr)
        result = json.loads(proc.stdout)
        self.assertEqual(result["softening"], 0.02)
        self.assertEqual(result["restart"]["step"], 22)
        self.assertEqual(result["restart"]["changes"],
                         [{"option": "--softening", "checkpoint": "0.01", "now": "0.02"}])
        # The next restart continues the changed run: no --override needed any more.
        nbody("run", "--restart", parts, "--t-end", 0.28, "-q")

    def test_a_config_value_that_changes_the_physics_is_refused_with_its_line(self):
        parts = self.first_part()
        config = self.write("run.toml", 'gravity = "tree"\nsoftening = 0.0\n')  # 0.0: the default
        proc = nbody("run", "--restart", parts, "--config", config, "--t-end", 0.3, check=False)
        if "built without toml++" in proc.stderr:
            self.skipTest("nbody was built without toml++")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(f"nbody: error: {config}:2: softening: differs from the checkpoint's 0.01;", proc.stderr)

    def test_source_options_are_not_used(self):
        parts = self.first_part()
        proc = nbody("run", "--restart", parts, "--t-end", 0.21, "--model", "uniform-cube", "-n", 999,
                     "--json")
        self.assertIn("restart: the bodies come from the checkpoint; not used: --model, --count", proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["n"], 300)

    def test_a_restart_without_cadence_ends_with_a_checkpoint(self):
        out = self.dir / "out"
        # --restart latest with none yet: a fresh start, which still ends with a checkpoint.
        nbody("run", *SCENARIO, "--t-end", 0.05, "--output-dir", out, "--restart", "latest", "-q")
        self.assertEqual(steps_of(out), [5])
        # Each restart goes on from the newest checkpoint: the one the last run ended with.
        for end, start, step in ((0.08, 5, 8), (0.1, 8, 10)):
            proc = nbody("run", "--restart", "latest", "--output-dir", out, "--t-end", end)
            self.assertIn(f"checkpoint_{start:08d}.h5 at step {start}, ", proc.stdout)
            self.assertEqual(steps_of(out)[-1], step)


class TestUsedParameters(CliTestCase):
    def test_bare_output_leaves_no_parameters_file(self):
        proc = subprocess.run([EXE, "run", "--model", "kepler", "--steps", "2", "-o", "final.txt", "-q"],
                              cwd=self.dir, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["final.txt"])

    def test_model_options_are_not_used_with_a_file(self):
        bodies = self.dir / "bodies.txt"
        nbody("gen", "plummer", "-n", 37, "--seed", 1, "-o", bodies)
        out = self.dir / "out"
        nbody("run", "-i", bodies, "--steps", 1, "--output-dir", out, "-q")
        used = (out / "used_parameters.toml").read_text()
        self.assertNotIn("\ncount =", used)
        self.assertIn("\n# count: not used (the bodies come from --input)\n", used)
        self.assertIn(f"\n# 37 bodies from {bodies}\n", used)
        # and it reads back
        again = json.loads(nbody("run", "--config", out / "used_parameters.toml", "--json", "-q").stdout)
        self.assertEqual(again["n"], 37)


class TestRestartErrors(CliTestCase):
    def test_missing_checkpoint(self):
        self.check_fails(["run", *BASE, "--steps", 10, "--restart", self.dir / "nope.h5"], "nope.h5")

    def test_folder_without_checkpoints(self):
        self.check_fails(["run", *BASE, "--steps", 10, "--restart", self.dir], "no checkpoint")

    def test_truncated_checkpoint(self):
        out = self.dir / "out"
        nbody("run", *BASE, "--steps", 10, "--checkpoint-every", 10, "--output-dir", out)
        path = out / "checkpoint_00000010.h5"
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        self.check_fails(["run", *BASE, "--steps", 20, "--restart", path], "checkpoint_00000010.h5")

    def test_latest_without_checkpoint_starts_fresh(self):
        out = self.dir / "out"
        proc = nbody("run", *BASE[:-1], "--steps", 5, "--output-dir", out, "--restart", "latest")  # not quiet
        self.assertIn("starting from the beginning", proc.stdout)

    def test_changed_dt_is_refused(self):
        out = self.dir / "out"
        nbody("run", *BASE, "--steps", 10, "--checkpoint-every", 10, "--output-dir", out)
        changed = [0.01 if a == 0.005 else a for a in BASE]
        self.check_fails(["run", *changed, "--steps", 20, "--output-dir", out, "--restart", "latest"],
                         "nbody: error: --dt: differs from the checkpoint's 0.005; the run would not "
                         "continue the same physics (add --override to change it) (got 0.01)")
        self.assertEqual(steps_of(out), [10])

    def test_override_needs_restart(self):
        self.check_fails(["run", *BASE, "--steps", 2, "--override"], "--override: only used with --restart")

    def test_snapshot_fields_need_snapshots(self):
        self.check_fails(["run", *BASE, "--steps", 5, "--snapshot-fields", "potential"], "--snapshot-fields")


if __name__ == "__main__":
    unittest.main()
