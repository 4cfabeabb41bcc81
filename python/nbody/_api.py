"""The parts of nbody.Simulation written in Python: add() with REBOUND's keywords and
orbital elements, the sim.particles view, move_to_com(). Bound as methods of the C++ class
(src/python/python_api_binding.cpp); the arrays underneath are the C++ ones."""
import math

import numpy as np

_CARTESIAN = ("x", "y", "z", "vx", "vy", "vz")
_ORBITAL = ("a", "P", "e", "inc", "Omega", "omega", "f", "M")
_KEYWORDS = ("m", "r", "id", "primary") + _CARTESIAN + _ORBITAL
_ARRAYS = ("position", "velocity", "mass", "radius", "id")


def add(sim, *args, **kwargs):
    """Simulation.add: see its docstring."""
    if len(args) == 1 and isinstance(args[0], Particle) and not kwargs:
        p = args[0]
        return sim._add(p.xyz, p.vxyz, p.m, p.r)
    if args or any(k in kwargs for k in ("position", "velocity", "mass", "radius")):
        return _add_arrays(sim, args, kwargs)
    return _add_keywords(sim, kwargs)


def _add_arrays(sim, args, kwargs):
    if len(args) > len(_ARRAYS):
        raise TypeError(f"add() takes at most {len(_ARRAYS)} positional arguments "
                        f"(position, velocity, mass, radius, id), got {len(args)}")
    values = dict(zip(_ARRAYS, args))
    for key, value in kwargs.items():
        if key not in _ARRAYS:
            hint = " (REBOUND's keywords m, x, ... go without position)" if key in _KEYWORDS else ""
            raise TypeError(f"add() got an unexpected keyword argument '{key}' with position "
                            f"(valid: {', '.join(_ARRAYS)}){hint}")
        if key in values:
            raise TypeError(f"add() got multiple values for argument '{key}'")
        values[key] = value
    if "position" not in values:
        raise TypeError("add(): position is missing (or give REBOUND's keywords m, x, y, z, ...)")
    return sim._add(values["position"], values.get("velocity", 0.0), values.get("mass", 1.0),
                    values.get("radius", 0.0), values.get("id", 0))


def _number(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"add(): {name} expects a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise _error(f"add: {name}: must be finite (got {value:g})")
    return value


def _error(message):
    from ._nbody import Error
    return Error(message)


def _add_keywords(sim, kwargs):
    for key in kwargs:
        if key not in _KEYWORDS:
            raise TypeError(f"add() got an unexpected keyword argument '{key}' "
                            f"(valid: {', '.join(_KEYWORDS)}; or position, velocity, mass, radius)")
    orbital = [k for k in _ORBITAL if k in kwargs]
    cartesian = [k for k in _CARTESIAN if k in kwargs]
    r = kwargs.get("r", 0.0)
    ident = kwargs.get("id", 0)
    if not orbital:
        if "primary" in kwargs:
            raise TypeError("add(): primary= goes with orbital elements (a, e, inc, Omega, omega, f)")
        xyz = [_number(k, kwargs.get(k, 0.0)) for k in _CARTESIAN]
        return sim._add(xyz[:3], xyz[3:], kwargs.get("m", 1.0), r, ident)
    if cartesian:
        raise TypeError(f"add(): give either cartesian coordinates ({', '.join(cartesian)}) or "
                        f"orbital elements ({', '.join(orbital)}), not both")
    # REBOUND's default m=0 with orbital elements: a test particle (see sim.n_active).
    m = _number("m", kwargs.get("m", 0.0))
    elements = {k: _number(k, kwargs[k]) for k in orbital}
    if "f" in elements and "M" in elements:
        raise TypeError("add(): give f (true anomaly) or M (mean anomaly), not both")
    if ("a" in elements) == ("P" in elements):
        raise TypeError("add(): orbital elements need a (semi-major axis) or P (period), one of them")
    pm, pos, vel = _primary(sim, kwargs.get("primary"))
    mu = sim.G * (pm + m)
    if "P" in elements:
        P = elements["P"]
        if not P > 0:
            raise _error(f"add: P: the period must be > 0 (got {P:g})")
        elements["a"] = (mu * P * P / (4 * math.pi ** 2)) ** (1 / 3)
    xyz, vxyz = orbit_to_cartesian(mu, **{k: v for k, v in elements.items() if k != "P"})
    return sim._add(pos + xyz, vel + vxyz, m, r, ident)


def _primary(sim, primary):
    """(mass, position, velocity) of the primary: a Particle, an index, or None for the
    centre of mass of the bodies so far (REBOUND's default)."""
    if primary is None:
        if len(sim) == 0:
            raise _error("add: orbital elements need a primary: add the central body first "
                         "(e.g. sim.add(m=1))")
        m = sim.masses
        mass = m.sum()
        if not mass > 0:
            raise _error("add: orbital elements need a primary with mass: the bodies so far have "
                         "none (give primary=, or add the central body first)")
        return mass, (sim.positions * m[:, None]).sum(0) / mass, (sim.velocities * m[:, None]).sum(0) / mass
    if isinstance(primary, (int, np.integer)) and not isinstance(primary, bool):
        primary = Particles(sim)[int(primary)]
    if not isinstance(primary, Particle):
        raise TypeError(f"add(): primary expects a body of sim.particles or an index, got "
                        f"{type(primary).__name__}")
    return primary.m, np.array(primary.xyz), np.array(primary.vxyz)


def _true_anomaly(e, M):
    """f from the mean anomaly M (Kepler's equation by Newton's method)."""
    if e < 1:
        M = math.remainder(M, 2 * math.pi)
        E = M if e < 0.8 else math.copysign(math.pi, M)
        for _ in range(100):
            step = (E - e * math.sin(E) - M) / (1 - e * math.cos(E))
            E -= step
            if abs(step) < 1e-15:
                break
        return 2 * math.atan2(math.sqrt(1 + e) * math.sin(E / 2), math.sqrt(1 - e) * math.cos(E / 2))
    F = math.asinh(M / e)
    for _ in range(100):
        step = (e * math.sinh(F) - F - M) / (e * math.cosh(F) - 1)
        F -= step
        if abs(step) < 1e-15:
            break
    return 2 * math.atan(math.sqrt((e + 1) / (e - 1)) * math.tanh(F / 2))


def orbit_to_cartesian(mu, a, e=0.0, inc=0.0, Omega=0.0, omega=0.0, f=None, M=None):
    """Position and velocity relative to the primary of a Kepler orbit with G (M + m) = mu,
    as REBOUND's reb_tools_orbit_to_particle (angles in radians)."""
    if e < 0:
        raise _error(f"add: e: the eccentricity must be >= 0 (got {e:g})")
    if e == 1:
        raise _error("add: e: a parabolic orbit (e = 1) has no semi-major axis; use x, y, z, vx, ... (got 1)")
    if e < 1 and not a > 0:
        raise _error(f"add: a: a bound orbit (e < 1) needs a > 0 (got {a:g})")
    if e > 1 and not a < 0:
        raise _error(f"add: a: a hyperbolic orbit (e > 1) needs a < 0, as in REBOUND (got {a:g})")
    if not mu > 0:
        raise _error(f"add: G (M + m) must be > 0 for an orbit (got {mu:g})")
    f = _true_anomaly(e, M) if M is not None else (0.0 if f is None else f)
    if 1 + e * math.cos(f) <= 0:
        raise _error(f"add: f: beyond the asymptotes of the hyperbolic orbit (got {f:g})")
    r = a * (1 - e * e) / (1 + e * math.cos(f))
    v0 = math.sqrt(mu / a / (1 - e * e))
    cO, sO = math.cos(Omega), math.sin(Omega)
    co, so = math.cos(omega), math.sin(omega)
    cf, sf = math.cos(f), math.sin(f)
    ci, si = math.cos(inc), math.sin(inc)
    xyz = np.array([r * (cO * (co * cf - so * sf) - sO * (so * cf + co * sf) * ci),
                    r * (sO * (co * cf - so * sf) + cO * (so * cf + co * sf) * ci),
                    r * (so * cf + co * sf) * si])
    vxyz = np.array([v0 * ((e + cf) * (-ci * co * sO - cO * so) - sf * (co * cO - ci * so * sO)),
                     v0 * ((e + cf) * (ci * co * cO - sO * so) - sf * (co * sO + ci * so * cO)),
                     v0 * ((e + cf) * co * si - sf * si * so)])
    return xyz, vxyz


def move_to_com(sim):
    """Simulation.move_to_com: the centre of mass at rest at the origin."""
    if len(sim) == 0:
        return
    m = sim.masses[:, None]  # test particles too, by their masses (0: they do not count)
    mass = m.sum()
    if not mass > 0:
        raise _error("move_to_com: the bodies have no mass (only test particles of mass 0)")
    p, v = sim.positions, sim.velocities
    sim.positions = p - (p * m).sum(0) / mass
    sim.velocities = v - (v * m).sum(0) / mass


def _attribute(array, doc):
    def get(self):
        return float(getattr(self._sim, array)[self._check()])

    def set(self, value):
        i = self._check()
        values = getattr(self._sim, array)
        if values.flags.writeable:  # CPU: a view, checked before the next step
            values[i] = value
        else:  # GPU: a copy, assigned back
            values = values.copy()
            values[i] = value
            setattr(self._sim, array, values)

    return property(get, set, doc=doc)


class Particle:
    """One body of a Simulation, by index, as REBOUND's sim.particles[i]: p.x, p.vx, p.m,
    p.r read and write the simulation's arrays (sim.x[i], ...). The index is kept: after
    remove() or a merge, take the particle again."""

    __slots__ = ("_sim", "_index")

    def __init__(self, sim, index):
        self._sim = sim
        self._index = index

    def _check(self):
        if not 0 <= self._index < len(self._sim):
            raise IndexError(f"particle {self._index}: the simulation now has {len(self._sim)} bodies")
        return self._index

    x = _attribute("x", "x position")
    y = _attribute("y", "y position")
    z = _attribute("z", "z position")
    vx = _attribute("vx", "x velocity")
    vy = _attribute("vy", "y velocity")
    vz = _attribute("vz", "z velocity")
    m = _attribute("masses", "mass (> 0; >= 0 for a test particle, see Simulation.n_active)")
    r = _attribute("radii", "radius (>= 0)")

    @property
    def id(self):
        """The body's id (kept through steps and files)."""
        return int(self._sim.ids[self._check()])

    @property
    def index(self):
        return self._index

    @property
    def xyz(self):
        """[x, y, z] (a list, as REBOUND's)."""
        return [self.x, self.y, self.z]

    @xyz.setter
    def xyz(self, value):
        self.x, self.y, self.z = value

    @property
    def vxyz(self):
        """[vx, vy, vz] (a list, as REBOUND's)."""
        return [self.vx, self.vy, self.vz]

    @vxyz.setter
    def vxyz(self, value):
        self.vx, self.vy, self.vz = value

    def __repr__(self):
        i = self._check()
        return (f"<nbody.Particle {i} id={self.id} m={self.m:g} x={self.x:g} y={self.y:g} "
                f"z={self.z:g} vx={self.vx:g} vy={self.vy:g} vz={self.vz:g}>")


class Particles:
    """sim.particles: the bodies as a sequence of Particle (len, [i], [-1], slices, for)."""

    __slots__ = ("_sim",)

    def __init__(self, sim):
        self._sim = sim

    def __len__(self):
        return len(self._sim)

    def __getitem__(self, key):
        n = len(self._sim)
        if isinstance(key, slice):
            return [Particle(self._sim, i) for i in range(*key.indices(n))]
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"particles: an index is an integer, got {type(key).__name__}")
        i = int(key) + n if key < 0 else int(key)
        if not 0 <= i < n:
            raise IndexError(f"particles[{key}]: out of range ({n} bodies)")
        return Particle(self._sim, i)

    def __iter__(self):
        return (Particle(self._sim, i) for i in range(len(self._sim)))

    def __repr__(self):
        return f"<nbody.Particles of {len(self._sim)} bodies>"
