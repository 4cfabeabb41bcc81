#pragma once
// Bodies for the domain decomposition's tests (test_domain.cpp, test_migration.cpp,
// test_direct_ring.cpp, test_domain_gravity.cpp): Plummer spheres, some with every per-body
// field checkable, dealt to P thread ranks.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "nbody/initial_conditions.hpp"
#include "nbody/particles.hpp"
#include "parallel/domain.hpp"

namespace nbody::testing {

/// Plummer bodies with accelerations, potentials and radii that differ per body (so a field
/// that does not travel, or travels with another body, shows).
inline ParticleSystem domain_bodies(std::size_t n, int dim, std::uint64_t seed = 7) {
  ParticleSystem ps = generate({.model = "plummer", .n = n, .seed = seed, .dim = dim});
  for (std::size_t i = 0; i < n; ++i) {
    ps.ax[i] = 1.5 * ps.x[i] + double(i);
    ps.ay[i] = -ps.y[i];
    ps.az[i] = dim == 2 ? 0.0 : ps.z[i] * 3;
    ps.potential[i] = -1.0 / (1.0 + double(i));
    ps.radius[i] = 1e-3 * double(i % 17);
  }
  ps.set_accelerations_valid();
  ps.set_potentials_valid();
  return ps;
}

/// The bodies `pick` chooses, every field copied, flags kept.
inline ParticleSystem subset(const ParticleSystem& all,
                             const std::function<bool(std::size_t)>& pick) {
  ParticleSystem out;
  out.dim = all.dim;
  out.time = all.time;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!pick(i)) continue;
    for (auto [to, from] : {std::pair{&out.x, &all.x},
                            {&out.y, &all.y},
                            {&out.z, &all.z},
                            {&out.vx, &all.vx},
                            {&out.vy, &all.vy},
                            {&out.vz, &all.vz},
                            {&out.ax, &all.ax},
                            {&out.ay, &all.ay},
                            {&out.az, &all.az},
                            {&out.potential, &all.potential},
                            {&out.mass, &all.mass},
                            {&out.radius, &all.radius}})
      to->push_back((*from)[i]);
    out.id.push_back(all.id[i]);
  }
  if (all.accelerations_valid()) out.set_accelerations_valid();
  if (all.potentials_valid()) out.set_potentials_valid();
  return out;
}

/// A Plummer sphere as the generator makes it.
inline ParticleSystem plummer_sphere(std::size_t n, int dim, std::uint64_t seed) {
  return generate({.model = "plummer", .n = n, .seed = seed, .dim = dim});
}

/// Bodies part, part + parts, ...: a scattered share, so that every rank's bodies meet every
/// other rank's (in the ring) and all of them migrate at the first evaluation.
inline ParticleSystem dealt_share(const ParticleSystem& all, int part, int parts) {
  return subset(all, [&](std::size_t i) { return int(i % std::size_t(parts)) == part; });
}

/// Body i's first rank: i % P, except that the last of P >= 3 ranks starts with none.
inline int first_rank(std::size_t i, int parts) {
  const int dealt = parts >= 3 ? parts - 1 : parts;
  return static_cast<int>(i % std::size_t(dealt));
}

/// A skewed cost: heavy in the core, as the tree's interactions are.
inline double core_cost(const ParticleSystem& ps, std::size_t i) {
  return 1.0 / (std::sqrt(ps.x[i] * ps.x[i] + ps.y[i] * ps.y[i] + ps.z[i] * ps.z[i]) + 0.01);
}

}  // namespace nbody::testing
