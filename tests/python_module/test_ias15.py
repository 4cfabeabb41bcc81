"""IAS15 through Python (issue #20): sim.integrator = "ias15", step() taking one of its own
steps, evolve(t) landing on t, timestep_stats() and the cross-check against REBOUND's IAS15
(skipped with a message when `rebound` is not installed)."""
import math

import pytest

import nbody


def pythagorean():
    return nbody.Simulation(
        positions=[[1, 3, 0], [-2, -1, 0], [1, -1, 0]], velocities=[[0, 0, 0]] * 3,
        masses=[3, 4, 5], dt=0.01)


def test_evolve_lands_on_t_and_keeps_the_energy():
    sim = pythagorean()
    sim.integrator = "ias15"
    assert sim.options["integrator"] == "ias15"
    assert sim.options["ias15_epsilon"] == 1e-9
    assert sim.options["ias15_adaptive"] == "prs23"  # REBOUND's default too
    e0 = sim.energy().total
    sim.evolve(70.0)
    assert sim.time == 70.0
    assert abs((sim.energy().total - e0) / e0) < 3 * 5.2e-11  # within 3x REBOUND's (prs23)
    stats = sim.timestep_stats()
    assert stats["steps"] == sim.steps_done > 1000
    assert stats["dt_min"] <= stats["dt_last"] <= stats["dt_max"]
    assert stats["rejected_steps"] >= 0
    assert stats["iterations"] >= 2 * stats["steps"]
    # 4 and 5 leave as a binary, 3 escapes (Szebehely & Peters 1967)
    x = sim.positions
    assert math.dist(x[1], x[2]) < 1.0 and math.dist(x[0], x[1]) > 5.0


def test_first_step_defaults_to_rebounds_dt():
    sim = nbody.Simulation(positions=[[1, 3, 0], [-2, -1, 0], [1, -1, 0]],
                           velocities=[[0, 0, 0]] * 3, masses=[3, 4, 5])
    assert sim.dt == 0.01  # the leapfrog's step
    sim.integrator = "ias15"
    assert sim.dt == 0.001  # REBOUND's default, as `nbody run` without --dt
    sim.ias15_epsilon = 0  # fixed steps of dt
    sim.step(3)
    assert sim.time == pytest.approx(0.003, rel=1e-12)
    sim.dt = 0.02
    assert sim.dt == 0.02
    sim.integrator = "leapfrog"
    assert sim.dt == 0.02  # set: kept


def test_step_takes_its_own_steps_and_the_rule_can_be_chosen():
    sim = pythagorean()
    sim.integrator = "ias15"
    sim.ias15_adaptive = "prs23"
    sim.step(10)
    assert sim.steps_done == 10
    assert sim.timestep_stats()["steps"] == 10
    assert sim.time > 0
    with pytest.raises(ValueError, match=r"^ias15_adaptive: unknown IAS15 step rule .* \(got local\)$"):
        sim.ias15_adaptive = "local"


def test_tree_is_refused():
    sim = pythagorean()
    sim.gravity = "tree"
    with pytest.raises(ValueError, match="integrator: needs gravity='direct'"):
        sim.integrator = "ias15"


def test_same_final_state_as_rebound():
    rebound = pytest.importorskip("rebound", reason="rebound is not installed: no cross-check")
    sim = nbody.generate("figure-eight", dt=0.01)
    sim.integrator = "ias15"
    start = sim.positions.copy(), sim.velocities.copy(), sim.masses.copy()
    period = 6.32591398
    sim.evolve(period)
    ref = rebound.Simulation()
    ref.integrator = "ias15"
    ref.integrator.adaptive_mode = "prs23"  # both codes' default
    for p, v, m in zip(*start):
        ref.add(m=m, x=p[0], y=p[1], z=p[2], vx=v[0], vy=v[1], vz=v[2])
    ref.integrate(period)
    for mine, theirs in zip(sim.positions, ref.particles):
        assert math.dist(mine, (theirs.x, theirs.y, theirs.z)) < 1e-10
