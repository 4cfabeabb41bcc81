"""Test particles, as REBOUND's N_active and testparticle_type: sim.n_active,
sim.testparticle_type, massless bodies added with add(m=0, ...), the physics (the active
bodies' orbits untouched by type-0 test particles, bit for bit; test particles never pulling
on each other), the copies and files that keep them, and REBOUND's own run where it is
installed."""
import numpy as np
import pytest

import nbody
from conftest import relative_errors


def planet_and_test_particles(n_test=100, test_mass=0.0, dt=1e-3, **options):
    """A Sun (m = 1), a planet (m = 1e-3, a = 1, circular) and n_test bodies of test_mass on
    circular orbits at a = 2..5, a golden angle apart."""
    sim = nbody.Simulation(dt=dt, **options)
    sim.add(m=1.0)
    sim.add(m=1e-3, a=1.0)
    for k, a in enumerate(np.linspace(2, 5, n_test)):
        sim.add(m=test_mass, a=a, f=2.399963 * k)
    return sim


def direct_sum(positions, masses, targets, sources, G=1.0):
    """The accelerations of bodies `targets` from bodies `sources` (a float64 pair sum)."""
    d = positions[sources][None, :, :] - positions[targets][:, None, :]
    r2 = (d * d).sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(r2 > 0, masses[sources][None, :] / (r2 * np.sqrt(r2)), 0.0)
    return G * (d * w[..., None]).sum(1)


# ---- The properties ------------------------------------------------------------------------

def test_defaults():
    sim = nbody.Simulation()
    assert sim.n_active == -1 and sim.testparticle_type == 0
    sim = nbody.generate("plummer", n=20)
    assert sim.n_active == -1 and sim.testparticle_type == 0
    assert "n_active" not in repr(sim)


def test_set_and_read_back(random_bodies):
    sim = nbody.Simulation(*random_bodies)
    sim.n_active = 5
    assert sim.n_active == 5 and type(sim.n_active) is int
    sim.testparticle_type = 1
    assert sim.testparticle_type == 1
    assert "n_active=5, testparticle_type=1" in repr(sim)
    sim.n_active = np.int64(0)  # numpy's integers too; 0: every body a test particle
    assert sim.n_active == 0
    sim.n_active = sim.n
    assert sim.n_active == sim.n
    sim.n_active = -1
    assert sim.n_active == -1
    sim.testparticle_type = 0
    assert sim.testparticle_type == 0


@pytest.mark.parametrize("name, value, error, message", [
    ("n_active", 13, nbody.Error,
     "n_active: must be -1 (every body active) or from 0 to the number of bodies, 12 (got 13)"),
    ("n_active", -2, nbody.Error,
     "n_active: must be -1 (every body active) or from 0 to the number of bodies, 12 (got -2)"),
    ("n_active", 2 ** 70, nbody.Error,
     "n_active: is beyond the range of a 64-bit integer (got 1180591620717411303424)"),
    ("n_active", 2.0, TypeError, "n_active: expected an integer, got float"),
    ("n_active", True, TypeError, "n_active: expected an integer, got bool"),
    ("testparticle_type", 2, nbody.Error,
     "testparticle_type: must be 0 (test particles feel the active bodies only) or 1 (they pull "
     "on the active bodies too) (got 2)"),
    ("testparticle_type", -1, nbody.Error,
     "testparticle_type: must be 0 (test particles feel the active bodies only) or 1 (they pull "
     "on the active bodies too) (got -1)"),
    ("testparticle_type", "1", TypeError, "testparticle_type: expected an integer, got str"),
])
def test_bad_values_are_refused_and_change_nothing(random_bodies, name, value, error, message):
    sim = nbody.Simulation(*random_bodies)
    sim.n_active = 4
    before = (sim.n_active, sim.testparticle_type)
    with pytest.raises(error) as caught:
        setattr(sim, name, value)
    assert str(caught.value) == message
    if error is nbody.Error:
        assert isinstance(caught.value, ValueError)
    assert (sim.n_active, sim.testparticle_type) == before


def test_active_bodies_need_mass():
    sim = planet_and_test_particles(n_test=3)
    assert sim.n_active == 2
    with pytest.raises(nbody.Error) as caught:
        sim.n_active = 3
    assert str(caught.value) == "n_active: an active body needs a mass > 0, and masses[2] is 0 (got 3)"
    with pytest.raises(nbody.Error) as caught:
        sim.n_active = -1
    assert str(caught.value) == ("n_active: an active body needs a mass > 0, and masses[2] is 0; -1 "
                                 "makes every body active (got -1)")
    assert sim.n_active == 2
    sim.n_active = 1  # the planet a test particle too (one with mass)
    assert sim.n_active == 1


# ---- Massless bodies -----------------------------------------------------------------------

def test_massless_bodies_added_after_the_massive_ones_are_test_particles():
    sim = nbody.Simulation()
    sim.add(m=1.0)
    sim.add(m=1e-3, a=1.0)
    assert sim.n_active == -1
    sim.add(m=0, a=2.0)  # REBOUND's way
    sim.add(a=2.5, f=1.0)  # orbital elements: m defaults to 0, as in REBOUND
    sim.add(position=[[3, 0, 0], [0, 3.5, 0]], velocity=[[0, 0.5, 0], [-0.5, 0, 0]], mass=0)
    assert sim.n == 6 and sim.n_active == 2
    np.testing.assert_array_equal(sim.masses, [1, 1e-3, 0, 0, 0, 0])
    sim.step(10)
    assert np.all(np.isfinite(sim.positions))
    # Arrays with the massless bodies last in one call.
    other = nbody.Simulation()
    other.add(position=np.eye(3), mass=[1.0, 0.5, 0.0])
    assert other.n_active == 2
    # And from arrays, as the file readers take them.
    arrays = nbody.Simulation(positions=np.eye(4, 3), masses=[1.0, 1e-3, 0.0, 0.0])
    assert arrays.n_active == 2 and arrays.testparticle_type == 0
    with pytest.raises(nbody.Error) as caught:
        nbody.Simulation(positions=np.eye(3), masses=[1.0, 0.0, 1e-3])
    assert str(caught.value) == ("masses[2]: test particles (mass 0) must come after every body "
                                 "with mass, and masses[1] is 0 (got 0.001)")


@pytest.mark.parametrize("first, then, message", [
    ([1.0, 0.0], [1e-3],
     "mass[0]: test particles (mass 0) must come after every body with mass, and the "
     "simulation's bodies from index 1 are test particles: add the bodies with mass first (or "
     "set sim.n_active, after which every body added is a test particle) (got 0.001)"),
    ([1.0], [0.0, 0.0, 2.0],
     "mass[2]: test particles (mass 0) must come after every body with mass, and mass[0] is 0: "
     "add the bodies with mass first (or set sim.n_active, after which every body added is a test "
     "particle) (got 2)"),
])
def test_a_body_with_mass_after_the_test_particles_is_refused(first, then, message):
    sim = nbody.Simulation()
    sim.add(position=np.zeros((len(first), 3)) + np.arange(len(first))[:, None], mass=first)
    before = (sim.n, sim.n_active)
    with pytest.raises(nbody.Error) as caught:
        sim.add(position=np.ones((len(then), 3)) * 7 + np.arange(len(then))[:, None], mass=then)
    assert str(caught.value) == message
    assert (sim.n, sim.n_active) == before
    with pytest.raises(nbody.Error, match=r"^mass\[0\]: must be finite and > 0 \(got -1\)$"):
        sim.add(m=-1, x=3)


def test_once_n_active_is_set_every_body_added_is_a_test_particle():
    sim = planet_and_test_particles(n_test=2)
    two = planet_and_test_particles(n_test=0)
    sim.n_active = 2
    sim.add(m=0.5, x=6, vy=0.4)  # with mass, and still a test particle (REBOUND's rule)
    assert sim.n == 5 and sim.n_active == 2
    sim.step(50)
    two.step(50)
    np.testing.assert_array_equal(sim.positions[:2], two.positions)
    with pytest.raises(nbody.Error, match=r"^n_active: an active body needs a mass > 0"):
        sim.n_active = -1  # the massless ones cannot be active


def test_removing_the_test_particles_makes_every_body_active_again():
    sim = planet_and_test_particles(n_test=3)
    sim.remove(0)  # the Sun: one active body fewer
    assert sim.n_active == 1
    sim.remove([1, 2, 3])
    assert sim.n_active == -1
    sim.add(m=0.1, x=2, vy=0.1)  # an active body again
    assert sim.n_active == -1 and sim.n == 2


def test_masses_edited_through_the_views_keep_the_rules():
    sim = planet_and_test_particles(n_test=3)
    sim.masses[4] = 1e-6  # a test particle may have mass
    sim.step()
    sim.masses[4] = -1.0
    with pytest.raises(nbody.Error, match=r"^masses\[4\]: must be finite and >= 0 \(got -1\)$"):
        sim.step()
    sim.masses[4] = 0.0
    sim.masses[1] = 0.0  # an active body may not
    with pytest.raises(nbody.Error, match=r"^masses\[1\]: must be finite and > 0 \(got 0\)$"):
        sim.step()
    sim.masses[1] = 1e-3
    sim.masses = np.array([1.0, 1e-3, 0.0, 0.0, 0.0])  # assigned whole: checked at once
    with pytest.raises(nbody.Error, match=r"^masses\[3\]: must be finite and >= 0 \(got -1\)$"):
        sim.masses = np.array([1.0, 1e-3, 0.0, -1.0, 0.0])
    with pytest.raises(nbody.Error, match=r"^masses\[0\]: must be finite and > 0 \(got 0\)$"):
        sim.masses = np.zeros(5)
    sim.step()


# ---- The physics ---------------------------------------------------------------------------

def test_type_0_leaves_the_active_bodies_bit_for_bit_as_without_test_particles():
    two = planet_and_test_particles(n_test=0)
    sim = planet_and_test_particles(n_test=100)
    assert sim.n == 102 and sim.n_active == 2 and sim.testparticle_type == 0
    two.step(1000)
    sim.step(1000)
    assert np.array_equal(sim.positions[:2], two.positions)
    assert np.array_equal(sim.velocities[:2], two.velocities)
    # The test particles feel the active bodies only (a float64 pair sum).
    pos, m = sim.positions, sim.masses
    expected = direct_sum(pos, m, np.arange(2, 102), np.arange(2))
    assert relative_errors(sim.accelerations()[2:], expected).max() < 1e-13
    # Still on their orbits about the Sun: nothing went astray.
    r = np.linalg.norm(pos[2:] - pos[0], axis=1)
    np.testing.assert_allclose(r, np.linspace(2, 5, 100), rtol=1e-2)


def test_type_0_test_particles_with_mass_pull_on_nothing():
    two = planet_and_test_particles(n_test=0)
    sim = planet_and_test_particles(n_test=100, test_mass=1e-6)
    assert sim.n_active == -1  # bodies with mass: active until n_active says otherwise
    sim.n_active = 2
    two.step(1000)
    sim.step(1000)
    assert np.array_equal(sim.positions[:2], two.positions)
    pos, m = sim.positions, sim.masses
    acc = sim.accelerations()
    from_active = direct_sum(pos, m, np.arange(2, 102), np.arange(2))
    from_all = direct_sum(pos, m, np.arange(2, 102), np.arange(102))
    assert relative_errors(acc[2:], from_active).max() < 1e-13
    assert relative_errors(from_all, from_active).max() > 1e-7  # the check can tell them apart


def test_type_1_test_particles_pull_on_the_active_bodies_and_not_on_each_other():
    two = planet_and_test_particles(n_test=0)
    sim = planet_and_test_particles(n_test=100, test_mass=1e-6)
    sim.n_active = 2
    sim.testparticle_type = 1
    two.step(1000)
    sim.step(1000)
    assert not np.array_equal(sim.positions[1], two.positions[1])
    assert np.abs(sim.positions[1] - two.positions[1]).max() > 1e-10
    pos, m = sim.positions, sim.masses
    acc = sim.accelerations()
    active, tests = np.arange(2), np.arange(2, 102)
    assert relative_errors(acc[:2], direct_sum(pos, m, active, np.arange(102))).max() < 1e-13
    assert relative_errors(acc[2:], direct_sum(pos, m, tests, active)).max() < 1e-13
    # Two test particles next to each other, far from the Sun: each feels the Sun alone
    # (their pull on each other would be a thousand times the Sun's).
    pair = nbody.Simulation(positions=[[0, 0, 0], [100, 0, 0], [100.001, 0, 0]],
                            masses=[1.0, 1e-3, 1e-3])
    pair.n_active = 1
    pair.testparticle_type = 1
    a = pair.accelerations()
    np.testing.assert_allclose(a[1:, 0], [-1 / 100 ** 2, -1 / 100.001 ** 2], rtol=1e-14)
    np.testing.assert_allclose(a[0, 0], 2e-3 / 100 ** 2, rtol=1e-4)  # and pull on the Sun


# ---- Copies, option changes and files keep them --------------------------------------------

def keeps(sim, other):
    assert (other.n_active, other.testparticle_type) == (sim.n_active, sim.testparticle_type)
    np.testing.assert_array_equal(other.masses, sim.masses)


def test_copy_and_option_changes_keep_them():
    sim = planet_and_test_particles(n_test=20, test_mass=1e-6)
    sim.n_active = 2
    sim.testparticle_type = 1
    copy = sim.copy()
    keeps(sim, copy)
    copy.step(20)
    sim.step(20)
    np.testing.assert_array_equal(copy.positions, sim.positions)
    sim.set(gravity="tree", theta=0.3)
    keeps(sim, copy)
    pos, m = sim.positions, sim.masses
    acc = sim.accelerations()  # the test particles still by the float64 sum of the active ones
    assert relative_errors(acc[2:], direct_sum(pos, m, np.arange(2, 22), np.arange(2))).max() < 1e-13
    sim.set(gravity="direct", integrator="ias15")
    sim.evolve(sim.time + 0.1)
    assert (sim.n_active, sim.testparticle_type) == (2, 1)
    sim.move_to_com()  # every body by its mass, as REBOUND's
    np.testing.assert_allclose(sim.diagnostics()["com"], 0, atol=1e-15)
    assert (sim.n_active, sim.testparticle_type) == (2, 1)


@pytest.mark.parametrize("test_mass, kind", [(1e-6, 1), (0.0, 0)])
def test_checkpoints_and_files_keep_them(tmp_path, test_mass, kind):
    # Type 1 with mass, and massless type 0: checkpoints go on bit for bit; HDF5, text and
    # CSV keep n_active and the type (text and CSV by their masses, or by the '# nbody:' line).
    sim = planet_and_test_particles(n_test=10, test_mass=test_mass)
    sim.n_active = 2
    sim.testparticle_type = kind
    sim.step(5)
    sim.save_checkpoint(tmp_path / "c.h5")
    back = nbody.load_checkpoint(tmp_path / "c.h5")
    keeps(sim, back)
    back.step(20)
    sim.step(20)
    np.testing.assert_array_equal(back.positions, sim.positions)  # goes on bit for bit
    for name in ("s.hdf5", "s.csv", "s.txt"):
        sim.save(tmp_path / name)
        keeps(sim, nbody.load(tmp_path / name))
    sim.evolve(sim.time + 0.01, output_dir=tmp_path / "run", snapshot_every=1, checkpoint_every=1)
    keeps(sim, nbody.load(tmp_path / "run" / "snapshot_0001.hdf5"))
    keeps(sim, nbody.load_checkpoint(tmp_path / "run"))


@pytest.mark.parametrize("kind, test_mass", [(0, 0.0), (0, 1e-5), (1, 1e-5)])
def test_matches_rebound_n_active(kind, test_mass):
    rebound = pytest.importorskip("rebound", reason="REBOUND (pip install rebound) is not installed: "
                                                    "no cross-check of N_active")
    dt, steps = 0.01, 300
    sim = planet_and_test_particles(n_test=40, test_mass=test_mass, dt=dt)
    sim.n_active = 2
    sim.testparticle_type = kind
    x0, v0, m = sim.positions, sim.velocities, sim.masses
    n = len(m)
    sim.step(steps)
    ref = rebound.Simulation()
    for x, v, mass in zip(x0, v0, m):
        ref.add(m=mass, x=x[0], y=x[1], z=x[2], vx=v[0], vy=v[1], vz=v[2])
    ref.N_active = 2
    ref.testparticle_type = kind
    ref.integrator = "leapfrog"
    ref.dt = dt

    def state():
        xv = np.zeros((ref.N, 6))
        ref.serialize_particle_data(xyzvxvyvz=xv)
        return xv[:, :3], xv[:, 3:]

    def kick(h):  # REBOUND's N_active force: type 1 test particles also pull on the active bodies
        x, v = state()
        a = direct_sum(x, m, np.arange(n), np.arange(2))
        if kind == 1:
            a[:2] = direct_sum(x, m, np.arange(2), np.arange(n))
        for p, dv in zip(ref.particles, a * h):
            p.vx, p.vy, p.vz = p.vx + dv[0], p.vy + dv[1], p.vz + dv[2]

    def drift(h):
        for p in ref.particles:
            p.x, p.y, p.z = p.x + p.vx * h, p.y + p.vy * h, p.z + p.vz * h

    # nbody's leapfrog is kick-drift-kick, REBOUND's drift-kick-drift: n KDK steps are
    # K(h/2) D(h/2), n - 1 DKD steps, D(h/2) K(h/2).
    kick(dt / 2)
    drift(dt / 2)
    ref.steps(steps - 1)
    drift(dt / 2)
    kick(dt / 2)
    x, _ = state()
    assert relative_errors(sim.positions[1:], x[1:]).max() < 1e-12  # the planet, the test particles
    assert np.abs(sim.positions[0] - x[0]).max() < 1e-14  # the Sun, near the origin


def test_without_any_mass_orbits_and_the_centre_of_mass_are_refused():
    sim = nbody.Simulation()
    sim.add(m=0, x=1)  # a test particle with no active body: allowed, as in REBOUND
    assert sim.n_active == 0
    with pytest.raises(nbody.Error, match=r"^add: orbital elements need a primary with mass"):
        sim.add(a=1.0)
    with pytest.raises(nbody.Error, match=r"^move_to_com: the bodies have no mass"):
        sim.move_to_com()
    assert sim.n == 1


def test_models_with_massless_bodies_give_test_particles():
    # A disk of no mass around its central body, and the giants' debris disc.
    disk = nbody.generate("disk", n=10, disk_mass=0)
    assert disk.n_active == 1
    giants = nbody.generate("giants", n=105)
    assert giants.n_active == 5
    giants.step(10)
    assert np.all(np.isfinite(giants.positions))
