// nbody.Simulation: construction from numpy arrays, run options as properties, stepping
// with the GIL released, and the conserved quantities.
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "nbody/diagnostics.hpp"
#include "nbody/input_error.hpp"
#include "nbody/integrator.hpp"
#include "python/arrays.hpp"
#include "python/bindings.hpp"
#include "python/checks.hpp"
#include "python/errors.hpp"
#include "python/run_options.hpp"

namespace nbody::python {

using namespace nb::literals;

namespace {

/// Energies of the system (sim.energy()).
struct Energy {
  double kinetic = 0;
  double potential = 0;
  double total = 0;
};

ParticleSystem from_arrays(nb::handle positions, nb::handle velocities, nb::handle masses,
                           nb::handle radii, nb::handle ids, double time, int dim) {
  const InputArray x = as_float64(positions, "positions", {-1, 3});
  const std::size_t n = x.size();
  const auto count = static_cast<long>(n);
  const InputArray v = as_float64(velocities, "velocities", {count, 3});
  const InputArray m = as_float64(masses, "masses", {count});
  // Each argument checked under its own name (positions[3, 0]); what only the whole set
  // shows (a repeated id) is checked by PySimulation.
  check_values(x, "positions", Bound::Finite);
  check_values(v, "velocities", Bound::Finite);
  check_masses(m, "masses");  // 0: test particles, last (below)
  ParticleSystem ps;
  if (dim != 2 && dim != 3) throw input_error("dim", "must be 2 or 3", dim);
  if (!std::isfinite(time)) throw input_error("time", "must be finite", time);
  ps.dim = dim;
  ps.time = time;
  ps.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    ps.x[i] = x(i, 0), ps.y[i] = x(i, 1), ps.z[i] = x(i, 2);
    ps.vx[i] = v(i, 0), ps.vy[i] = v(i, 1), ps.vz[i] = v(i, 2);
    ps.mass[i] = m(i);
  }
  if (!radii.is_none()) {
    const InputArray r = as_float64(radii, "radii", {count});
    check_values(r, "radii", Bound::NonNegative);
    for (std::size_t i = 0; i < n; ++i) ps.radius[i] = r(i);
  }
  if (ids.is_none()) {
    ps.assign_sequential_ids();
  } else {
    const InputIds id = as_ids(ids, "ids");
    if (id.size() != n) {
      throw nb::value_error(fmt::format("ids: expected {} ids, got {}", n, id.size()).c_str());
    }
    check_ids(id, "ids", false);
    for (std::size_t i = 0; i < n; ++i) ps.id[i] = id(i);
  }
  mark_test_particles(ps, "masses");  // as the file readers do
  return ps;
}

/// Simulation()'s bodies: none (an empty simulation, bodies added later with add(), as
/// REBOUND's Simulation()), or arrays; velocities default to 0.
ParticleSystem bodies_from(nb::handle positions, nb::handle velocities, nb::handle masses,
                           nb::handle radii, nb::handle ids, double time, int dim) {
  if (positions.is_none()) {
    const char* given = !velocities.is_none() ? "velocities"
                        : !masses.is_none()   ? "masses"
                        : !radii.is_none()    ? "radii"
                        : !ids.is_none()      ? "ids"
                                              : nullptr;
    if (given)
      throw nb::type_error(fmt::format("Simulation(): {} given without positions", given).c_str());
    if (dim != 2 && dim != 3) throw input_error("dim", "must be 2 or 3", dim);
    if (!std::isfinite(time)) throw input_error("time", "must be finite", time);
    ParticleSystem ps;
    ps.dim = dim;
    ps.time = time;
    return ps;
  }
  if (masses.is_none())
    throw nb::type_error("Simulation(): masses are needed with positions (finite, > 0)");
  if (velocities.is_none()) {
    nb::module_ np = nb::module_::import_("numpy");
    // (N, 3) zeros for (N, 3) positions; a bad shape is then reported for positions.
    const nb::object zeros =
        np.attr("zeros_like")(np.attr("asarray")(positions, "dtype"_a = "float64"));
    return from_arrays(positions, zeros, masses, radii, ids, time, dim);
  }
  return from_arrays(positions, velocities, masses, radii, ids, time, dim);
}

nb::dict diagnostics_dict(const Diagnostics& d) {
  nb::dict out;
  out["total_mass"] = d.total_mass;
  out["kinetic"] = d.kinetic;
  out["potential"] = d.potential;
  out["total_energy"] = d.total_energy;
  out["energy_method"] = std::string(to_string(d.energy_method));
  out["virial_ratio"] = d.virial_ratio;
  out["momentum"] = vector3(d.momentum);
  out["angular_momentum"] = vector3(d.angular_momentum);
  out["com"] = vector3(d.com);
  out["com_velocity"] = vector3(d.com_velocity);
  return out;
}

void set_option(PySimulation& sim, const OptionSpec& spec, nb::handle value) {
  PySimulation::Busy busy(sim);
  RunOptions next = sim.options();
  spec.set(next, value);
  sim.set_options(next, spec.reconfigures);
}

std::string repr(PySimulation& sim) {
  const RunOptions& o = sim.options();
  std::string text = fmt::format(
      "nbody.Simulation(n={}, dim={}, time={:g}, dt={:g}, G={:g}, softening={:g}, "
      "gravity='{}'",
      sim.size(), sim.dim(), sim.time(), o.step(), o.gravity.G, o.gravity.softening,
      to_string(o.gravity.algorithm));
  if (o.gravity.algorithm == GravityAlgorithm::Tree)
    text += fmt::format(", theta={:g}", o.gravity.theta);
  text += fmt::format(", integrator='{}', device='{}'", to_string(o.integrator.scheme),
                      to_string(o.gravity.device));
  if (o.collisions.model != CollisionModel::None)
    text += fmt::format(", collisions='{}'", to_string(o.collisions.model));
  if (sim.n_active() != -1)
    text +=
        fmt::format(", n_active={}, testparticle_type={}", sim.n_active(), sim.testparticle_type());
  return text + ")";
}

}  // namespace

nb::object make_simulation(ParticleSystem ps, const nb::dict& options, const char* caller,
                           const std::vector<std::string>& skip) {
  RunOptions run;
  apply_keywords(run, options, caller, skip);
  return nb::cast(new PySimulation(std::move(ps), run), nb::rv_policy::take_ownership);
}

void bind_simulation(nb::module_& m) {
  nb::class_<Energy>(m, "Energy", "Kinetic, potential and total energy (sim.energy()).")
      .def_ro("kinetic", &Energy::kinetic, "T = sum m v^2 / 2")
      .def_ro("potential", &Energy::potential,
              "W = -G sum_{i<j} m_i m_j / sqrt(r^2 + eps^2), with the simulation's softening")
      .def_ro("total", &Energy::total, "T + W")
      .def("__repr__", [](const Energy& e) {
        return fmt::format("nbody.Energy(kinetic={:.17g}, potential={:.17g}, total={:.17g})",
                           e.kinetic, e.potential, e.total);
      });

  SimulationClass cls(m, "Simulation",
                      R"(An N-body simulation: bodies, a gravity solver and an integrator.

Simulation(positions=None, velocities=None, masses=None, radii=None, ids=None, *, time=0.0,
           dim=3, **options)

Simulation() is empty: add bodies with sim.add(m=..., x=..., ...) (REBOUND's keywords,
orbital elements with a, e, inc, ...). From arrays: positions and velocities (default 0)
are (N, 3) arrays, masses (and radii) length N; ids default to 1..N. The keyword options are the run options of `nbody run` (see sim.options), e.g.
Simulation(x, v, m, dt=1e-3, softening=0.01, gravity="tree", theta=0.5).

Every run option is a property and may change between steps; changing any but dt sets up
the solver anew on the current state (bodies, time, ids, steps_done, timings and collision
stats kept; accelerations recomputed when a gravity option changed). Bad values raise
nbody.Error (a ValueError) with the message `nbody run` prints, and change nothing.

Arrays: sim.x, sim.y, sim.z, sim.vx, sim.vy, sim.vz, sim.masses, sim.radii and sim.ids
are numpy views of the simulation's own memory on the CPU (no copy: writing into them
edits the bodies); sim.positions, sim.velocities and sim.accelerations() are (N, 3)
copies, because the state is stored as one array per component. With device="gpu" the
state lives on the GPU and every array is a copy downloaded from it (read-only for the
per-component arrays); assign to the property (sim.x = ..., sim.positions = ...) to
change bodies there.
)");
  cls.attr("__module__") = "nbody";

  cls.def(
      "__init__",
      [](PySimulation* self, nb::handle positions, nb::handle velocities, nb::handle masses,
         nb::handle radii, nb::handle ids, double time, int dim, nb::kwargs options) {
        RunOptions run;
        apply_keywords(run, options, "Simulation()");
        new (self)
            PySimulation(bodies_from(positions, velocities, masses, radii, ids, time, dim), run);
      },
      "positions"_a = nb::none(), "velocities"_a = nb::none(), "masses"_a = nb::none(),
      "radii"_a = nb::none(), "ids"_a = nb::none(), nb::kw_only(), "time"_a = 0.0, "dim"_a = 3,
      "options"_a,
      "Bodies from arrays: positions and velocities (N, 3, finite), masses (N, finite and > 0; "
      "bodies of mass 0 after all the others are test particles, see n_active), "
      "optional radii (N, finite and >= 0) and ids (N, integers >= 1, unique: what the files "
      "hold); a bad value raises nbody.Error naming it, e.g. 'masses[3]: must be finite and > 0 "
      "(got -1)'; dim=2 makes the system planar (z = vz = 0). Keyword options: see "
      "sim.options.");

  // ---- Run options ---------------------------------------------------------------------
  for (const OptionSpec& spec : option_specs()) {
    cls.def_prop_rw(
        spec.name,
        [&spec](PySimulation& sim) {
          PySimulation::Busy busy(sim);
          return spec.get(sim.options());
        },
        [&spec](PySimulation& sim, nb::handle value) { set_option(sim, spec, value); }, spec.doc);
  }
  cls.def_prop_ro(
      "options",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return options_dict(sim.options());
      },
      "Every run option and its value, as a dict (a copy: set options through the properties or "
      "set()).");
  cls.def(
      "set",
      [](PySimulation& sim, nb::kwargs options) {
        PySimulation::Busy busy(sim);
        RunOptions next = sim.options();
        apply_keywords(next, options, "set()");
        bool reconfigure = false;
        for (auto [key, value] : options) {
          reconfigure = reconfigure || find_option(nb::cast<std::string>(key))->reconfigures;
        }
        sim.set_options(next, reconfigure);
      },
      "options"_a,
      "Sets several run options at once (one change of the solver), e.g. sim.set(gravity='tree', "
      "theta=0.4).");

  // ---- State scalars ---------------------------------------------------------------------
  cls.def("__len__", [](PySimulation& sim) {
    PySimulation::Busy busy(sim);
    return sim.size();
  });
  cls.def_prop_ro(
      "n",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return sim.size();
      },
      "Number of bodies (merging collisions and remove() lower it).");
  cls.def_prop_ro(
      "dim",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return sim.dim();
      },
      "3, or 2 for a planar system (z and vz held at exactly 0).");
  cls.def_prop_rw(
      "time",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return sim.time();
      },
      [](PySimulation& sim, double t) {
        PySimulation::Busy busy(sim);
        sim.set_time(t);
      },
      "Simulated time.");
  cls.def_prop_ro(
      "steps_done",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return sim.steps_done();
      },
      "Steps taken so far (over every option change).");
  cls.def_prop_ro(
      "solver",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return sim.solver_name();
      },
      "The solver in use, e.g. 'direct-simd-double' or 'tree-float'.");

  bind_stepping(cls);

  // ---- Measures -------------------------------------------------------------------------
  cls.def(
      "energy",
      [](PySimulation& sim, std::optional<std::string> method) {
        PySimulation::Busy busy(sim);
        const EnergyMethod chosen = method ? parse_energy_method(*method) : EnergyMethod::Auto;
        Diagnostics d;
        {
          nb::gil_scoped_release release;
          d = sim.diagnostics(chosen);
        }
        return Energy{d.kinetic, d.potential, d.total_energy};
      },
      "method"_a = nb::none(),
      "Kinetic, potential (with the softening) and total energy as an nbody.Energy. method: "
      "'exact' (float64 pair sum, O(N^2)), 'solver' (the solver's own potentials, at the cost of "
      "one force evaluation or none right after a step that computed them), 'off' (potential "
      "0), or None for the simulation's `energy` option. Releases the GIL.");
  cls.def(
      "diagnostics",
      [](PySimulation& sim, std::optional<std::string> method) {
        PySimulation::Busy busy(sim);
        const EnergyMethod chosen = method ? parse_energy_method(*method) : EnergyMethod::Auto;
        Diagnostics d;
        {
          nb::gil_scoped_release release;
          d = sim.diagnostics(chosen);
        }
        return diagnostics_dict(d);
      },
      "method"_a = nb::none(),
      "Everything `nbody info` reports, as a dict: total_mass, kinetic, potential, total_energy, "
      "virial_ratio, momentum, angular_momentum, com, com_velocity, energy_method (method: as "
      "for energy()).");
  cls.def(
      "momentum",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return vector3(compute_moments(sim.state()).momentum);
      },
      "Total momentum sum m v, a numpy array of 3.");
  cls.def(
      "angular_momentum",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        return vector3(compute_moments(sim.state()).angular_momentum);
      },
      "Total angular momentum about the origin, sum m r x v, a numpy array of 3.");
  cls.def(
      "copy",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        ParticleSystem ps = sim.state();  // n_active and testparticle_type too
        auto* copy = new PySimulation(std::move(ps), sim.options());
        nb::object owner = nb::cast(copy, nb::rv_policy::take_ownership);
        copy->set_n_active_given(sim.n_active_given());
        return owner;
      },
      "An independent simulation with the same bodies (n_active, testparticle_type), time and "
      "options.");
  cls.def("__repr__", [](PySimulation& sim) {
    PySimulation::Busy busy(sim);
    return repr(sim);
  });

  bind_run_stats(cls);
  bind_body_arrays(cls);
  bind_python_api(cls);
  bind_test_particles(cls);
  bind_checkpoints(m, cls);
  bind_io(m, cls);
}

}  // namespace nbody::python
