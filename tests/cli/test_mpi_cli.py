"""Several MPI ranks on the CPU (issue 11): `mpirun -np P nbody run` gives the same result as
one process, and only rank 0 writes and talks.

Each body's force is computed by one rank (a slice of the direct sum's target bodies, or the
tree's walk groups of a slice of the bodies), the shares summed with exact zeros elsewhere,
so the results are bit for bit those of one process: the final files are compared as bytes.
Skipped (with the reason) when mpirun or an MPI build is missing.
"""
import json
import os
import shutil
import subprocess
import unittest

from test_cli import EXE, CliTestCase, nbody

MPIRUN = shutil.which("mpirun")
# The sanitizer build: Open MPI keeps allocations until exit that LeakSanitizer reports as
# leaks (its own, not nbody's), so leak detection is off for the ranks; the rest of ASan and
# UBSan stay on.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMP_NUM_THREADS="1", OMPI_MCA_rmaps_base_oversubscribe="1",
           ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


def built_with_mpi():
    proc = subprocess.run([EXE, "--version"], capture_output=True, text=True)
    return "mpi: yes" in proc.stdout


def mpirun(ranks, *args, check=True):
    proc = subprocess.run([MPIRUN, "--oversubscribe", "-np", str(ranks), EXE, *map(str, args)],
                          capture_output=True, text=True, timeout=600, env=ENV)
    if check and proc.returncode != 0:
        raise AssertionError(f"mpirun -np {ranks} nbody {' '.join(map(str, args))} failed:\n{proc.stderr}")
    return proc


BASE = ["--model", "plummer", "-n", 1500, "--seed", 7, "--softening", 0.02, "--dt", 0.005, "--steps", 30, "-q"]


@unittest.skipIf(MPIRUN is None, "mpirun not found (scripts/setup.sh installs openmpi-bin)")
@unittest.skipIf(not built_with_mpi(), "nbody was built without MPI (libopenmpi-dev)")
class TestRanksEqualOneProcess(CliTestCase):
    def assert_same_as_one_process(self, extra, steps=30):
        args = [*BASE[:-3], "--steps", steps, "-q", *extra]
        one = self.dir / "one.txt"
        nbody("run", *args, "-o", one)
        for ranks in (1, 2, 4):
            out = self.dir / f"ranks{ranks}.txt"
            mpirun(ranks, "run", *args, "-o", out)
            self.assertEqual(one.read_bytes(), out.read_bytes(), f"{extra}: {ranks} ranks differ from one process")

    def test_direct_sum(self):
        self.assert_same_as_one_process(["--gravity", "direct"])

    def test_scalar_direct_sum(self):
        self.assert_same_as_one_process(["--gravity", "direct", "--kernel", "scalar"], steps=5)

    def test_tree_with_quadrupoles(self):
        self.assert_same_as_one_process(["--gravity", "tree", "--theta", 0.6, "--quadrupole"])

    def test_merging_collisions(self):
        self.assert_same_as_one_process(["--radius", 0.02, "--collisions", "merge"])

    def test_adaptive_time_steps(self):
        # Every rank takes the same bins from the same summed accelerations and sums its
        # share of each active set.
        self.assert_same_as_one_process(["--gravity", "tree", "--timestep", "adaptive", "--eta", 0.0002],
                                        steps=10)

    def test_only_rank_0_writes_and_talks(self):
        out = self.dir / "out"
        proc = mpirun(3, "run", *BASE[:-1], "--json", "--stats-every", 10, "--snapshot-every", 15,
                      "--checkpoint-every", 15, "--output-dir", out)
        result = json.loads(proc.stdout)  # one JSON object: rank 0's
        self.assertEqual(result["steps"], 30)
        self.assertEqual(proc.stderr.count("nbody run:"), 1)  # rank 0's summary (stderr beside --json)
        self.assertIn("softening = 0.02, on 3 MPI ranks\n", proc.stderr)  # the header says so
        rows = (out / "energy.csv").read_text().splitlines()
        self.assertEqual(len(rows), 1 + 4)  # header + steps 0, 10, 20, 30: one writer
        self.assertEqual(sorted(p.name for p in out.glob("checkpoint_*")),
                         ["checkpoint_00000015.h5", "checkpoint_00000030.h5"])

    def test_restart_under_mpi_matches(self):
        whole, parts = self.dir / "whole", self.dir / "parts"
        common = [*BASE[:-3], "--stats-every", 10, "-q"]
        nbody("run", *common, "--steps", 40, "--output-dir", whole, "-o", whole / "final.txt")
        mpirun(2, "run", *common, "--steps", 20, "--checkpoint-every", 20, "--output-dir", parts)
        mpirun(4, "run", *common, "--steps", 40, "--output-dir", parts, "--restart", "latest",
               "-o", parts / "final.txt")
        self.assertEqual((whole / "final.txt").read_bytes(), (parts / "final.txt").read_bytes())
        self.assertEqual((whole / "energy.csv").read_bytes(), (parts / "energy.csv").read_bytes())

    def test_other_commands_refuse_several_ranks(self):
        proc = mpirun(2, "gen", "plummer", "-n", 10, "-o", self.dir / "x.txt", check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("runs as one process", proc.stderr)

    def test_scaling_benchmark(self):
        proc = mpirun(2, "bench", "scaling-mpi", "-n", 1024, "--seconds", 0.05, "--json")
        rows = json.loads(proc.stdout[proc.stdout.index("["):])
        self.assertEqual({(r["algorithm"], r["scaling"], r["ranks"]) for r in rows},
                         {(a, s, p) for a in ("direct", "tree") for s in ("strong", "weak") for p in (1, 2)})
        for r in rows:
            self.assertGreater(r["ms_per_step"], 0)
            self.assertGreater(r["efficiency"], 0)


if __name__ == "__main__":
    unittest.main()
