// Test particles from Python, as REBOUND's: sim.n_active (bodies [0, n_active) active, the
// others test particles; -1: every body active) and sim.testparticle_type (0: test
// particles feel the active bodies only; 1: they pull on them too), held by the state
// (ParticleSystem::n_active, test_particle_type), so that copies, reconfigure() and the
// files keep them. Bodies of mass 0 added after every body with mass become test particles
// while n_active is not set (REBOUND's sim.add(m=0, ...)); once it is set, every body added
// is a test particle (REBOUND: the particles after N_active).
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "nbody/input_error.hpp"
#include "python/bindings.hpp"

namespace nbody::python {

namespace {

/// A Python int (not a bool, numpy's integers too) for the property `name`: a float or a
/// bool is a TypeError, as for the run options.
long long integer_value(nb::handle value, const char* name) {
  if (nb::isinstance<nb::bool_>(value) || !PyIndex_Check(value.ptr())) {
    throw nb::type_error(
        fmt::format("{}: expected an integer, got {}", name, nb::type_name(value.type()).c_str())
            .c_str());
  }
  const nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index) throw nb::python_error();
  long long v = 0;
  if (!nb::try_cast(index, v)) {
    throw input_error(name, "is beyond the range of a 64-bit integer",
                      nb::cast<std::string>(nb::repr(index)));
  }
  return v;
}

/// "mass[i]: test particles (mass 0) must come after every body with mass, and ..." for a
/// body with mass that add() was given after massless ones.
Error massive_after_massless(std::size_t i, const std::string& massless, double mass) {
  return input_error(fmt::format("mass[{}]", i),
                     fmt::format("test particles (mass 0) must come after every body with "
                                 "mass, and {}: add the bodies with mass first (or set "
                                 "sim.n_active, after which every body added is a test particle)",
                                 massless),
                     mass);
}

}  // namespace

long long PySimulation::n_active() const {
  const ParticleSystem& s = state();
  return s.n_active == ParticleSystem::kAllActive ? -1 : static_cast<long long>(s.n_active);
}

void PySimulation::set_n_active(long long value) {
  const ParticleSystem& s = state();
  const std::size_t n = s.size();
  if (value < -1 || (value >= 0 && static_cast<unsigned long long>(value) > n)) {
    throw input_error(
        "n_active",
        fmt::format("must be -1 (every body active) or from 0 to the number of bodies, {}", n),
        value);
  }
  const std::size_t active = value == -1 ? n : static_cast<std::size_t>(value);
  for (std::size_t i = 0; i < active; ++i) {
    if (obeys(s.mass[i], ValueRule::Positive)) continue;
    throw input_error(
        "n_active",
        fmt::format("an active body needs a mass > 0, and masses[{}] is {}{}", i,
                    printable(s.mass[i]), value == -1 ? "; -1 makes every body active" : ""),
        value);
  }
  const std::size_t next = value == -1 ? ParticleSystem::kAllActive : active;
  n_active_given_ = value != -1;
  if (next == s.n_active) return;
  ParticleSystem& t = mutable_state();  // GPU path: uploaded before the next step
  t.n_active = next;
  t.invalidate_accelerations();
}

void PySimulation::set_testparticle_type(long long value) {
  if (value != 0 && value != 1) {
    throw input_error("testparticle_type",
                      "must be 0 (test particles feel the active bodies only) or 1 (they pull "
                      "on the active bodies too)",
                      value);
  }
  if (value == state().test_particle_type) return;
  ParticleSystem& t = mutable_state();
  t.test_particle_type = static_cast<int>(value);
  t.invalidate_accelerations();
}

bool PySimulation::follows_masses(const ParticleSystem& ps) {
  if (ps.n_active == ParticleSystem::kAllActive) return true;
  if (!ps.has_test_particles()) return false;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if ((i < ps.n_active) != (ps.mass[i] > 0)) return false;
  }
  return true;
}

std::size_t PySimulation::n_active_with(ParticleSystem& incoming) const {
  const ParticleSystem& s = state();
  const std::size_t before = s.size();
  std::size_t n_active = s.n_active;
  if (!n_active_given_) {
    if (s.has_test_particles()) {  // the simulation ends with test particles: only more
      for (std::size_t i = 0; i < incoming.size(); ++i) {
        if (incoming.mass[i] == 0) continue;
        throw massive_after_massless(
            i, fmt::format("the simulation's bodies from index {} are test particles", s.n_active),
            incoming.mass[i]);
      }
    } else {
      incoming.n_active = ParticleSystem::kAllActive;
      const std::size_t late = mark_massless_test_particles(incoming);
      if (late < incoming.size()) {
        std::size_t first = 0;
        while (incoming.mass[first] != 0) ++first;
        throw massive_after_massless(late, fmt::format("mass[{}] is 0", first),
                                     incoming.mass[late]);
      }
      n_active =
          incoming.has_test_particles() ? before + incoming.n_active : ParticleSystem::kAllActive;
    }
  }
  // The bodies added as validate_bodies() sees them: those from n_active on test particles.
  incoming.n_active = n_active == ParticleSystem::kAllActive ? n_active
                      : n_active > before                    ? n_active - before
                                                             : 0;
  incoming.test_particle_type = s.test_particle_type;
  return n_active;
}

void bind_test_particles(SimulationClass& cls) {
  cls.def_prop_rw(
      "n_active",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return sim.n_active();
      },
      [](PySimulation& sim, nb::handle value) {
        PySimulation::Busy busy(sim);
        sim.set_n_active(integer_value(value, "n_active"));
      },
      "REBOUND's N_active: the bodies [0, n_active) are active, the others test particles, "
      "which feel the active bodies and never each other (the force work is O(N n_active)). "
      "-1 (the default): every body active. An active body needs a mass > 0; a test particle "
      "may have mass 0. Bodies added with m=0 after every body with mass become test "
      "particles by themselves (n_active = the number with mass) while n_active is not set; "
      "once it is set (0 to N), every body added is a test particle, as in REBOUND. "
      "-1 makes every body active again.");
  cls.def_prop_rw(
      "testparticle_type",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return sim.testparticle_type();
      },
      [](PySimulation& sim, nb::handle value) {
        PySimulation::Busy busy(sim);
        sim.set_testparticle_type(integer_value(value, "testparticle_type"));
      },
      "REBOUND's testparticle_type: 0 (the default): test particles feel the active bodies "
      "and nothing feels them (their masses play no part); 1: they also pull on the active "
      "bodies (never on each other).");
}

}  // namespace nbody::python
