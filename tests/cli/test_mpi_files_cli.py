"""Files of runs on several MPI ranks on the CPU (issues 35 and 36): HDF5 results and checkpoints
written by every rank into one file, restarts on any number of ranks (byte for byte on as many
as wrote it), a rank that cannot write stops every rank and leaves no file, and MPI exchanges in
rounds. Split from test_mpi_cli.py, whose helpers it uses. Skipped (with the reason) when mpirun
or an MPI build is missing.
"""
import os
import subprocess
import unittest

import test_mpi_cli as mpi
from test_cli import EXE, CliTestCase, nbody


@unittest.skipIf(mpi.MPIRUN is None, "mpirun not found (scripts/setup.sh installs openmpi-bin)")
@unittest.skipIf(not mpi.built_with_mpi(), "nbody was built without MPI (libopenmpi-dev)")
class TestRanksWriteFiles(CliTestCase):
    def test_hdf5_result_written_in_turn(self):
        # -o FILE.hdf5 (and --every) of a decomposed run: every rank writes its own bodies into
        # the one file together, as snapshots are, not gathered on rank 0; the bodies come in
        # the ranks' order. By id, one process's result (the ring's sums: within 1e-12).
        try:
            import h5py
            import numpy as np
        except ImportError as e:
            if os.environ.get("NBODY_PYTHON_TOOLS_REQUIRED") == "1":
                raise
            self.skipTest(f"h5py or numpy is not importable ({e}); scripts/setup.sh installs them in .venv")
        args = [*mpi.BASE[:-3], "--steps", 10, "-q", "--gravity", "direct"]
        one = self.dir / "one.hdf5"
        nbody("run", *args, "-o", one)

        def by_id(path):
            with h5py.File(path, "r") as f:
                g = f["PartType1"]
                ids = g["ParticleIDs"][:]
                order = np.argsort(ids)
                return ids[order], g["Coordinates"][:][order], g["Velocities"][:][order]
        ids_one, x_one, v_one = by_id(one)
        for ranks in (2, 3):
            out = self.dir / f"ranks{ranks}.hdf5"
            mpi.mpirun(ranks, "run", *args, "-o", out, "--every", 5)
            for path in (out, self.dir / f"ranks{ranks}_000005.hdf5"):
                self.assertTrue(path.exists(), path)
            ids, x, v = by_id(out)
            np.testing.assert_array_equal(ids, ids_one)
            self.assertLessEqual(np.abs(x - x_one).max(), 1e-12, f"{ranks} ranks")
            self.assertLessEqual(np.abs(v - v_one).max(), 1e-12, f"{ranks} ranks")

    def test_checkpoint_written_in_turn_restarts_on_any_number_of_ranks(self):
        # A decomposed run writes its checkpoints with every rank writing its own bodies into
        # the one file together (no gather); the restart reads each rank's rows alone
        # (read_checkpoint_share), or the whole file on one process.
        args = ["--model", "plummer", "-n", 600, "--seed", 7, "--softening", 0.02, "--dt", 0.005, "-q",
                "--gravity", "direct", "--stats-every", 10]
        first, full = self.dir / "first", self.dir / "full"
        mpi.mpirun(2, "run", *args, "--steps", 20, "--checkpoint-every", 20, "--output-dir", first)
        checkpoint = first / "checkpoint_00000020.h5"
        mpi.mpirun(2, "run", *args, "--steps", 40, "--output-dir", full, "-o", full / "final.csv")
        expected = mpi.numbers(full / "final.csv")
        self.assertEqual(len(expected), 600)
        self.assertRegex(nbody("info", checkpoint).stdout, r"bodies +600\n")  # any reader of a checkpoint
        for ranks in (1, 2, 3):
            out = self.dir / f"restart{ranks}"
            mpi.mpirun(ranks, "run", *args, "--steps", 40, "--restart", checkpoint, "--output-dir", out,
                   "-o", out / "final.csv")
            # Several ranks gather their bodies in id order; one process keeps the file's order
            # (the ranks' that wrote it): the rows compared by id.
            got = sorted(mpi.numbers(out / "final.csv"), key=lambda row: row[-1])
            self.assertEqual([row[-1] for row in got], [row[-1] for row in expected], f"{ranks} ranks: ids")
            # The direct sum on any number of ranks adds the same terms in another order.
            largest = max(abs(x - y) for u, v in zip(got, expected) for x, y in zip(u, v))
            self.assertLessEqual(largest, 1e-12, f"{ranks} ranks")
            total = mpi.numbers(out / "energy.csv")[-1][4]  # step, time, kinetic, potential, total
            self.assertLessEqual(abs(total - mpi.numbers(full / "energy.csv")[-1][4]), 1e-12, f"{ranks} ranks")
        # On other counts of ranks the decomposition is a fresh one (the ring adds its blocks in
        # another order): within 1e-12, asserted above. On as many ranks as wrote it, byte for
        # byte: test_restart_on_as_many_ranks_is_the_same_run_byte_for_byte.

    def test_restart_on_as_many_ranks_is_the_same_run_byte_for_byte(self):
        # A decomposed CPU run repeats itself byte for byte at fixed P (its cuts weigh bodies by
        # count for the direct sum, by interactions for the tree, never by time). Its checkpoint
        # keeps the rows each rank wrote, the cuts and every body's cost: restarted on as many
        # ranks, each takes back its own rows in their order and the cuts, so the run goes on
        # as if it had never stopped. (Without them the restart cut anew, the bodies arrived in
        # another order, and the files differed in the last digits.)
        # Hierarchical time steps too (each step starts with the cut and the migration).
        for gravity, steps in (("direct", "fixed"), ("tree", "fixed"), ("tree", "adaptive")):
            args = ["--model", "plummer", "-n", 600, "--seed", 7, "--softening", 0.02, "--dt", 0.005,
                    "-q", "--gravity", gravity, "--stats-every", 10, "--timestep", steps]
            first, full, again = (self.dir / f"{name}-{gravity}-{steps}" for name in ("first", "full", "again"))
            mpi.mpirun(2, "run", *args, "--steps", 20, "--checkpoint-every", 20, "--output-dir", first)
            mpi.mpirun(2, "run", *args, "--steps", 40, "--output-dir", full, "-o", full / "final.csv")
            mpi.mpirun(2, "run", *args, "--steps", 40, "--restart", first / "checkpoint_00000020.h5",
                   "--output-dir", again, "-o", again / "final.csv")
            self.assertEqual((again / "final.csv").read_bytes(), (full / "final.csv").read_bytes(), gravity)
            last = lambda path: path.read_text().splitlines()[-1]
            self.assertEqual(last(again / "energy.csv"), last(full / "energy.csv"), gravity)

    def test_unwritable_checkpoint_on_one_rank_leaves_no_file(self):
        # Rank 1 alone may not write past the file's first 512 bytes (ulimit -f 1, SIGXFSZ
        # ignored: the write fails with "File too large"): its rows fail after rank 0 wrote its
        # own; both ranks stop with the message, and no checkpoint or temporary is left.
        out = self.dir / "out"
        args = ["run", "--model", "plummer", "-n", 400, "--seed", 7, "--dt", 0.005, "--softening", 0.02,
                "--steps", 10, "--checkpoint-every", 5, "--output-dir", out, "-q"]
        line = " ".join(f"'{a}'" for a in [EXE, *map(str, args)])
        # Shared memory between the ranks needs a file of its own (ftruncate): TCP instead.
        proc = subprocess.run([mpi.MPIRUN, "--oversubscribe", "--mca", "btl", "self,tcp", "-np", "1", EXE, *map(str, args), ":", "-np", "1",
                               "sh", "-c", f"trap '' XFSZ; ulimit -f 1; exec {line}"],
                              capture_output=True, text=True, timeout=600, env=mpi.ENV)
        self.assertNotEqual(proc.returncode, 0, proc.stderr)
        errors = [l for l in proc.stderr.splitlines() if l.startswith("nbody: error: ")]
        self.assertEqual(len(errors), 2, proc.stderr)  # every rank says it, the same words
        self.assertEqual(errors[0], errors[1])
        self.assertIn(f"{out / 'checkpoint_00000005.h5'}: /Checkpoint/", errors[0])
        self.assertIn("(File too large)", errors[0])
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["used_parameters.toml"])

    def test_host_exchanges_go_in_rounds(self):
        # MPI's counts are int: exchanges over 2 GiB (a 2^30-body run's checkpoint) go in rounds
        # of at most 1 GiB. NBODY_MPI_ROUND_BYTES makes the rounds small: the same files, byte
        # for byte, from thousands of rounds; a value that is not a number of bytes is refused.
        args = ["run", *mpi.BASE, "--gravity", "tree", "-o"]
        mpi.mpirun(3, *args, self.dir / "one_round.txt")
        small = dict(mpi.ENV, NBODY_MPI_ROUND_BYTES="100")
        proc = subprocess.run([mpi.MPIRUN, "--oversubscribe", "-np", "3", EXE, *map(str, args), self.dir / "rounds.txt"],
                              capture_output=True, text=True, timeout=600, env=small)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((self.dir / "one_round.txt").read_bytes(), (self.dir / "rounds.txt").read_bytes())
        bad = subprocess.run([mpi.MPIRUN, "--oversubscribe", "-np", "2", EXE, *map(str, args), self.dir / "x.txt"],
                             capture_output=True, text=True, timeout=600, env=dict(mpi.ENV, NBODY_MPI_ROUND_BYTES="0"))
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("NBODY_MPI_ROUND_BYTES: must be a whole number of bytes from 1 to 2^30 (got 0)", bad.stderr)
