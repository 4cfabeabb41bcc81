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
from ._yt import yt_load

__all__ = [
    "Energy",
    "Error",
    "FileError",
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
