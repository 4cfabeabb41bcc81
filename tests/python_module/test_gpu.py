"""The GPU path against the CPU (skipped, with the reason, where no GPU is usable)."""
import numpy as np
import pytest

import nbody
from conftest import gpu_or_skip, relative_errors


def test_gpu_direct_sum_steps_like_the_cpu():
    gpu_or_skip()
    cpu = nbody.generate("plummer", n=3000, seed=2, softening=0.01, dt=1e-3)
    gpu = cpu.copy()
    gpu.device = "gpu"
    assert gpu.device == "gpu" and "cuda" in gpu.solver
    e0 = cpu.energy().total
    assert gpu.energy().total == pytest.approx(e0, rel=1e-12)
    cpu.step(20)
    gpu.step(20)
    assert gpu.steps_done == 20 and gpu.time == pytest.approx(cpu.time)
    np.testing.assert_allclose(gpu.positions, cpu.positions, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gpu.velocities, cpu.velocities, rtol=1e-7, atol=1e-10)
    errors = relative_errors(gpu.accelerations(), cpu.accelerations())
    assert np.max(errors) < 1e-9


def test_gpu_tree_forces_agree_with_the_direct_sum_like_the_cpu_tree():
    gpu_or_skip()
    gpu = nbody.generate("plummer", n=20000, seed=4, gravity="tree", theta=0.5, device="gpu")
    gpu.step(1)  # the accelerations the device computed at the new positions
    direct = nbody.Simulation(gpu.positions, gpu.velocities, gpu.masses)  # CPU, exact
    reference = direct.accelerations()
    cpu_tree = direct.copy()
    cpu_tree.gravity = "tree"
    gpu_errors = relative_errors(gpu.accelerations(), reference)
    cpu_errors = relative_errors(cpu_tree.accelerations(), reference)
    assert np.median(gpu_errors) < 1e-2  # REBOUND: median 1.4e-3 at theta 0.5
    assert np.median(cpu_errors) < 1e-2
    assert np.median(gpu_errors) < 3 * np.median(cpu_errors)


def test_gpu_arrays_are_copies_and_assignments_reach_the_device():
    gpu_or_skip()
    sim = nbody.generate("plummer", n=1000, seed=3, device="gpu", dt=1e-3)
    x = sim.x
    assert not x.flags.writeable  # a copy: writing to it would change nothing
    with pytest.raises(ValueError):
        x[0] = 1.0
    sim.step(2)
    moved = sim.positions
    moved[:, 0] += 10.0
    sim.positions = moved  # uploaded before the next step
    np.testing.assert_array_equal(sim.positions, moved)
    sim.step(1)
    assert sim.x.mean() > 9.0
    back = sim.copy()
    back.device = "cpu"
    np.testing.assert_array_equal(back.positions, sim.positions)
