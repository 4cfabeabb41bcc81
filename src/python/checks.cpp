#include "python/checks.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "nbody/input_error.hpp"

namespace nbody::python {

namespace {

/// n values (rows of `columns`) of the argument `name`. A plain loop the compiler can
/// vectorise: at N = 1e6 about a millisecond, against a force evaluation of seconds.
void check_span(const double* data, std::size_t n, std::size_t columns, const char* name,
                Bound bound, std::size_t first = 0) {
  for (std::size_t j = first; j < n; ++j) {
    if (obeys(data[j], bound)) continue;
    const std::string where = columns == 1
                                  ? fmt::format("{}[{}]", name, j)
                                  : fmt::format("{}[{}, {}]", name, j / columns, j % columns);
    throw input_error(where, rule_text(bound), data[j]);
  }
}

void check_id_span(const std::uint64_t* ids, std::size_t n, const char* name, bool zero_allowed) {
  // The usual case (1..N, or any increasing ids: generated, read from a file) is unique
  // without a hash table.
  if (std::adjacent_find(ids, ids + n, std::greater_equal<>()) == ids + n &&
      (n == 0 || ids[0] > 0 || zero_allowed)) {
    return;
  }
  std::unordered_map<std::uint64_t, std::size_t> first;
  first.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (ids[i] == 0) {
      if (zero_allowed) continue;
      throw input_error(fmt::format("{}[{}]", name, i), "must be >= 1", ids[i]);
    }
    const auto [it, inserted] = first.emplace(ids[i], i);
    if (!inserted) {
      throw input_error(fmt::format("{}[{}]", name, i),
                        fmt::format("must be unique, as {}[{}] is the same", name, it->second),
                        ids[i]);
    }
  }
}

}  // namespace

void check_values(const InputArray& a, const char* name, Bound bound) {
  check_span(a.begin(), std::size_t(a.end() - a.begin()), a.columns(), name, bound);
}

void check_masses(const InputArray& a, const char* name) {
  for (const double* v = a.begin(); v != a.end(); ++v) {
    if (*v == 0 || obeys(*v, Bound::Positive)) continue;
    throw input_error(fmt::format("{}[{}]", name, v - a.begin()), rule_text(Bound::Positive), *v);
  }
}

void check_masses(const InputArray& a, const char* name, std::size_t active) {
  const auto n = std::size_t(a.end() - a.begin());
  check_span(a.begin(), std::min(active, n), 1, name, Bound::Positive);
  check_span(a.begin(), n, 1, name, Bound::NonNegative, std::min(active, n));
}

void mark_test_particles(ParticleSystem& ps, const char* name) {
  const std::size_t late = mark_massless_test_particles(ps);
  if (late == ps.size()) return;
  const std::size_t first =
      std::size_t(std::find(ps.mass.begin(), ps.mass.end(), 0.0) - ps.mass.begin());
  throw input_error(fmt::format("{}[{}]", name, late),
                    fmt::format("test particles (mass 0) must come after every body with mass, "
                                "and {}[{}] is 0",
                                name, first),
                    ps.mass[late]);
}

void check_ids(const InputIds& ids, const char* name, bool zero_allowed) {
  check_id_span(ids.begin(), ids.size(), name, zero_allowed);
}

void check_state(const ParticleSystem& ps, bool ids) {
  const std::size_t n = ps.size();
  check_span(ps.x.data(), n, 1, "x", Bound::Finite);
  check_span(ps.y.data(), n, 1, "y", Bound::Finite);
  check_span(ps.z.data(), n, 1, "z", Bound::Finite);
  check_span(ps.vx.data(), n, 1, "vx", Bound::Finite);
  check_span(ps.vy.data(), n, 1, "vy", Bound::Finite);
  check_span(ps.vz.data(), n, 1, "vz", Bound::Finite);
  // The active bodies have mass; test particles (particles.hpp) may have none.
  check_span(ps.mass.data(), ps.active_count(), 1, "masses", Bound::Positive);
  check_span(ps.mass.data(), n, 1, "masses", Bound::NonNegative, ps.active_count());
  check_span(ps.radius.data(), n, 1, "radii", Bound::NonNegative);
  if (ids) check_id_span(ps.id.data(), n, "ids", false);
}

std::uint64_t count_value(nb::handle value, const char* function, const char* name,
                          std::uint64_t least) {
  if (nb::isinstance<nb::bool_>(value) || !PyIndex_Check(value.ptr())) {
    throw nb::type_error(fmt::format("{}: {} expects an integer, got {}", function, name,
                                     nb::type_name(value.type()).c_str())
                             .c_str());
  }
  nb::object index = nb::steal(PyNumber_Index(value.ptr()));
  if (!index) throw nb::python_error();
  std::uint64_t v = 0;
  if (!nb::try_cast(index, v) || v < least) {
    throw input_error(name, fmt::format("must be an integer from {} to 2^64 - 1", least),
                      nb::cast<std::string>(nb::repr(index)));
  }
  return v;
}

}  // namespace nbody::python
