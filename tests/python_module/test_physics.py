"""Physics through Python: the Kepler orbit and the figure-eight (values in
docs/reference-values.md, measured with REBOUND), tree against direct sum, conservation."""
import math

import numpy as np
import pytest

import nbody
from conftest import relative_errors

FIGURE_EIGHT_PERIOD = 6.32591398


def test_kepler_orbit_returns_after_one_period_with_bounded_energy_error():
    period = 2 * math.pi  # a = 1, G (m1 + m2) = 1
    sim = nbody.generate("kepler", e=0.5, dt=period / 1000)
    assert sim.n == 2
    start = sim.positions
    e0 = sim.energy().total
    assert e0 == pytest.approx(-0.125, rel=1e-12)  # -G m1 m2 / (2a) with m1 = m2 = 1/2
    worst = 0.0
    for _ in range(10):  # ten orbits, energy sampled 100 times per orbit
        for _ in range(100):
            sim.step(10)
            worst = max(worst, abs(sim.energy().total - e0) / abs(e0))
    assert sim.time == pytest.approx(10 * period, rel=1e-12)
    assert worst < 1.2e-4  # REBOUND: 1.07e-4 at dt = P/1000
    # Back at pericentre after ten periods; the leapfrog's phase error is ~9e-4 per orbit.
    assert np.abs(sim.positions - start).max() < 10 * 1e-3
    np.testing.assert_allclose(sim.angular_momentum(), nbody.generate("kepler", e=0.5).angular_momentum(),
                               rtol=1e-12)


def test_figure_eight_returns_to_its_start_after_one_period():
    # Chenciner & Montgomery (2000), Simó's numbers, built here from arrays.
    r1 = np.array([0.97000436, -0.24308753, 0.0])
    v3 = np.array([-0.93240737, -0.86473146, 0.0])
    positions = np.array([r1, -r1, np.zeros(3)])
    velocities = np.array([-v3 / 2, -v3 / 2, v3])
    sim = nbody.Simulation(positions, velocities, np.ones(3), dt=FIGURE_EIGHT_PERIOD / 1000)
    e0 = sim.energy()
    assert e0.total == pytest.approx(-1.2871419918, rel=1e-9)
    sim.evolve(FIGURE_EIGHT_PERIOD)
    assert sim.time == FIGURE_EIGHT_PERIOD  # evolve lands exactly on t
    assert sim.steps_done == 1000
    assert np.abs(sim.positions - positions).max() < 2.5e-4  # REBOUND: 2.0e-4 at T/1000
    assert abs(sim.energy().total - e0.total) / abs(e0.total) < 2e-9
    np.testing.assert_allclose(sim.angular_momentum(), 0, atol=1e-12)


def test_generated_figure_eight_matches_the_reference():
    sim = nbody.generate("figure-eight")
    assert sim.energy().total == pytest.approx(-1.2871419918, rel=1e-9)


def test_tree_forces_agree_with_the_direct_sum():
    direct = nbody.generate("plummer", n=4000, seed=3)
    tree = direct.copy()
    tree.gravity = "tree"
    tree.theta = 0.5
    assert tree.solver.startswith("tree")
    errors = relative_errors(tree.accelerations(), direct.accelerations())
    assert np.median(errors) < 1e-2  # REBOUND: median 1.4e-3 at theta 0.5
    assert np.percentile(errors, 99) < 5e-2
    tree.quadrupole = True
    errors_quadrupole = relative_errors(tree.accelerations(), direct.accelerations())
    assert np.median(errors_quadrupole) < np.median(errors)
    tree.theta = 0.0  # theta 0 opens every cell: the direct sum (in float)
    np.testing.assert_allclose(tree.accelerations(), direct.accelerations(), rtol=1e-4, atol=1e-6)


def test_tree_opening_criteria():
    direct = nbody.generate("plummer", n=4000, seed=3, softening=0.01)
    tree = direct.copy()
    tree.gravity = "tree"
    for mac in ("bmax", "relative"):
        tree.mac = mac
        tree.alpha = 0.002
        assert tree.options["mac"] == mac
        assert tree.solver.endswith(mac)
        errors = relative_errors(tree.accelerations(), direct.accelerations())
        assert np.median(errors) < 1e-2


def test_the_seeds_tree_build_gives_the_same_tree_and_forces():
    morton = nbody.generate("plummer", n=3000, seed=7, softening=0.01, gravity="tree")
    insertion = morton.copy()
    insertion.tree_build = "insertion"
    assert insertion.options["tree_build"] == "insertion"
    assert insertion.solver.endswith("insertion")
    # the same cells and tree order (tree_insertion_build.cpp): the same bits
    np.testing.assert_array_equal(insertion.accelerations(), morton.accelerations())
    morton.step(5)
    insertion.step(5)
    np.testing.assert_array_equal(insertion.positions, morton.positions)


def test_the_seeds_collision_search_finds_the_grids_contacts():
    # isolated overlapping pairs of several sizes (in a body of several contacts at once the
    # CPU's passes take the pairs in each search's own order, and may end elsewhere)
    grid = nbody.Simulation(G=0.0, collisions="merge", dt=1e-3)
    rng = np.random.default_rng(4)
    for k in range(60):
        r = 0.02 * 10 ** rng.uniform(0, 1)
        cx, cy, cz = (k % 4) * 2.0, (k // 4 % 4) * 2.0, (k // 16) * 2.0
        grid.add(m=1.0, x=cx, y=cy, z=cz, r=r)
        if k % 3:  # two of three touch a partner
            grid.add(m=0.5, x=cx + 1.2 * r, y=cy, z=cz, r=0.5 * r)
    tree = grid.copy()
    tree.collision_search = "tree"
    assert tree.options["collision_search"] == "tree"
    grid.step(1)
    tree.step(1)
    assert len(grid) == 60  # every touching pair merged, nothing else
    np.testing.assert_array_equal(tree.ids, grid.ids)
    np.testing.assert_allclose(tree.positions, grid.positions, rtol=0, atol=1e-14)


def test_direct_sum_conserves_momentum_to_round_off():
    sim = nbody.generate("uniform-cube", n=300, seed=5, velocity=0.2, softening=0.05, dt=1e-3)
    p0 = sim.momentum()
    sim.step(50)
    np.testing.assert_allclose(sim.momentum(), p0, atol=1e-14)


def test_changing_the_force_law_recomputes_accelerations():
    sim = nbody.generate("plummer", n=200, seed=4)
    a1 = sim.accelerations()
    sim.G = 2.0
    np.testing.assert_allclose(sim.accelerations(), 2 * a1, rtol=1e-12)
    sim.softening = 0.1
    assert not np.allclose(sim.accelerations(), 2 * a1)


def test_every_integrator_and_collisions_run():
    for scheme in nbody.integrators():
        sim = nbody.generate("kepler", integrator=scheme, dt=1e-3)
        sim.step(100)
        assert sim.integrator == scheme and sim.steps_done == 100
    sim = nbody.generate("uniform-cube", n=400, seed=1, radius=0.05, velocity=0.5, softening=0.01,
                         collisions="merge", dt=0.01)
    n0 = sim.n
    sim.step(20)
    stats = sim.collision_stats()
    assert stats["merges"] > 0 and sim.n == n0 - stats["merges"]
    assert len(sim.x) == sim.n
    mass = sim.masses.sum()
    assert mass == pytest.approx(1.0, rel=1e-12)  # merges keep the mass
