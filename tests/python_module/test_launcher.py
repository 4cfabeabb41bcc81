"""Python under mpirun (issue "A billion bodies on two GPUs", item 4): the module runs every
simulation in one process, so several processes started by an MPI launcher each run their
own. That is right for a sweep and a surprise otherwise: importing nbody warns (RanksWarning)
and says what to run instead; without a launcher it says nothing."""
import os
import subprocess
import sys

import nbody

LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "PMIX_RANK")


def import_nbody(**launcher):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    env.update(launcher)
    return subprocess.run([sys.executable, "-c", "import nbody"], capture_output=True, text=True,
                          timeout=120, env=env)


def test_several_launched_processes_are_told_what_each_runs():
    proc = import_nbody(OMPI_COMM_WORLD_SIZE="3")
    assert proc.returncode == 0, proc.stderr
    assert "RanksWarning" in proc.stderr, proc.stderr
    assert "one of 3 processes" in proc.stderr and "mpirun -np 3 nbody run" in proc.stderr, proc.stderr
    slurm = import_nbody(PMI_SIZE="2")  # MPICH's and srun's variable
    assert "one of 2 processes" in slurm.stderr, slurm.stderr


def test_one_process_or_one_rank_is_not_warned():
    for launcher in ({}, {"OMPI_COMM_WORLD_SIZE": "1"}):
        proc = import_nbody(**launcher)
        assert proc.returncode == 0, proc.stderr
        assert "RanksWarning" not in proc.stderr, (launcher, proc.stderr)


def test_the_warning_can_be_silenced_for_a_sweep():
    assert issubclass(nbody.RanksWarning, UserWarning)
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARIABLES}
    env["OMPI_COMM_WORLD_SIZE"] = "4"
    # What the warning and docs/python.md say to write before the import.
    code = "import warnings; warnings.filterwarnings('ignore', message='nbody: this is one of'); import nbody"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 0 and "RanksWarning" not in proc.stderr, proc.stderr
