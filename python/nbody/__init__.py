"""nbody: gravitational N-body simulation, the C++ library driven from Python.

    import nbody
    sim = nbody.generate("plummer", n=2000, seed=1, softening=0.01, gravity="tree")
    e0 = sim.energy().total
    sim.evolve(1.0)                      # steps of sim.dt; releases the GIL
    print(abs(sim.energy().total - e0) / abs(e0))
    x, y = sim.x, sim.y                  # numpy views of the bodies (no copy, on the CPU)
    sim.save("cluster.csv")

The module wraps the library itself (nbody::Simulation, the readers and writers, the
generators), not the command line; every run option of ``nbody run`` is a property of
Simulation, and a bad value raises ``nbody.Error`` (a ValueError) with the message the
command line prints. See docs/python.md.
"""

from ._nbody import (
    Energy,
    Error,
    FileError,
    Simulation,
    __version__,
    build_info,
    collision_models,
    formats,
    generate,
    integrators,
    load,
    load_checkpoint,
    model_options,
    models,
)
from ._nbody import _launcher_ranks
from ._yt import yt_load


class RanksWarning(UserWarning):
    """This Python process is one of several started by an MPI launcher (mpirun, srun)."""


if _launcher_ranks() > 1:
    import warnings as _warnings

    # Each process runs its own simulation: the module does not spread one over the ranks
    # (docs/python.md). Right for a sweep (a seed per rank), a surprise otherwise.
    _warnings.warn(
        f"nbody: this is one of {_launcher_ranks()} processes started by mpirun (or srun), and "
        "each runs its own simulations: the Python module does not share one simulation "
        f"between ranks. For one simulation on {_launcher_ranks()} ranks run "
        f"`mpirun -np {_launcher_ranks()} nbody run ...` (docs/distributed.md); for independent "
        "runs (a parameter sweep: a seed and an output per rank) silence this before the import "
        "with warnings.filterwarnings('ignore', message='nbody: this is one of').",
        RanksWarning,
        stacklevel=2,
    )

__all__ = [
    "Energy",
    "Error",
    "FileError",
    "RanksWarning",
    "Simulation",
    "__version__",
    "build_info",
    "collision_models",
    "formats",
    "generate",
    "integrators",
    "load",
    "load_checkpoint",
    "model_options",
    "models",
    "yt_load",
]
