#pragma once
// The inputs on which the two contact searches (grid and tree, CPU and GPU) must find the
// same pairs: uniform radii, a wide radius spread with a few giants, dense packings (every
// neighbour exactly touching, the hardest case for the cells' rounding), coincident
// centres, in 2D and 3D. Small enough for the O(N^2) brute force.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "collision_test_helpers.hpp"

namespace nbody::test {

/// A square (2D) or cubic (3D) lattice of spacing 2r, every neighbour touching, jittered
/// by `jitter` r (0: exactly touching, decided by rounding), with one body in 7 coincident
/// with its predecessor.
inline ParticleSystem packed(int dim, double r, double jitter, std::uint64_t seed) {
  const int side = dim == 3 ? 12 : 40;
  std::mt19937_64 rng(seed);
  ParticleSystem ps;
  ps.dim = dim;
  for (int i = 0; i < side; ++i) {
    for (int j = 0; j < side; ++j) {
      for (int k = 0; k < (dim == 3 ? side : 1); ++k) {
        const double x = 2 * r * i + jitter * r * uniform(rng, -1, 1);
        const double y = 2 * r * j + jitter * r * uniform(rng, -1, 1);
        const double z = dim == 3 ? 2 * r * k + jitter * r * uniform(rng, -1, 1) : 0.0;
        ps.add(Body{{x, y, z}, {}, 1.0, r, 0});
        if (ps.size() % 7 == 0) ps.add(Body{{x, y, z}, {}, 1.0, r, 0});
      }
    }
  }
  ps.assign_sequential_ids();
  return ps;
}

/// Named inputs of one dimension.
inline std::vector<std::pair<std::string, ParticleSystem>> search_inputs(int dim) {
  std::vector<std::pair<std::string, ParticleSystem>> out;
  const double r = radius_for_fraction(2000, dim, 0.3);
  out.emplace_back("uniform", cloud(2000, 21, dim, [r](auto&) { return r; }));
  // Four decades of radii, a few radius-0 points, and giants (one larger than the cloud).
  ParticleSystem wide = cloud(2000, 22, dim, [r](auto& rng) {
    const double u = uniform(rng, 0, 1);
    return u < 0.03 ? 0.0 : r * std::pow(10.0, uniform(rng, -3, 1));
  });
  wide.radius[5] = 3.0;
  wide.radius[50] = 0.5;
  wide.radius[500] = 0.1;
  out.emplace_back("wide spread", std::move(wide));
  out.emplace_back("packed", packed(dim, 0.01, 0.0, 23));
  out.emplace_back("packed jittered", packed(dim, 0.01, 0.05, 24));
  ParticleSystem same = cloud(300, 25, dim, [r](auto&) { return r; });
  for (std::size_t i = 0; i < same.size(); i += 3) {  // every third body on one point
    same.x[i] = same.y[i] = 0.25;
    same.z[i] = dim == 3 ? 0.25 : 0.0;
  }
  out.emplace_back("coincident", std::move(same));
  return out;
}

}  // namespace nbody::test
