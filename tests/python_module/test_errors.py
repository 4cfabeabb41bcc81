"""Errors are Python exceptions whose messages are the command line's."""
import re

import numpy as np
import pytest

import nbody
from conftest import cli_error


@pytest.fixture
def sim():
    return nbody.generate("kepler")


@pytest.mark.parametrize("option, value, message", [
    ("dt", -1.0, "--dt -1: the time step must be positive and finite"),
    ("dt", 0.0, "--dt 0: the time step must be positive and finite"),
    ("theta", -0.5, "--theta -0.5: the opening angle must be a finite number >= 0"),
    ("mac", "cubic", "--mac cubic: unknown opening criterion (available: geometric, bmax, relative)"),
    ("alpha", 0.0, "--alpha 0: the relative opening criterion's tolerance must be a finite number > 0"),
    ("softening", -1.0, "--softening -1: must be a finite number >= 0"),
    ("G", float("nan"), "--G nan: the gravitational constant must be finite"),
    ("gravity", "fmm", "--gravity fmm: unknown gravity solver (available: direct, tree, none)"),
    ("integrator", "rk4", "--integrator rk4: unknown integrator (available: leapfrog, euler, kinematic, ias15)"),
    ("damping", 1.5, "--damping 1.5: must be in (0, 1] (1 = no damping)"),
    ("device", "tpu", "--device tpu: unknown device (available: cpu, gpu)"),
    ("precision", "half", "--precision half: unknown precision (available: auto, float, double)"),
    ("collisions", "stick", "--collisions stick: unknown collision model (available: none, bounce, merge)"),
    ("restitution", 2.0, "--restitution 2: must be between 0 and 1"),
    ("collision_iterations", 0, "--collision-iterations 0: must be at least 1"),
    ("threads", -1, "--threads -1: must be >= 0"),
])
def test_bad_option_values_raise_value_errors_naming_the_option(sim, option, value, message):
    before = sim.options
    with pytest.raises(nbody.Error) as caught:
        setattr(sim, option, value)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)
    assert sim.options == before  # nothing changed
    # generate() checks G for the model first, as `nbody run --model` does.
    if option == "G":
        message = "--G: gravitational constant must be positive and finite (got nan)"
    with pytest.raises(nbody.Error, match=re.escape(message)):
        nbody.generate("kepler", **{option: value})


@pytest.mark.parametrize("args, make", [
    # Option checks inside the library: the CLI reaches them too.
    (["--model", "kepler", "--steps", "1", "--kernel", "naive"],
     lambda: nbody.generate("kepler", kernel="naive").step()),
    (["--model", "kepler", "--steps", "1", "--block-size", "64"],
     lambda: nbody.generate("kepler", block_size=64).step()),
    (["--model", "kepler", "--e", "1.5", "--steps", "1"], lambda: nbody.generate("kepler", e=1.5)),
    (["--model", "two-clusters", "-n", "1", "--steps", "1"], lambda: nbody.generate("two-clusters", n=1)),
    (["--model", "plummer", "-n", "10", "--steps", "1", "--collisions", "bounce"],
     lambda: nbody.generate("plummer", n=10, collisions="bounce")),
])
def test_messages_match_the_command_line(args, make):
    with pytest.raises(nbody.Error) as caught:
        make()
    assert str(caught.value) == cli_error("run", *args)


def test_unknown_model():
    with pytest.raises(nbody.Error, match=re.escape("unknown model 'bogus' (available: uniform-cube, ")):
        nbody.generate("bogus")


def test_huge_n_is_refused_with_the_memory_needed():
    # 10^12 bodies: refused before anything is allocated (the interpreter used to die).
    with pytest.raises(nbody.Error, match=re.escape("-n 1000000000000: the bodies alone need 1.04e+05 GB")):
        nbody.generate("plummer", n=10**12)


def test_gpu_without_a_gpu_is_a_clear_error():
    if nbody.build_info()["gpus"]:
        pytest.skip("this machine has a GPU")
    with pytest.raises(nbody.Error, match="--device gpu"):
        nbody.generate("kepler", device="gpu")
    sim = nbody.generate("kepler")
    with pytest.raises(nbody.Error, match="--device gpu"):
        sim.device = "gpu"
    assert sim.device == "cpu"
    sim.step()  # still usable


def test_file_errors_are_file_errors_with_the_readers_message(tmp_path):
    missing = tmp_path / "missing.txt"
    with pytest.raises(nbody.FileError) as caught:
        nbody.load(missing)
    assert isinstance(caught.value, OSError) and isinstance(caught.value, nbody.Error)
    assert str(caught.value).startswith(f"{missing}: cannot open file")
    bad = tmp_path / "bad.txt"
    bad.write_text("0 0 0 0 0 0 1\n1 0 0 0 0 0 -1\n")
    with pytest.raises(nbody.FileError) as caught:
        nbody.load(bad)
    assert str(caught.value) == f"{bad}:2: column 7 (m): mass must be positive, got -1"
    assert str(caught.value) == cli_error("run", "-i", bad, "--steps", "1")
    with pytest.raises(nbody.Error, match="--format xml: unknown file format"):
        nbody.load(bad, format="xml")


def test_wrong_types_and_unknown_keywords_are_type_errors():
    with pytest.raises(TypeError, match="unexpected keyword argument 'thetaa'"):
        nbody.generate("plummer", n=10, thetaa=0.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'e'"):
        nbody.Simulation(np.zeros((1, 3)), np.zeros((1, 3)), [1.0], e=0.5)  # a model option
    sim = nbody.generate("kepler")
    with pytest.raises(TypeError, match="theta: expected a number, got str"):
        sim.theta = "wide"
    with pytest.raises(TypeError, match="quadrupole: expected True or False"):
        sim.quadrupole = 1
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtt'"):
        sim.set(dtt=1)


def test_bad_arrays():
    with pytest.raises(ValueError, match=r"positions: expected an array of shape \(N, 3\), got shape \(4, 2\)"):
        nbody.Simulation(np.zeros((4, 2)), np.zeros((4, 2)), np.ones(4))
    with pytest.raises(ValueError, match=r"masses: expected an array of shape \(4,\), got shape \(3,\)"):
        nbody.Simulation(np.zeros((4, 3)), np.zeros((4, 3)), np.ones(3))
    with pytest.raises(nbody.Error, match=r"body 1 \(id 2\): duplicate id 2 \(first used by body 0\)"):
        nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), ids=[2, 2])
    with pytest.raises(ValueError, match="ids: must be >= 0"):
        nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), ids=[1, -2])
    with pytest.raises(nbody.Error, match=r"body 0 \(id 1\): x must be finite, got inf"):
        nbody.Simulation([[np.inf, 0, 0]], [[0, 0, 0]], [1.0])


def test_evolve_and_step_arguments(sim):
    with pytest.raises(nbody.Error, match=r"--t-end -1: must be after the start time 0"):
        sim.evolve(-1)
    sim.evolve(0.0)  # already there: nothing to do
    assert sim.steps_done == 0
    with pytest.raises(ValueError, match="number of steps must be >= 0"):
        sim.step(-3)
