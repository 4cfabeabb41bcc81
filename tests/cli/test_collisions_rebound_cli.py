"""Collisions under gravity against REBOUND (issue #21): the same bodies, the same leapfrog
step, REBOUND's direct collision search with its hard-sphere and merge resolutions
(`collision="direct"`, `collision_resolve="hardsphere"` / `"merge"`, `track_energy_offset`).
Elastic bounces: nbody's |dE/E| within 1.5x of REBOUND's and second order in dt; merges:
|d(E + energy_lost)/E| within 1.2x of REBOUND's |d(E + energy_offset)/E|. Skipped with a
message when `rebound` is not installed.

Run by ctest (which sets NBODY_EXE).
"""
import json
import unittest

from test_cli import CliTestCase, nbody

try:
    import rebound
except ImportError:  # pragma: no cover - the tests say they were skipped
    rebound = None

# x y z vx vy vz m r, G = 1: a pair falling from rest, a pair on an eccentric orbit that
# grazes, and a heavy and a light body in an oblique encounter.
PAIRS = {
    "falling": [(-1 / 3, 0, 0, 0, 0, 0, 1, 0.1), (2 / 3, 0.05, 0, 0, 0, 0, 0.5, 0.07)],
    "orbit": [(-0.2, 0, 0, 0, -0.3, 0, 1, 0.1), (0.4, 0, 0, 0, 0.6, 0, 0.5, 0.05)],
    "oblique": [(0, 0, 0, 0, 0, 0, 2, 0.15), (1, 0.1, 0, -0.5, 0.8, 0, 0.3, 0.05)],
}


def rebound_run(bodies, model, dt, steps):
    sim = rebound.Simulation()
    sim.integrator = "leapfrog"
    sim.dt = dt
    sim.collision = "direct"
    sim.collision_resolve = "merge" if model == "merge" else "hardsphere"
    sim.track_energy_offset = 1
    for x, y, z, vx, vy, vz, m, r in bodies:
        sim.add(m=m, x=x, y=y, z=z, vx=vx, vy=vy, vz=vz, r=r)
    e0 = sim.energy()
    sim.steps(steps)
    return abs((sim.energy() - e0) / e0)  # energy() includes the offset of the merges


@unittest.skipIf(rebound is None, "rebound is not installed (pip install rebound): no "
                                  "comparison with REBOUND's collisions")
class TestCollisionsAgainstRebound(CliTestCase):
    def nbody_run(self, bodies, model, dt, steps):
        start = self.write("pair.txt", "".join(" ".join(repr(float(v)) for v in b) + "\n"
                                               for b in bodies))
        j = json.loads(nbody("run", "-i", start, "--collisions", model, "--dt", dt, "--steps",
                             steps, "-q", "--json").stdout)
        return j["energy_drift"], j["collisions"]["energy_balance"], j["collisions"]["contacts"]

    def test_elastic_bounces_like_rebound_and_at_second_order(self):
        for name, bodies in PAIRS.items():
            drifts = []
            for dt in (1e-3, 1e-4):
                steps = round(10 / dt)
                drift, balance, contacts = self.nbody_run(bodies, "bounce", dt, steps)
                theirs = rebound_run(bodies, "bounce", dt, steps)
                print(f"[ measured ] {name} dt {dt:g}: |dE/E| nbody {drift:.3e}, REBOUND "
                      f"{theirs:.3e} ({contacts} contacts)")
                self.assertGreater(contacts, 0, name)
                self.assertLess(drift, 1.5 * theirs, f"{name} dt {dt}")
                drifts.append(drift)
            self.assertGreater(drifts[0] / drifts[1], 10 ** 1.8, name)  # second order: 100x

    def test_merges_book_their_energy_like_rebound(self):
        for name in ("falling", "orbit"):
            for dt in (1e-3, 1e-4):
                steps = round(5 / dt)
                _, balance, _ = self.nbody_run(PAIRS[name], "merge", dt, steps)
                theirs = rebound_run(PAIRS[name], "merge", dt, steps)
                print(f"[ measured ] {name} merge dt {dt:g}: |d(E + lost)/E| nbody {balance:.3e}, "
                      f"REBOUND |d(E + offset)/E| {theirs:.3e}")
                self.assertLess(balance, 1.2 * theirs, f"{name} dt {dt}")


if __name__ == "__main__":
    unittest.main()
