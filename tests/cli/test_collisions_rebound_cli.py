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

    def velocities(self, bodies, restitution, iterations, dt, steps):
        """Final velocities of nbody and REBOUND without gravity."""
        start = self.write("bodies.txt", "".join(" ".join(repr(float(v)) for v in b) + "\n"
                                                 for b in bodies))
        out = self.dir / "end.txt"
        nbody("run", "-i", start, "--collisions", "bounce", "--restitution", restitution,
              "--collision-iterations", iterations, "--G", 0, "--dt", dt, "--steps", steps, "-q",
              "-o", out)
        mine = [[float(v) for v in line.split()[3:6]] for line in out.read_text().splitlines()
                if line.strip() and not line.startswith("#")]
        sim = rebound.Simulation()
        sim.integrator = "leapfrog"
        sim.dt = dt
        sim.G = 0
        sim.collision = "direct"
        sim.collision_resolve = "hardsphere"
        if restitution != 1:
            sim.coefficient_of_restitution = lambda _sim, _v: restitution
        for x, y, z, vx, vy, vz, m, r in bodies:
            sim.add(m=m, x=x, y=y, z=z, vx=vx, vy=vy, vz=vz, r=r)
        sim.steps(steps)
        theirs = [(p.vx, p.vy, p.vz) for p in sim.particles]
        return max(abs(a - b) for m, t in zip(mine, theirs) for a, b in zip(m, t))

    def test_textbook_bounces_without_gravity(self):
        # unequal masses head-on, elastic and e = 0.5: the same velocities to rounding
        pair = [(-0.5, 0, 0, 1, 0, 0, 2, 0.1), (0.5, 0, 0, -0.5, 0, 0, 1, 0.05)]
        for e in (1.0, 0.5):
            self.assertLess(self.velocities(pair, e, 1, 1e-3, 1000), 1e-12, e)
        # Newton's cradle: the first ball's momentum goes through to the last one
        cradle = [(-0.8, 0, 0, 1, 0, 0, 1, 0.1)] + [(-0.4 + 0.2 * k, 0, 0, 0, 0, 0, 1, 0.1)
                                                    for k in range(4)]
        for iterations in (1, 8):
            self.assertLess(self.velocities(cradle, 1.0, iterations, 1e-3, 1000), 1e-12)
        # oblique: the line of centres is taken half a step apart in the two codes (nbody in
        # the middle of its drift, REBOUND after its step): first order in dt
        oblique = [(-0.5, 0.05, 0, 1, 0, 0, 2, 0.1), (0.5, 0, 0, -0.5, 0.1, 0, 1, 0.05)]
        coarse = self.velocities(oblique, 1.0, 1, 1e-3, 1000)
        fine = self.velocities(oblique, 1.0, 1, 1e-4, 10000)
        print(f"[ measured ] oblique bounce, |dv| nbody - REBOUND: {coarse:.2e} at dt 1e-3, "
              f"{fine:.2e} at dt 1e-4")
        self.assertLess(coarse, 3e-3)
        self.assertLess(fine, coarse / 5)

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
