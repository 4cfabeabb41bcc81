#include "nbody/particles.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

#include "core/huge_pages.hpp"
#include "nbody/error.hpp"

namespace nbody {

namespace {

/// f(array) for every per-body array: the float64 ones, then the ids.
template <class F>
void each_array(ParticleSystem& ps, F&& f) {
  for (auto* v : {&ps.x, &ps.y, &ps.z, &ps.vx, &ps.vy, &ps.vz, &ps.ax, &ps.ay, &ps.az,
                  &ps.potential, &ps.mass, &ps.radius})
    f(*v);
  f(ps.id);
}

}  // namespace

void ParticleSystem::resize(std::size_t n) {
  each_array(*this, [n](auto& v) { v.resize(n); });  // new values 0
  invalidate_accelerations();
}

void ParticleSystem::resize_for_overwrite(std::size_t n) {
  each_array(*this, [n](auto& v) {
    if (n > v.capacity()) {
      std::remove_reference_t<decltype(v)>().swap(v);  // no copy of what is overwritten
      reserve_huge(v, with_room(n));
    }
    v.resize(n);
  });
  invalidate_accelerations();
}

void ParticleSystem::reserve(std::size_t n) {
  each_array(*this, [n](auto& v) { v.reserve(n); });
}

void ParticleSystem::clear() {
  resize(0);
  next_id_ = 1;
  n_active = kAllActive;
}

void ParticleSystem::assign_sequential_ids() {
  for (std::size_t i = 0; i < id.size(); ++i) id[i] = i + 1;
  next_id_ = id.size() + 1;
}

void ParticleSystem::add(const Body& b) {
  if (next_id_ <= size()) {  // ids were set directly through the arrays: rescan once
    for (std::uint64_t v : id) next_id_ = std::max(next_id_, v + 1);
  }
  const std::uint64_t new_id = b.id != 0 ? b.id : next_id_;
  next_id_ = std::max(next_id_, new_id + 1);
  x.push_back(b.position.x);
  y.push_back(b.position.y);
  z.push_back(dim == 2 ? 0.0 : b.position.z);
  vx.push_back(b.velocity.x);
  vy.push_back(b.velocity.y);
  vz.push_back(dim == 2 ? 0.0 : b.velocity.z);
  ax.push_back(0.0);
  ay.push_back(0.0);
  az.push_back(0.0);
  potential.push_back(0.0);
  mass.push_back(b.mass);
  radius.push_back(b.radius);
  id.push_back(new_id);
  invalidate_accelerations();
}

void ParticleSystem::remove(const std::vector<std::size_t>& indices) {
  const std::size_t n = size();
  std::vector<char> gone(n, 0);
  for (std::size_t i : indices) {
    if (i >= n) throw Error(fmt::format("remove: index {} is out of range ({} bodies)", i, n));
    gone[i] = 1;
  }
  // One stable compaction pass per array (the order of the survivors is kept).
  auto compact = [&](auto& v) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!gone[i]) v[kept++] = v[i];
    }
    v.resize(kept);
  };
  if (n_active != kAllActive) {
    std::size_t removed_active = 0;
    for (std::size_t i = 0; i < std::min(n_active, n); ++i) removed_active += gone[i];
    n_active -= std::min(n_active, removed_active);
  }
  for (auto* v : {&x, &y, &z, &vx, &vy, &vz, &ax, &ay, &az, &mass, &radius}) compact(*v);
  compact(id);
  // The accelerations and potentials of the survivors no longer include the removed bodies
  // (the potentials are recomputed when asked for: no need to keep them).
  if (size() != n) {
    invalidate_accelerations();
    potential.assign(size(), 0.0);
  }
}

void positions_as_float(const ParticleSystem& ps, std::vector<float>& xyz) {
  xyz.resize(3 * ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) {
    xyz[3 * i] = float(ps.x[i]);
    xyz[3 * i + 1] = float(ps.y[i]);
    xyz[3 * i + 2] = float(ps.z[i]);
  }
}

void validate_bodies(const ParticleSystem& ps) {
  auto fail = [&](std::size_t i, const std::string& problem) {
    throw Error(fmt::format("body {} (id {}): {}", i, ps.id[i], problem));
  };
  if (ps.n_active != ParticleSystem::kAllActive && ps.n_active > ps.size()) {
    throw Error(fmt::format("n_active must be at most the number of bodies ({}), got {}", ps.size(),
                            ps.n_active));
  }
  if (ps.test_particle_type != 0 && ps.test_particle_type != 1) {
    throw Error(fmt::format("test_particle_type must be 0 or 1, got {}", ps.test_particle_type));
  }
  std::unordered_map<std::uint64_t, std::size_t> first_use;
  first_use.reserve(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double values[] = {ps.x[i], ps.y[i], ps.z[i], ps.vx[i], ps.vy[i], ps.vz[i]};
    const char* names[] = {"x", "y", "z", "vx", "vy", "vz"};
    for (int k = 0; k < 6; ++k) {
      if (!std::isfinite(values[k]))
        fail(i, fmt::format("{} must be finite, got {}", names[k], values[k]));
    }
    if (i < ps.active_count() && !(ps.mass[i] > 0 && std::isfinite(ps.mass[i]))) {
      fail(i, fmt::format("mass must be positive and finite, got {}", ps.mass[i]));
    }
    if (i >= ps.active_count() && !(ps.mass[i] >= 0 && std::isfinite(ps.mass[i]))) {
      fail(i, fmt::format("mass of a test particle must be >= 0 and finite, got {}", ps.mass[i]));
    }
    if (!(ps.radius[i] >= 0 && std::isfinite(ps.radius[i]))) {
      fail(i, fmt::format("radius must be >= 0 and finite, got {}", ps.radius[i]));
    }
    if (ps.id[i] != 0) {
      const auto [it, inserted] = first_use.emplace(ps.id[i], i);
      if (!inserted)
        fail(i, fmt::format("duplicate id {} (first used by body {})", ps.id[i], it->second));
    }
  }
}

MassOrder mass_order(const ParticleSystem& ps) {
  const std::size_t n = ps.size();
  std::size_t first_massless = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (ps.mass[i] == 0) {
      first_massless = std::min(first_massless, i);
    } else if (first_massless < n) {
      return {first_massless, i};
    }
  }
  return {first_massless, n};
}

std::size_t mark_massless_test_particles(ParticleSystem& ps) {
  const MassOrder order = mass_order(ps);
  if (order.mass_after_massless < ps.size()) return order.mass_after_massless;
  if (order.first_massless < ps.size()) ps.n_active = order.first_massless;
  return ps.size();
}

Body ParticleSystem::body(std::size_t i) const {
  return Body{{x[i], y[i], z[i]}, {vx[i], vy[i], vz[i]}, mass[i], radius[i], id[i]};
}

bool ParticleSystem::has_radii() const {
  return std::any_of(radius.begin(), radius.end(), [](double r) { return r != 0.0; });
}

std::size_t ParticleSystem::make_planar() {
  std::size_t changed = 0;
  for (std::size_t i = 0; i < size(); ++i) {
    if (z[i] != 0.0 || vz[i] != 0.0 || az[i] != 0.0) ++changed;
    z[i] = vz[i] = az[i] = 0.0;
  }
  dim = 2;
  return changed;
}

}  // namespace nbody
