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
    ("dt", -1.0, "dt: the time step must be positive and finite (got -1)"),
    ("dt", 0.0, "dt: the time step must be positive and finite (got 0)"),
    ("theta", -0.5, "theta: the opening angle must be a finite number >= 0 (got -0.5)"),
    ("mac", "cubic", "mac: unknown opening criterion (available: geometric, bmax, relative) (got cubic)"),
    ("alpha", 0.0, "alpha: the relative opening criterion's tolerance must be a finite number > 0 (got 0)"),
    ("softening", -1.0, "softening: must be a finite number >= 0 (got -1)"),
    ("G", float("nan"), "G: the gravitational constant must be finite (got nan)"),
    ("gravity", "fmm", "gravity: unknown gravity solver (available: direct, tree, none) (got fmm)"),
    ("integrator", "rk4", "integrator: unknown integrator (available: leapfrog, euler, kinematic, ias15) (got rk4)"),
    ("damping", 1.5, "damping: must be in (0, 1] (1 = no damping) (got 1.5)"),
    ("device", "tpu", "device: unknown device (available: cpu, gpu) (got tpu)"),
    ("precision", "half", "precision: unknown precision (available: auto, float, double) (got half)"),
    ("collisions", "stick", "collisions: unknown collision model (available: none, bounce, merge) (got stick)"),
    ("restitution", 2.0, "restitution: must be between 0 and 1 (got 2)"),
    ("collision_iterations", 0, "collision_iterations: must be at least 1 (got 0)"),
    ("threads", -1, "threads: must be >= 0 (got -1)"),
    ("tree_build", "octree", "tree_build: unknown tree build (available: morton, insertion) (got octree)"),
    ("collision_search", "bvh",
     "collision_search: unknown collision search (available: grid, tree) (got bvh)"),
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
        message = "G: gravitational constant must be positive and finite (got nan)"
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
    with pytest.raises(nbody.Error, match=re.escape("n: the bodies alone need 1.04e+05 GB")):
        nbody.generate("plummer", n=10**12)
    with pytest.raises(nbody.Error, match=re.escape("(got 1000000000000)")):
        nbody.generate("plummer", n=10**12)


def test_gpu_without_a_gpu_is_a_clear_error():
    if nbody.build_info()["gpus"]:
        pytest.skip("this machine has a GPU")
    with pytest.raises(nbody.Error, match=r"^device: .* \(got gpu\)$"):
        nbody.generate("kepler", device="gpu")
    sim = nbody.generate("kepler")
    with pytest.raises(nbody.Error, match=r"^device: .* \(got gpu\)$"):
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
    assert str(caught.value) == f"{bad}:2: column 7 (m): mass must be >= 0, got -1"  # 0: a test particle
    assert str(caught.value) == cli_error("run", "-i", bad, "--steps", "1")
    with pytest.raises(nbody.Error, match=re.escape("format: unknown file format (available: text, csv, hdf5) (got xml)")):
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
    with pytest.raises(nbody.Error, match=r"^ids\[1\]: must be unique, as ids\[0\] is the same \(got 2\)$"):
        nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), ids=[2, 2])
    with pytest.raises(nbody.Error, match=r"^ids\[1\]: must be >= 1 \(got -2\)$"):
        nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), np.ones(2), ids=[1, -2])
    with pytest.raises(nbody.Error, match=r"^positions\[0, 0\]: must be finite \(got inf\)$"):
        nbody.Simulation([[np.inf, 0, 0]], [[0, 0, 0]], [1.0])


def test_evolve_and_step_arguments(sim):
    with pytest.raises(nbody.Error, match=r"^evolve: t must be after the current time 0 \(got -1\)$"):
        sim.evolve(-1)
    sim.evolve(0.0)  # already there: nothing to do
    assert sim.steps_done == 0
    with pytest.raises(ValueError, match="number of steps must be >= 0"):
        sim.step(-3)


# ---- Every other argument: wrong types, out of range, empty ------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda: nbody.generate("plummer", n=10**30), nbody.Error,
     "n: must be an integer from 1 to 2^64 - 1 (got 1000000000000000000000000000000)"),
    (lambda: nbody.generate("plummer", n=-1), nbody.Error, "n: the number of bodies must be positive (got -1)"),
    (lambda: nbody.generate("plummer", n=1.5), TypeError, "generate(): n expects an integer, got float"),
    (lambda: nbody.generate("plummer", n=True), TypeError, "generate(): n expects an integer, got bool"),
    (lambda: nbody.generate("plummer", seed=-1), nbody.Error, "seed: must be an integer from 0 to 2^64 - 1 (got -1)"),
    (lambda: nbody.generate("plummer", seed=2**64), nbody.Error,
     "seed: must be an integer from 0 to 2^64 - 1 (got 18446744073709551616)"),
    (lambda: nbody.generate("plummer", seed="1"), TypeError, "generate(): seed expects an integer, got str"),
    (lambda: nbody.generate("plummer", n=10, mass=float("inf")), nbody.Error, "mass: must be finite (got inf)"),
    (lambda: nbody.generate("plummer", n=10, rmax=float("nan")), nbody.Error, "rmax: must be finite (got nan)"),
    (lambda: nbody.generate("plummer", n=10, dim=2**40), nbody.Error,
     "dim: is beyond the range of a 32-bit integer (got 1099511627776)"),
    (lambda: nbody.generate("plummer", n=10, size=10**400), nbody.Error,
     "size: is beyond the range of a float64 (got 1" + "0" * 59 + "... (401 bytes))"),
    (lambda: nbody.generate("kepler", threads=2**40), nbody.Error,
     "threads: is beyond the range of a 32-bit integer (got 1099511627776)"),
    (lambda: nbody.generate("kepler", dt=10**400), nbody.Error,
     "dt: is beyond the range of a float64 (got 1" + "0" * 59 + "... (401 bytes))"),
    (lambda: nbody.generate("kepler").step(-1), ValueError, "step(-1): the number of steps must be >= 0"),
    (lambda: nbody.generate("kepler").step(2**64), ValueError,
     "step(18446744073709551616): the number of steps must be below 2^64"),
    (lambda: nbody.generate("kepler").step(1.5), TypeError, "step(): count expects an integer, got float"),
    (lambda: nbody.generate("kepler").step("1"), TypeError, "step(): count expects an integer, got str"),
    (lambda: nbody.Simulation([[0, 0, 0]], [[0, 0, 0]], [1.0], time=float("nan")), nbody.Error,
     "time: must be finite (got nan)"),
    (lambda: nbody.Simulation([[0, 0, 0]], [[0, 0, 0]], [1.0], dim=4), nbody.Error, "dim: must be 2 or 3 (got 4)"),
    (lambda: setattr(nbody.generate("kepler"), "time", float("inf")), nbody.Error, "time: must be finite (got inf)"),
    (lambda: nbody.load(""), nbody.Error, "path: is empty: name a file"),
    (lambda: nbody.load("x.csv", format=""), nbody.Error, "format: is empty: give 'auto' or one of nbody.formats()"),
    (lambda: nbody.generate("kepler").save(""), nbody.Error, "path: is empty: name a file"),
])
def test_bad_arguments_are_refused_with_clear_messages(call, error, message):
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


def test_save_refuses_what_load_would_refuse(tmp_path):
    empty = nbody.Simulation(np.zeros((0, 3)), np.zeros((0, 3)), [])
    path = tmp_path / "empty.csv"
    with pytest.raises(nbody.Error) as caught:
        empty.save(path)
    assert str(caught.value) == f"{path}: not written: the simulation has no bodies (the readers refuse a file without any)"
    assert not path.exists()


def test_no_cpp_exception_reaches_python_by_its_type_name():
    """A sweep of bad calls: each raises TypeError, ValueError, IndexError or OSError whose
    message says what was wrong, never RuntimeError('std::bad_cast') or the like."""
    sim = nbody.generate("kepler")
    calls = [
        lambda: nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), [1.0, 1.0], ids=[1.5, 2]),
        lambda: nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), [1.0, 1.0], ids=["a", "b"]),
        lambda: nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), [1.0, 1.0], ids=[2**70, 1]),
        lambda: nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), [1.0, 1.0], ids=[{}, 1]),
        lambda: nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), [{}, 1.0]),
        lambda: nbody.Simulation("abc", np.zeros((2, 3)), [1.0, 1.0]),
        lambda: nbody.Simulation(None, np.zeros((2, 3)), None),
        lambda: setattr(sim, "ids", [1.5, 2.5]),
        lambda: setattr(sim, "ids", None),
        lambda: setattr(sim, "x", object()),
        lambda: setattr(sim, "positions", "xyz"),
        lambda: setattr(sim, "threads", 2**70),
        lambda: setattr(sim, "gravity", 3),
        lambda: setattr(sim, "quadrupole", "yes"),
        lambda: sim.add(position=[1, 2, 3], mass=1.0, id=1.5),
        lambda: sim.add(position=[1, 2, 3], mass=1.0, id=2**64),
        lambda: sim.add(position=[1, 2, 3], mass=1.0, id=-(2**70)),
        lambda: sim.add(position=[[1, 2, 3]], mass=[1.0, 2.0, 3.0]),
        lambda: sim.add(position=None, mass=1.0),
        lambda: sim.remove(ids=1.5),
        lambda: sim.remove(ids=[2**70]),
        lambda: sim.remove(ids=[[1]]),
        lambda: sim.remove([None]),
        lambda: sim.remove(np.array([2**64 - 1], dtype=np.uint64)),
        lambda: sim.energy(method=""),
        lambda: nbody.generate("plummer", n=10, dim="3"),
        lambda: nbody.generate("plummer", n="10"),
        lambda: nbody.generate(None),
        lambda: nbody.load(None),
        lambda: nbody.load("/nonexistent/x.h5"),
    ]
    for i, call in enumerate(calls):
        with pytest.raises((TypeError, ValueError, IndexError, OSError)) as caught:
            call()
        assert "std::" not in str(caught.value), (i, caught.value)
        assert str(caught.value), i
    assert sim.n == 2  # nothing refused changed the bodies
    sim.step()


def test_unknown_keywords_are_escaped_and_cut_in_messages():
    with pytest.raises(TypeError) as caught:
        nbody.generate("kepler", **{"\x1b[31mred": 1})
    assert "argument '\\x1b[31mred'" in str(caught.value) and "\x1b" not in str(caught.value)
    with pytest.raises(TypeError) as caught:
        nbody.generate("kepler").set(**{"k" * 100000: 1})
    assert "... (100000 bytes)" in str(caught.value) and len(str(caught.value)) < 1000
