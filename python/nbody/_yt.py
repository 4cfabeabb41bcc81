"""yt on nbody's snapshots: the domain from the bodies, so plots need no arguments."""

import numpy as _np


def yt_load(path, padding=0.05, **kwargs):
    """``yt.load(path)`` for an HDF5 snapshot of nbody, with the domain around the bodies.

    yt's GADGET and SWIFT readers put a snapshot's domain at [0, BoxSize]^3; nbody's bodies
    sit around the origin (docs/snapshots.md), so ``yt.load`` alone cannot project them.
    This reads the positions with nbody's own reader and passes yt a cube around them
    (their largest extent, ``padding`` of it added on each side) as ``bounding_box``; other
    keyword arguments go to ``yt.load``. Then ``yt.ParticleProjectionPlot(ds, "z")`` works
    as it is.
    """
    import yt

    from . import load

    if not padding >= 0:
        raise ValueError(f"yt_load: padding must be >= 0 (got {padding!r})")
    sim = load(str(path))
    if len(sim) == 0:
        raise ValueError(f"yt_load: {path} has no bodies")
    xyz = _np.stack([sim.x, sim.y, sim.z])
    lo, hi = xyz.min(axis=1), xyz.max(axis=1)
    half = 0.5 * max(float((hi - lo).max()), 1e-300) * (1 + 2 * padding)
    centre = 0.5 * (lo + hi)
    bbox = [[float(c - half), float(c + half)] for c in centre]
    return yt.load(str(path), bounding_box=bbox, **kwargs)
