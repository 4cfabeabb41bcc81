"""No run without an end through Python (issue #32): Simulation.evolve(t) refuses, before
its first step, steps that do not advance the time (t + dt == t in double) or more than
2^53 of them, with the message `nbody run` prints; step() refuses a step that would leave
the time where it is. Each case would loop forever without the checks."""
import numpy as np
import pytest

nbody = pytest.importorskip(
    "nbody", reason="the Python module is not built (pip install . builds it)")


def far_in_time(t=1e16, **options):
    """Two bodies in a circular orbit at time t."""
    positions = np.array([[-0.5, 0, 0], [0.5, 0, 0]])
    velocities = np.array([[0, -0.5, 0], [0, 0.5, 0]])
    return nbody.Simulation(positions, velocities, np.ones(2), time=t, **options)


ADVANCE = ("dt: at t = 1.00000000001e+16 a step of 0.5 does not advance the time; the smallest "
           "step that does is 2 (got 0.5)")


@pytest.mark.parametrize("options", [{}, {"integrator": "ias15"}, {"timestep": "adaptive"}],
                         ids=["leapfrog", "ias15", "adaptive"])
def test_evolve_refuses_a_step_that_does_not_advance_the_time(options):
    sim = far_in_time(dt=0.5, **options)
    with pytest.raises(nbody.Error) as caught:
        sim.evolve(10000000000100000.0)
    assert str(caught.value) == ADVANCE
    assert isinstance(caught.value, ValueError)
    assert sim.time == 1e16 and sim.steps_done == 0  # refused before the first step


def test_evolve_refuses_a_tiny_dt_with_the_smallest_workable_one():
    sim = far_in_time(t=0.0, dt=1e-300)
    with pytest.raises(nbody.Error, match=r"^dt: at t = 1 a step of 1e-300 does not advance the "
                                          r"time; the smallest step that does is 2\.22"):
        sim.evolve(1.0)
    assert sim.steps_done == 0


def test_step_refuses_a_step_that_does_not_advance_the_time():
    sim = far_in_time(dt=0.5)
    with pytest.raises(nbody.Error, match=r"^dt: at t = 1e\+16 a step of 0\.5 does not advance"):
        sim.step()
    assert sim.time == 1e16 and sim.steps_done == 0


def test_evolve_with_the_smallest_step_named_lands_on_the_end_time():
    sim = far_in_time(dt=2.0)
    sim.evolve(10000000000100000.0)
    assert sim.time == 10000000000100000.0
    assert sim.steps_done == 50000


def test_evolve_refuses_what_the_command_line_refuses():
    from conftest import cli_error
    sim = far_in_time(t=0.0, dt=0.5)
    with pytest.raises(nbody.Error) as caught:
        sim.evolve(1e17)
    assert str(caught.value) == cli_error("run", "--model", "plummer", "-n", 10, "--t-end", "1e17",
                                          "--dt", 0.5)
