"""The REBOUND-style API: an empty Simulation(), add() by keywords and orbital elements
(checked against REBOUND itself where it is installed), sim.particles, move_to_com()."""
import numpy as np
import pytest

import nbody


def build(module):
    """The same system through either module's API."""
    sim = module.Simulation()
    sim.add(m=1.0)
    sim.add(m=1e-3, a=1, e=0.1, inc=0.2, Omega=0.3, omega=0.4, f=0.5)
    sim.add(m=1e-3, a=2, e=0.3, primary=sim.particles[1], M=2.3)
    sim.add(m=1e-4, a=-2, e=1.5, inc=0.1, f=0.3)  # hyperbolic, about the centre of mass
    sim.add(m=1e-4, P=3, e=0.2, M=0.1, primary=sim.particles[0])
    sim.add(m=0.5, x=3, vy=0.2, z=0.1, vz=-0.01)
    sim.move_to_com()
    return np.array([[p.x, p.y, p.z, p.vx, p.vy, p.vz, p.m] for p in sim.particles])


def test_add_by_keywords_matches_rebound():
    rebound = pytest.importorskip("rebound", reason="REBOUND (pip install rebound) is not installed")
    ours, theirs = build(nbody), build(rebound)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-13)


def test_add_by_keywords_without_rebound():
    # A circular orbit: |r| = a, |v| = sqrt(G (M + m) / a), about the primary.
    sim = nbody.Simulation(G=2.0)
    sim.add(m=1.0, x=1, vy=0.5)
    sim.add(m=0.01, a=0.5, primary=0, f=np.pi / 2)
    p0, p1 = sim.particles
    r = np.subtract(p1.xyz, p0.xyz)
    v = np.subtract(p1.vxyz, p0.vxyz)
    assert np.linalg.norm(r) == pytest.approx(0.5, rel=1e-14)
    assert np.linalg.norm(v) == pytest.approx(np.sqrt(2.0 * 1.01 / 0.5), rel=1e-14)
    assert np.dot(r, v) == pytest.approx(0, abs=1e-14)
    build_ids = list(sim.ids)
    assert build_ids == [1, 2] and p1.id == 2
    sim.move_to_com()
    np.testing.assert_allclose(sim.diagnostics()["com"], 0, atol=1e-15)
    np.testing.assert_allclose(sim.momentum(), 0, atol=1e-15)


def test_empty_simulation():
    sim = nbody.Simulation(dt=0.001)
    assert len(sim) == 0 and len(sim.particles) == 0 and sim.dt == 0.001
    sim.move_to_com()  # nothing to move
    with pytest.raises(nbody.Error, match=r"^evolve: the simulation has no bodies"):
        sim.evolve(1.0)
    sim.add(m=1)
    sim.add(m=1e-3, a=1)
    sim.evolve(0.1)
    assert sim.time == 0.1


def test_the_arrays_api_still_works():
    sim = nbody.Simulation()
    assert sim.add([1, 0, 0]) == 1  # mass 1, at rest
    ids = sim.add([[0, 1, 0], [0, 2, 0]], velocity=[0.1, 0, 0], mass=[0.5, 0.25], radius=0.01)
    assert list(ids) == [2, 3]
    np.testing.assert_array_equal(sim.masses, [1, 0.5, 0.25])
    sim.add(sim.particles[1])  # a copy of a body, with a new id
    assert sim.particles[-1].xyz == [0, 1, 0] and sim.particles[-1].id == 4


def test_particles_are_views():
    sim = nbody.Simulation()
    sim.add(m=1.0)
    sim.add(m=1e-3, x=1, vy=1)
    p = sim.particles[1]
    p.x = 2.0
    p.vxyz = [0, 0.5, 0]
    assert sim.x[1] == 2.0 and sim.vy[1] == 0.5
    sim.masses[0] = 3.0
    assert sim.particles[0].m == 3.0
    assert [q.index for q in sim.particles[::-1]] == [1, 0]
    p.m = -1
    with pytest.raises(nbody.Error, match=r"^masses\[1\]: must be finite and > 0 \(got -1\)$"):
        sim.step()
    p.m = 1e-3
    sim.remove(0)
    with pytest.raises(IndexError):
        p.x
    with pytest.raises(IndexError, match=r"particles\[5\]: out of range \(1 bodies\)"):
        sim.particles[5]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(m=1, a=1, e=1), nbody.Error, r"^add: e: a parabolic orbit \(e = 1\) has no semi-major axis"),
    (dict(m=1, a=1, x=1), TypeError, "either cartesian coordinates"),
    (dict(m=1, a=1, f=0, M=0), TypeError, "f .* or M .*not both"),
    (dict(m=1, a=-1, e=0.5), nbody.Error, r"^add: a: a bound orbit \(e < 1\) needs a > 0 \(got -1\)$"),
    (dict(m=1, a=1, e=-0.1), nbody.Error, r"^add: e: the eccentricity must be >= 0"),
    (dict(m=1, a=1, primary="sun"), TypeError, "primary expects a body"),
    (dict(m=1, hash=3), TypeError, "unexpected keyword argument 'hash'"),
    (dict(m=-1, x=1), nbody.Error, r"^mass\[0\]: must be finite and > 0 \(got -1\)$"),
])
def test_add_errors(kwargs, error, message):
    sim = nbody.Simulation()
    sim.add(m=1.0)
    with pytest.raises(error, match=message):
        sim.add(**kwargs)
    assert len(sim) == 1


def test_errors_speak_python():
    sim = nbody.Simulation()
    sim.add(m=1)
    sim.add(m=1, x=1)
    with pytest.raises(nbody.Error, match=r"^evolve: t must be after the current time 0 \(got -1\)$"):
        sim.evolve(-1)
    with pytest.raises(nbody.Error, match=r"^integrator: needs gravity='direct' "):
        sim.set(gravity="tree", integrator="ias15")
    assert "--" not in nbody._nbody._python_wording("--kernel: GPU only (--device gpu); CPU kernels")
