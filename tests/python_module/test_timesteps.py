"""Hierarchical time steps through Python: sim.timestep, sim.eta, sim.dt_min and
timestep_stats() (docs/timesteps.md)."""
import math

import pytest

import nbody


def test_adaptive_kepler_orbit_uses_deeper_bins_at_pericentre():
    period = 2 * math.pi
    sim = nbody.generate("kepler", e=0.9, dt=period / 64)
    sim.timestep = "adaptive"
    sim.eta = 1e-4
    assert sim.options["timestep"] == "adaptive"
    e0 = sim.energy().total
    sim.step(1)  # from pericentre
    at_pericentre = len(sim.timestep_stats()["bins"]) - 1
    sim.step(31)  # to apocentre
    at_apocentre = len(sim.timestep_stats()["bins"]) - 1
    sim.step(32)
    stats = sim.timestep_stats()
    assert stats["mode"] == "adaptive"
    assert sum(stats["bins"]) == 2
    assert at_pericentre >= at_apocentre + 4
    assert stats["substeps"] > 64
    assert stats["force_evaluations_per_body"] < 64 * 2 ** at_pericentre / 4
    assert abs(sim.energy().total - e0) / abs(e0) < 1e-3


def test_fixed_steps_count_one_evaluation_per_body_and_step():
    sim = nbody.generate("plummer", n=200, dt=0.01, softening=0.01)
    sim.step(5)
    stats = sim.timestep_stats()
    assert stats["mode"] == "fixed"
    assert stats["substeps"] == 5
    assert stats["force_evaluations_per_body"] == pytest.approx(5.0)
    assert stats["bins"] == []


def test_adaptive_options_are_checked():
    sim = nbody.generate("plummer", n=100, dt=0.01, softening=0.01)
    with pytest.raises(ValueError, match="^eta: "):
        sim.eta = -1.0
    with pytest.raises(ValueError, match="^dt_min: "):
        sim.dt_min = float("nan")
    with pytest.raises(ValueError, match="timestep"):
        sim.timestep = "sometimes"
    with pytest.raises(ValueError, match="^timestep_criterion: "):
        sim.timestep_criterion = "density"
    sim.integrator = "euler"
    with pytest.raises(ValueError, match="leapfrog"):
        sim.timestep = "adaptive"


@pytest.mark.parametrize("criterion", ["dynamical", "jerk"])
def test_criteria_follow_a_kepler_orbit(criterion):
    # |a|^2 / |phi| (dynamical) and |a| / |da/dt| (jerk, the CPU direct sum) shrink at the
    # pericentre of e = 0.9, which takes deeper bins.
    sim = nbody.generate("kepler", e=0.9, dt=2 * math.pi / 64)
    sim.timestep = "adaptive"
    sim.timestep_criterion = criterion
    sim.eta = 0.01
    assert sim.options["timestep_criterion"] == criterion
    e0 = sim.energy().total
    sim.step(64)
    assert len(sim.timestep_stats()["bins"]) >= 4
    assert abs(sim.energy().total - e0) / abs(e0) < 1e-3
