// The parts of nbody.Simulation written in Python (python/nbody/_api.py): add() with
// REBOUND's keywords and orbital elements, the particles view, move_to_com(). They are
// bound here as methods that call into that module, rather than attached to the class
// from Python: a Python function stored on the class would tie the class to that module's
// globals in a cycle that outlives the interpreter (nanobind then reports leaks at exit).
#include <nanobind/nanobind.h>

#include "python/bindings.hpp"

namespace nbody::python {

namespace {

/// nbody._api.NAME(self, *args, **kwargs).
nb::object call_api(const char* name, nb::handle self, const nb::args& args,
                    const nb::kwargs& kwargs) {
  const nb::object f = nb::module_::import_("nbody._api").attr(name);
  nb::list all;
  all.append(self);
  for (nb::handle a : args) all.append(a);
  const nb::tuple call_args(all);
  PyObject* result = PyObject_Call(f.ptr(), call_args.ptr(), kwargs.ptr());
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

}  // namespace

void bind_python_api(SimulationClass& cls) {
  cls.def(
      "add",
      [](nb::handle self, nb::args args, nb::kwargs kwargs) {
        return call_api("add", self, args, kwargs);
      },
      "Adds bodies; returns the new id (or an array of ids).\n\n"
      "REBOUND's keywords, one body: add(m=1.0, x=0, y=0, z=0, vx=0, vy=0, vz=0, r=0, id=0), "
      "or with orbital elements about `primary` (a body of sim.particles, an index, or by "
      "default the centre of mass of the bodies so far): add(m=1e-3, a=1, e=0.1, inc=0, "
      "Omega=0, omega=0, f=0) (or M, the mean anomaly, instead of f; or P, the period, "
      "instead of a). m defaults to 1 with cartesian coordinates and, as in REBOUND, to 0 "
      "with orbital elements. Bodies of mass 0 after every body with mass are test "
      "particles (see n_active).\n\n"
      "Arrays, one or k bodies: add(position, velocity=0, mass=1, radius=0, id=0) with "
      "position of 3 or (k, 3) (the others broadcast).\n\n"
      "add(particle) adds a copy of a body of sim.particles (of this or another simulation). "
      "id 0 gives the next free id. Bodies are checked as files are (m > 0, r >= 0, finite "
      "values, unused ids; m >= 0 for test particles).");
  cls.def_prop_ro(
      "particles",
      [](nb::handle self) { return call_api("Particles", self, nb::args(), nb::kwargs()); },
      "The bodies as a sequence, as REBOUND's sim.particles: len(sim.particles), "
      "sim.particles[i].x, .vx, .m, .r, .id, .xyz, .vxyz; reading and writing go through "
      "the arrays sim.x, sim.masses, ... (views of the simulation's memory on the CPU).");
  cls.def(
      "move_to_com",
      [](nb::handle self) { return call_api("move_to_com", self, nb::args(), nb::kwargs()); },
      "Moves the bodies so that the centre of mass is at rest at the origin (as REBOUND's "
      "move_to_com(): every body by its mass, test particles included).");
}

}  // namespace nbody::python
