"""numpy in and out: construction, views that alias the simulation's memory, (N, 3)
copies, setters, adding and removing bodies."""
import gc

import numpy as np
import pytest

import nbody


def test_arrays_round_trip_exactly(random_bodies):
    x, v, m = random_bodies
    r = np.linspace(0, 0.1, len(m))
    ids = np.arange(100, 100 + len(m))
    sim = nbody.Simulation(x, v, m, radii=r, ids=ids, time=2.5)
    assert len(sim) == sim.n == len(m)
    assert sim.time == 2.5
    np.testing.assert_array_equal(sim.positions, x)
    np.testing.assert_array_equal(sim.velocities, v)
    np.testing.assert_array_equal(sim.masses, m)
    np.testing.assert_array_equal(sim.radii, r)
    np.testing.assert_array_equal(sim.ids, ids)
    np.testing.assert_array_equal(np.column_stack([sim.x, sim.y, sim.z]), x)
    np.testing.assert_array_equal(np.column_stack([sim.vx, sim.vy, sim.vz]), v)
    assert sim.x.dtype == np.float64 and sim.ids.dtype == np.uint64
    assert sim.positions.shape == (len(m), 3)


def test_defaults_and_conversions():
    sim = nbody.Simulation([[0, 0, 0], [1, 0, 0]], [[0, 0, 0], [0, 1, 0]], [1, 2])  # lists, integers
    np.testing.assert_array_equal(sim.ids, [1, 2])
    np.testing.assert_array_equal(sim.radii, [0, 0])
    assert sim.x.dtype == np.float64
    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    sim.positions = fortran  # any layout
    np.testing.assert_array_equal(sim.positions, fortran)


def test_views_alias_the_simulation_and_copies_do_not(random_bodies, tmp_path):
    sim = nbody.Simulation(*random_bodies)
    x = sim.x
    assert x.flags.writeable
    assert np.shares_memory(x, sim.x)  # the same memory every time
    assert not np.shares_memory(sim.positions, sim.x)  # (N, 3) is a copy
    x[0] = 42.0
    sim.masses[1] = 0.5
    assert sim.positions[0, 0] == 42.0
    path = tmp_path / "edited.csv"
    sim.save(path)
    back = nbody.load(path)
    assert back.x[0] == 42.0 and back.masses[1] == 0.5
    p = sim.positions
    p[2, 1] = -7.0  # a copy: the simulation does not change
    assert sim.y[2] != -7.0


def test_view_keeps_the_simulation_alive(random_bodies):
    x0 = random_bodies[0][:, 0].copy()
    view = nbody.Simulation(*random_bodies).x
    gc.collect()
    np.testing.assert_array_equal(view, x0)


def test_views_stay_attached_across_steps_and_option_changes(random_bodies):
    sim = nbody.Simulation(*random_bodies, dt=1e-3)
    x = sim.x
    sim.step(3)
    sim.gravity = "tree"
    sim.softening = 0.01
    sim.step(2)
    assert np.shares_memory(x, sim.x)
    np.testing.assert_array_equal(x, sim.positions[:, 0])


def test_edits_through_views_refresh_the_accelerations(random_bodies):
    sim = nbody.Simulation(*random_bodies, dt=1e-3)
    sim.step(1)
    x = sim.x
    x[3] += 0.25  # the stored accelerations are now those of the old positions
    fresh = nbody.Simulation(sim.positions, sim.velocities, sim.masses)
    np.testing.assert_allclose(sim.accelerations(), fresh.accelerations(), rtol=1e-12)
    # ... and the next step starts from the new ones, as a fresh simulation would.
    fresh.dt = sim.dt
    sim.step(1)
    fresh.step(1)
    np.testing.assert_allclose(sim.positions, fresh.positions, rtol=1e-12)


def test_setters_check_shape_and_values(random_bodies):
    sim = nbody.Simulation(*random_bodies)
    n = sim.n
    sim.positions = np.zeros((n, 3)) + np.arange(n)[:, None]
    assert sim.x[5] == 5.0
    sim.x = np.ones(n)
    assert sim.positions[5, 0] == 1.0
    with pytest.raises(ValueError, match=r"positions: expected an array of shape \(N, 3\)|positions: expected an array of shape \(12, 3\)"):
        sim.positions = np.zeros((n + 1, 3))
    with pytest.raises(nbody.Error, match=r"^masses\[2\]: must be finite and > 0 \(got -1\)$"):
        masses = sim.masses.copy()
        masses[2] = -1
        sim.masses = masses
    assert sim.masses[2] > 0  # unchanged after the refused edit
    with pytest.raises(nbody.Error, match=r"^vx\[0\]: must be finite \(got nan\)$"):
        sim.vx = np.full(n, np.nan)


def test_add_and_remove_bodies(random_bodies):
    sim = nbody.Simulation(*random_bodies)
    n = sim.n
    new_id = sim.add(position=[5, 0, 0], velocity=[0, 1, 0], mass=0.1, radius=0.01)
    assert new_id == n + 1 and sim.n == n + 1
    np.testing.assert_array_equal(sim.positions[-1], [5, 0, 0])
    ids = sim.add(position=np.zeros((3, 3)) + [[6, 0, 0]], mass=[0.1, 0.2, 0.3], id=[0, 500, 0])
    np.testing.assert_array_equal(ids, [n + 2, 500, 501])
    with pytest.raises(nbody.Error, match="add: id 500 is already used"):
        sim.add(position=[0, 0, 0], mass=1, id=500)
    with pytest.raises(nbody.Error, match=r"^mass\[0\]: must be finite and > 0 \(got -1\)$"):
        sim.add(position=[0, 0, 0], mass=-1)  # (mass 0: a test particle, test_test_particles.py)
    assert sim.n == n + 4
    sim.remove(0)
    sim.remove(ids=[500, n + 1])
    assert sim.n == n + 1
    assert 500 not in sim.ids and 1 not in sim.ids
    sim.remove([-1])  # Python's negative indices
    assert sim.ids[-1] == n + 2
    with pytest.raises(IndexError, match="out of range"):
        sim.remove(sim.n)
    far = sim.add(position=[[50, 0, 0], [60, 0, 0]], mass=1e-3)
    sim.remove(np.hypot(sim.x, sim.y) > 40)  # a boolean mask
    assert not np.isin(far, sim.ids).any()
    with pytest.raises(ValueError, match="no body has id 9999"):
        sim.remove(ids=9999)


def test_views_taken_before_add_stay_readable_but_detach(random_bodies):
    sim = nbody.Simulation(*random_bodies)
    x = sim.x
    before = x.copy()
    sim.add(position=[1, 2, 3], mass=1.0)
    np.testing.assert_array_equal(x, before)  # still valid memory
    x[0] = 99.0
    assert sim.x[0] != 99.0  # no longer the simulation's
    assert len(sim.x) == len(before) + 1


def test_planar_system_stays_planar():
    sim = nbody.generate("plummer", n=50, seed=2, dim=2)
    assert sim.dim == 2
    assert not sim.z.any() and not sim.vz.any()
    p = sim.positions
    p[:, 2] = 1.0
    sim.positions = p  # z is projected away
    assert not sim.z.any()
    sim.step(3)
    assert not sim.z.any() and not sim.vz.any()


def test_energy_momentum_and_diagnostics():
    sim = nbody.generate("plummer", n=5000, seed=1)
    e = sim.energy()
    assert e.total == pytest.approx(e.kinetic + e.potential)
    assert -0.265 < e.total < -0.235  # Hénon units: -1/4, scatter ~0.005 at N = 5000
    d = sim.diagnostics()
    assert d["total_energy"] == e.total and d["virial_ratio"] == pytest.approx(1, abs=0.1)
    np.testing.assert_allclose(sim.momentum(), 0, atol=1e-14)
    np.testing.assert_allclose(sim.momentum(), d["momentum"], atol=1e-15)
    np.testing.assert_allclose(sim.angular_momentum(), d["angular_momentum"], atol=1e-14)
    p = (sim.masses[:, None] * sim.velocities).sum(axis=0)
    np.testing.assert_allclose(sim.momentum(), p, atol=1e-15)


def test_energy_methods():
    sim = nbody.generate("plummer", n=2000, seed=3, gravity="tree", softening=0.05)
    exact, solver, off = (sim.energy(method=m) for m in ("exact", "solver", "off"))
    assert solver.potential == pytest.approx(exact.potential, rel=1e-3)  # the tree's potential
    assert solver.potential != exact.potential
    assert off.potential == 0 and off.kinetic == exact.kinetic
    assert sim.energy().potential == exact.potential  # auto: exact up to 65,536 bodies
    sim.energy_method = "solver"
    assert sim.energy().potential == solver.potential
    assert sim.diagnostics()["energy_method"] == "solver"
    with pytest.raises(ValueError, match="^energy_method: unknown energy method"):
        sim.energy(method="approximate")


def test_an_empty_simulation_grows_by_add():
    sim = nbody.Simulation(np.zeros((0, 3)), np.zeros((0, 3)), [], dt=0.01)
    assert sim.n == 0 and sim.positions.shape == (0, 3) and len(sim.x) == 0
    with pytest.raises(nbody.Error, match=r"^step: the simulation has no bodies"):
        sim.step(2)  # as REBOUND's integrate() of an empty simulation
    assert sim.time == 0
    sim.add(position=[[1, 0, 0], [-1, 0, 0]], velocity=[[0, 0.3, 0], [0, -0.3, 0]], mass=0.5)
    np.testing.assert_array_equal(sim.ids, [1, 2])
    e0 = sim.energy().total
    sim.step(100)
    assert sim.energy().total == pytest.approx(e0, rel=1e-3)


# ---- Bad values: at the call, and before the next step for edits through the views ------

@pytest.mark.parametrize("array, index, value, message", [
    ("x", 0, np.nan, "x[0]: must be finite (got nan)"),
    ("z", 3, -np.inf, "z[3]: must be finite (got -inf)"),
    ("vx", 1, np.inf, "vx[1]: must be finite (got inf)"),
    ("masses", 0, -1.0, "masses[0]: must be finite and > 0 (got -1)"),
    ("masses", 2, 0.0, "masses[2]: must be finite and > 0 (got 0)"),
    ("masses", 4, np.nan, "masses[4]: must be finite and > 0 (got nan)"),
    ("radii", 5, -0.5, "radii[5]: must be finite and >= 0 (got -0.5)"),
    ("ids", 0, 0, "ids[0]: must be >= 1 (got 0)"),
    ("ids", 6, 1, "ids[6]: must be unique, as ids[0] is the same (got 1)"),
])
def test_bad_edits_through_views_are_refused_before_the_next_step(random_bodies, tmp_path, array, index, value,
                                                                   message):
    sim = nbody.Simulation(*random_bodies, dt=1e-3)
    sim.step()
    view = getattr(sim, array)
    good = view[index]
    view[index] = value
    for call in (sim.step, lambda: sim.step(5), lambda: sim.evolve(1.0), sim.accelerations,
                 lambda: sim.save(tmp_path / "refused.csv"), sim.copy):
        with pytest.raises(nbody.Error) as caught:
            call()
        assert str(caught.value) == message
        assert isinstance(caught.value, ValueError)
    assert sim.steps_done == 1  # no step was taken
    assert not (tmp_path / "refused.csv").exists()
    view[index] = good  # mended: the simulation goes on
    sim.step()
    assert sim.steps_done == 2


def test_bad_edits_through_views_are_refused_after_the_view_is_gone(random_bodies):
    sim = nbody.Simulation(*random_bodies)
    sim.masses[3] = -2.0  # the view dies at once
    gc.collect()
    with pytest.raises(nbody.Error, match=r"^masses\[3\]: must be finite and > 0 \(got -2\)$"):
        sim.step()


def test_good_edits_through_views_still_step_and_keep_the_ids(random_bodies):
    sim = nbody.Simulation(*random_bodies, dt=1e-3)
    sim.vx[:] = 0.0
    sim.radii[:] = 0.01
    sim.ids[:] = np.arange(50, 50 + sim.n)
    sim.step(2)
    np.testing.assert_array_equal(sim.ids, np.arange(50, 50 + sim.n))


@pytest.mark.parametrize("setter, value, message", [
    ("positions", lambda n: np.full((n, 3), np.nan), "positions[0, 0]: must be finite (got nan)"),
    ("velocities", lambda n: np.pad(np.zeros((n - 1, 3)), ((0, 1), (0, 0)), constant_values=np.inf),
     f"velocities[11, 0]: must be finite (got inf)"),
    ("y", lambda n: np.r_[np.zeros(n - 1), np.nan], "y[11]: must be finite (got nan)"),
    ("radii", lambda n: np.r_[-1.0, np.zeros(n - 1)], "radii[0]: must be finite and >= 0 (got -1)"),
    ("masses", lambda n: np.r_[np.ones(n - 1), -0.0], "masses[11]: must be finite and > 0 (got -0)"),
    ("ids", lambda n: np.r_[np.arange(1, n), 0], "ids[11]: must be >= 1 (got 0)"),
    ("ids", lambda n: np.r_[np.arange(1, n), 3], "ids[11]: must be unique, as ids[2] is the same (got 3)"),
    ("ids", lambda n: np.r_[np.arange(1, n), -4], "ids[11]: must be >= 1 (got -4)"),
])
def test_bad_values_given_to_setters_are_refused_and_change_nothing(random_bodies, setter, value, message):
    sim = nbody.Simulation(*random_bodies)
    before = (sim.positions, sim.velocities, sim.masses.copy(), sim.radii.copy(), sim.ids.copy())
    with pytest.raises(nbody.Error) as caught:
        setattr(sim, setter, value(sim.n))
    assert str(caught.value) == message
    after = (sim.positions, sim.velocities, sim.masses, sim.radii, sim.ids)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    sim.step()


@pytest.mark.parametrize("keyword, value, message", [
    ("positions", [[0, 0, 0], [np.nan, 0, 0]], "positions[1, 0]: must be finite (got nan)"),
    ("velocities", [[0, 0, 0], [0, 0, -np.inf]], "velocities[1, 2]: must be finite (got -inf)"),
    ("masses", [1.0, -1.0], "masses[1]: must be finite and > 0 (got -1)"),
    ("masses", [0.0, 1.0],  # mass 0: a test particle, after the bodies with mass
     "masses[1]: test particles (mass 0) must come after every body with mass, and masses[0] is 0 (got 1)"),
    ("masses", [1.0, 1e400], "masses[1]: must be finite and > 0 (got inf)"),
    ("radii", [np.nan, 0.0], "radii[0]: must be finite and >= 0 (got nan)"),
    ("ids", [0, 7], "ids[0]: must be >= 1 (got 0)"),
    ("ids", [7, 7], "ids[1]: must be unique, as ids[0] is the same (got 7)"),
    ("ids", [7, -1], "ids[1]: must be >= 1 (got -1)"),
])
def test_bad_values_given_to_the_constructor_are_refused_naming_them(keyword, value, message):
    args = {"positions": [[0, 0, 0], [1, 0, 0]], "velocities": np.zeros((2, 3)), "masses": [1.0, 1.0]}
    args[keyword] = value
    with pytest.raises(nbody.Error) as caught:
        nbody.Simulation(**args)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("keyword, value, message", [
    ("masses", np.array([1 + 2j, 1]), "masses: expected real numbers, got an array of dtype complex128"),
    ("masses", ["1", "2"], "masses: expected real numbers, got an array of dtype str32"),
    ("masses", [True, True], "masses: expected real numbers, got an array of dtype bool"),
    ("masses", [None, 1.0], "masses: expected real numbers, got an array of dtype object"),
    ("positions", [[None, 0, 0], [1, 0, 0]], "positions: expected real numbers, got an array of dtype object"),
    ("radii", np.array(["a", "b"], dtype=object), "radii: expected real numbers, got an array of dtype object"),
    ("ids", [1.5, 2], "ids: expected integers, got an array of dtype float64"),
    ("ids", [1.0, 2.0], "ids: expected integers, got an array of dtype float64"),
    ("ids", ["1", "2"], "ids: expected integers, got an array of dtype str32"),
    ("ids", [2**64, 1], "ids: expected integers below 2^64, got an array of dtype object"),
])
def test_wrong_dtypes_are_type_errors_naming_the_argument(keyword, value, message):
    args = {"positions": [[0, 0, 0], [1, 0, 0]], "velocities": np.zeros((2, 3)), "masses": [1.0, 1.0]}
    args[keyword] = value
    with pytest.raises(TypeError) as caught:
        nbody.Simulation(**args)
    assert str(caught.value) == message


def test_wrong_shapes_and_layouts():
    with pytest.raises(ValueError, match=r"^positions: cannot be read as an array \(setting an array element"):
        nbody.Simulation([[0, 0], [1, 0, 0]], np.zeros((2, 3)), [1.0, 1.0])  # ragged
    with pytest.raises(ValueError, match=r"^ids: expected a one-dimensional array, got 2 dimensions$"):
        nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), [1.0, 1.0], ids=[[1, 2]])
    with pytest.raises(ValueError, match=r"^masses: expected an array of shape \(2,\), got shape \(1,\)$"):
        nbody.Simulation(np.zeros((2, 3)), np.zeros((2, 3)), 1.0)
    strided = np.arange(12.0).reshape(2, 6)[:, ::2]  # not contiguous: copied, not refused
    sim = nbody.Simulation(strided, np.zeros((2, 3)), np.array([1, 2], dtype=np.int8))
    np.testing.assert_array_equal(sim.positions, strided)


def test_ids_that_are_accepted_are_read_back_by_load(tmp_path):
    ids = np.array([7, 2**64 - 1], dtype=np.uint64)  # as a list, numpy would make floats of them
    sim = nbody.Simulation([[0, 0, 0], [1, 0, 0]], np.zeros((2, 3)), [1.0, 1.0], ids=ids)
    for name in ("bodies.csv", "bodies.h5"):
        if name.endswith(".h5") and "hdf5" not in nbody.formats():
            continue
        sim.save(tmp_path / name)
        np.testing.assert_array_equal(nbody.load(tmp_path / name).ids, [7, 2**64 - 1])
    with pytest.raises(nbody.Error, match=r"^id: 0 asks for the next free id, and none is left above 2\^64 - 1$"):
        sim.add(position=[2, 0, 0], mass=1.0)
    assert sim.add(position=[2, 0, 0], mass=1.0, id=8) == 8


@pytest.mark.parametrize("kwargs, error, message", [
    ({"position": [np.nan, 0, 0]}, nbody.Error, "position[0, 0]: must be finite (got nan)"),
    ({"velocity": [0, np.inf, 0]}, nbody.Error, "velocity[0, 1]: must be finite (got inf)"),
    ({"mass": -1.0}, nbody.Error, "mass[0]: must be finite and > 0 (got -1)"),
    ({"radius": -1.0}, nbody.Error, "radius[0]: must be finite and >= 0 (got -1)"),
    ({"id": -1}, nbody.Error, "id[0]: must be >= 1, or 0 for the next free id (got -1)"),
    ({"position": [[5, 0, 0], [6, 0, 0]], "id": [9, 9]}, nbody.Error, "id[1]: must be unique, as id[0] is the same (got 9)"),
    ({"id": 1.5}, TypeError, "id: expected integers, got an array of dtype float64"),
    ({"id": 2**64}, TypeError, "id: expected integers below 2^64, got an array of dtype object"),
    ({"position": "abc"}, TypeError, "position: expected real numbers, got an array of dtype str96"),
    ({"mass": 1j}, TypeError, "mass: expected real numbers, got an array of dtype complex128"),
    ({"position": [[5, 0, 0], [6, 0, 0]], "id": [1, 2, 3]}, ValueError, "id: cannot be broadcast to shape (2,)"),
])
def test_add_refuses_bad_bodies_naming_the_argument(random_bodies, kwargs, error, message):
    sim = nbody.Simulation(*random_bodies)
    args = {"position": [5, 0, 0], "mass": 1.0, **kwargs}
    with pytest.raises(error) as caught:
        sim.add(**args)
    assert str(caught.value) == message
    assert sim.n == len(random_bodies[2])


def test_remove_refuses_bad_indices_and_ids(random_bodies):
    sim = nbody.Simulation(*random_bodies)
    with pytest.raises(IndexError, match=r"^remove: index 4611686018427387904 is out of range \(12 bodies\)$"):
        sim.remove(2**62)
    with pytest.raises(TypeError, match=r"^remove\(\): indices must be integers or a boolean mask$"):
        sim.remove([2**70])  # numpy makes an object array of it
    with pytest.raises(IndexError, match=r"^remove: index 9223372036854775808 is out of range \(12 bodies\)$"):
        sim.remove(np.array([2**63], dtype=np.uint64))
    with pytest.raises(TypeError, match=r"^ids: expected integers, got an array of dtype float64$"):
        sim.remove(ids=1.5)
    with pytest.raises(nbody.Error, match=r"^ids\[0\]: must be >= 1 \(got -1\)$"):
        sim.remove(ids=-1)
    assert sim.n == 12
