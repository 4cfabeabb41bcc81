// The bodies as numpy arrays: per-component views (no copy on the CPU), (N, 3) copies,
// accelerations, and adding and removing bodies.
#include <string>
#include <unordered_map>

#include <fmt/format.h>
#include <nanobind/stl/vector.h>

#include "nbody/input_error.hpp"

#include "python/arrays.hpp"
#include "python/bindings.hpp"
#include "python/checks.hpp"

namespace nbody::python {

using namespace nb::literals;

namespace {

struct Component {
  const char* name;
  std::vector<double> ParticleSystem::*member;
  bool moves_bodies;  // positions and masses: the stored accelerations go stale
  Bound bound;
  const char* doc;
};

const Component kComponents[] = {
    {"x", &ParticleSystem::x, true, Bound::Finite, "x positions"},
    {"y", &ParticleSystem::y, true, Bound::Finite, "y positions"},
    {"z", &ParticleSystem::z, true, Bound::Finite, "z positions (0 in a planar system)"},
    {"vx", &ParticleSystem::vx, false, Bound::Finite, "x velocities"},
    {"vy", &ParticleSystem::vy, false, Bound::Finite, "y velocities"},
    {"vz", &ParticleSystem::vz, false, Bound::Finite, "z velocities (0 in a planar system)"},
    {"masses", &ParticleSystem::mass, true, Bound::Positive,
     "masses (finite, > 0; >= 0 for test particles, see n_active)"},
    {"radii", &ParticleSystem::radius, false, Bound::NonNegative,
     "radii (finite, >= 0; collisions use them)"},
};

constexpr const char* kViewNote =
    ", float64, length N. CPU: a view of the simulation's memory (no copy; writes edit the "
    "bodies, and are checked before the next step: a NaN or a mass <= 0 (< 0 for a test particle) "
    "written there raises "
    "nbody.Error from step()). It stays attached across steps and option "
    "changes; after add(), remove() or merging collisions take it again. GPU: a read-only copy. "
    "Assigning an array (sim.x = a) copies a in after checking it.";

template <class T>
nb::object component(PySimulation& sim, nb::handle self, std::vector<T> ParticleSystem::*member) {
  if (sim.on_device()) return read_only_copy(sim.state().*member);
  return alias_view(sim, self, sim.mutable_state().*member);
}

void set_component(PySimulation& sim, const Component& c, nb::handle value) {
  PySimulation::Busy busy(sim);
  const InputArray a = as_float64(value, c.name, {static_cast<long>(sim.size())});
  if (c.member == &ParticleSystem::mass) {  // test particles may have mass 0
    check_masses(a, c.name, sim.state().active_count());
  } else {
    check_values(a, c.name, c.bound);
  }
  sim.edit_state([&](ParticleSystem& ps) { std::copy(a.begin(), a.end(), (ps.*c.member).begin()); },
                 c.moves_bodies);
}

void set_triplet(PySimulation& sim, nb::handle value, const char* name, bool positions) {
  PySimulation::Busy busy(sim);
  const InputArray a = as_float64(value, name, {static_cast<long>(sim.size()), 3});
  check_values(a, name, Bound::Finite);
  sim.edit_state(
      [&](ParticleSystem& ps) {
        auto& u = positions ? ps.x : ps.vx;
        auto& v = positions ? ps.y : ps.vy;
        auto& w = positions ? ps.z : ps.vz;
        for (std::size_t i = 0; i < ps.size(); ++i) u[i] = a(i, 0), v[i] = a(i, 1), w[i] = a(i, 2);
      },
      positions);
}

/// numpy.broadcast_to(value, shape) as float64.
InputArray broadcast(nb::handle value, const char* name, std::size_t count, bool vectors) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object shape =
      vectors ? nb::object(nb::make_tuple(count, 3)) : nb::object(nb::make_tuple(count));
  nb::object array;
  try {
    array = np.attr("broadcast_to")(numeric_array(value, name), shape);
  } catch (const nb::python_error&) {
    throw nb::value_error(
        fmt::format("{}: cannot be broadcast to shape ({}{})", name, count, vectors ? ", 3" : ",")
            .c_str());
  }
  return as_float64(array, name,
                    vectors ? std::initializer_list<long>{long(count), 3}
                            : std::initializer_list<long>{long(count)});
}

nb::object add_bodies(PySimulation& sim, nb::handle position, nb::handle velocity, nb::handle mass,
                      nb::handle radius, nb::handle id) {
  PySimulation::Busy busy(sim);
  nb::module_ np = nb::module_::import_("numpy");
  const bool one = nb::cast<std::size_t>(np.attr("ndim")(position)) == 1;
  const InputArray x =
      as_float64(np.attr("atleast_2d")(numeric_array(position, "position")), "position", {-1, 3});
  const std::size_t k = x.size();
  const InputArray v = broadcast(velocity, "velocity", k, true);
  const InputArray m = broadcast(mass, "mass", k, false);
  const InputArray r = broadcast(radius, "radius", k, false);
  check_values(x, "position", Bound::Finite);
  check_values(v, "velocity", Bound::Finite);
  check_masses(m, "mass");  // 0: test particles; PySimulation::add() says where they may go
  check_values(r, "radius", Bound::NonNegative);
  nb::object id_array;
  try {
    id_array = np.attr("broadcast_to")(numeric_array(id, "id", true), nb::make_tuple(k));
  } catch (const nb::python_error&) {
    throw nb::value_error(fmt::format("id: cannot be broadcast to shape ({},)", k).c_str());
  }
  const InputIds ids = as_ids(id_array, "id", true);
  check_ids(ids, "id", true);
  std::vector<Body> bodies(k);
  for (std::size_t i = 0; i < k; ++i) {
    bodies[i] = Body{{x(i, 0), x(i, 1), x(i, 2)}, {v(i, 0), v(i, 1), v(i, 2)}, m(i), r(i), ids(i)};
  }
  const std::vector<std::uint64_t> assigned = sim.add(bodies);
  if (one) return nb::int_(assigned.front());
  return read_only_copy(assigned).attr("copy")();
}

void remove_bodies(PySimulation& sim, nb::handle indices, nb::handle ids) {
  PySimulation::Busy busy(sim);
  if (indices.is_none() == ids.is_none()) {
    throw nb::type_error("remove(): give either indices or ids= (not both)");
  }
  nb::module_ np = nb::module_::import_("numpy");
  const auto n = static_cast<long long>(sim.size());
  std::vector<std::size_t> which;
  if (!indices.is_none()) {
    nb::object a = np.attr("atleast_1d")(np.attr("asarray")(indices));
    std::string kind = nb::cast<std::string>(a.attr("dtype").attr("kind"));
    if (kind == "b") {  // a mask: sim.remove(sim.x > 10)
      if (nb::cast<long long>(a.attr("size")) != n) {
        throw nb::value_error(fmt::format("remove(): a mask needs {} entries, got {}", n,
                                          nb::cast<long long>(a.attr("size")))
                                  .c_str());
      }
      a = np.attr("flatnonzero")(a);
      kind = "i";
    }
    if (kind != "i" && kind != "u" && nb::cast<std::size_t>(a.attr("size")) > 0) {
      throw nb::type_error("remove(): indices must be integers or a boolean mask");
    }
    for (nb::handle item : a.attr("ravel")().attr("tolist")()) {
      long long i = 0;
      const bool fits = nb::try_cast(item, i);  // beyond 64 bits: out of range too
      const long long j = i < 0 ? i + n : i;    // Python's negative indices
      if (!fits || j < 0 || j >= n) {
        throw nb::index_error(fmt::format("remove: index {} is out of range ({} bodies)",
                                          printable(nb::cast<std::string>(nb::repr(item))), n)
                                  .c_str());
      }
      which.push_back(std::size_t(j));
    }
  } else {
    const InputIds wanted = as_ids(np.attr("atleast_1d")(numeric_array(ids, "ids", true)), "ids");
    const ParticleSystem& s = sim.state();
    std::unordered_map<std::uint64_t, std::size_t> index;
    for (std::size_t i = 0; i < s.size(); ++i) index.emplace(s.id[i], i);
    for (std::size_t k = 0; k < wanted.size(); ++k) {
      const auto it = index.find(wanted(k));
      if (it == index.end())
        throw nb::value_error(fmt::format("remove: no body has id {}", wanted(k)).c_str());
      which.push_back(it->second);
    }
  }
  sim.remove(which);
}

}  // namespace

void bind_body_arrays(SimulationClass& cls) {
  for (const Component& c : kComponents) {
    cls.def_prop_rw(
        c.name,
        [&c](nb::handle self) {
          PySimulation& sim = nb::cast<PySimulation&>(self);
          PySimulation::Busy busy(sim);
          return component(sim, self, c.member);
        },
        [&c](PySimulation& sim, nb::handle value) { set_component(sim, c, value); },
        (std::string(c.doc) + kViewNote).c_str());
  }
  cls.def_prop_rw(
      "ids",
      [](nb::handle self) {
        PySimulation& sim = nb::cast<PySimulation&>(self);
        PySimulation::Busy busy(sim);
        return component(sim, self, &ParticleSystem::id);
      },
      [](PySimulation& sim, nb::handle value) {
        PySimulation::Busy busy(sim);
        const InputIds a = as_ids(value, "ids");
        check_ids(a, "ids", false);
        if (a.size() != sim.size()) {
          throw nb::value_error(
              fmt::format("ids: expected {} ids, got {}", sim.size(), a.size()).c_str());
        }
        sim.edit_state([&](ParticleSystem& ps) { std::copy(a.begin(), a.end(), ps.id.begin()); },
                       false);
      },
      "Body ids, uint64, length N (>= 1 and unique, the files' rule; kept through steps, merges "
      "keep the smaller). A view on "
      "the CPU, a "
      "read-only copy on the GPU.");
  cls.def_prop_rw(
      "positions",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        const ParticleSystem& s = sim.state();
        return stacked_copy(s.x, s.y, s.z);
      },
      [](PySimulation& sim, nb::handle value) { set_triplet(sim, value, "positions", true); },
      "Positions as an (N, 3) float64 array: a COPY (the state is stored per component; sim.x, "
      "sim.y, sim.z "
      "are views). Assign an (N, 3) array to move the bodies.");
  cls.def_prop_rw(
      "velocities",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        const ParticleSystem& s = sim.state();
        return stacked_copy(s.vx, s.vy, s.vz);
      },
      [](PySimulation& sim, nb::handle value) { set_triplet(sim, value, "velocities", false); },
      "Velocities as an (N, 3) float64 array: a COPY (sim.vx, sim.vy, sim.vz are views). Assign an "
      "(N, 3) "
      "array to change them.");
  cls.def(
      "accelerations",
      [](PySimulation& sim) {
        PySimulation::Busy busy(sim);
        const ParticleSystem* s = nullptr;
        {
          nb::gil_scoped_release release;
          s = &sim.accelerations();
        }
        return stacked_copy(s->ax, s->ay, s->az);
      },
      "Accelerations at the current positions as an (N, 3) copy, with the simulation's G, "
      "softening and "
      "solver. The ones the last step left are returned as they are; they are computed when stale "
      "(before the "
      "first step, after edits or an option change; on the GPU path then with the CPU solver of "
      "the same "
      "algorithm and precision). Releases the GIL.");
  cls.def("_add", &add_bodies, "position"_a, "velocity"_a = 0.0, "mass"_a = 1.0, "radius"_a = 0.0,
          "id"_a = 0,
          "Adds one body (position of 3) or k bodies (position (k, 3); velocity, mass, radius and "
          "id broadcast). "
          "id 0 gives the next free id. Returns the id (or an array of ids). Bodies are checked as "
          "files are "
          "(mass > 0, radius >= 0, finite values, unused ids); mass 0 makes a test particle (see "
          "n_active).");
  cls.def("remove", &remove_bodies, "indices"_a = nb::none(), nb::kw_only(), "ids"_a = nb::none(),
          "Removes bodies by index (an int, a sequence, negative counting from the end, or a "
          "boolean mask of N) "
          "or by id (ids=...). The others keep their order.");
}

}  // namespace nbody::python
