#pragma once
// Shared by the collision tests (CPU, GPU and backend): the brute-force contact search,
// seeded clouds with chosen radii, the falling pair of the tests under gravity, and momentum.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/particles.hpp"
#include "test_helpers.hpp"

namespace nbody::test {

/// Every pair closer than (r_i + r_j)(1 + skin), by the O(N^2) loop; the same expression
/// as the grid's test, so both must agree to the last bit.
inline std::vector<IndexPair> brute_force_pairs(const ParticleSystem& ps, double skin) {
  const double scale = 1.0 + skin;
  std::vector<IndexPair> pairs;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    for (std::size_t j = i + 1; j < ps.size(); ++j) {
      const double dx = ps.x[j] - ps.x[i], dy = ps.y[j] - ps.y[i], dz = ps.z[j] - ps.z[i];
      const double s = (ps.radius[i] + ps.radius[j]) * scale;
      if (dx * dx + dy * dy + dz * dz < s * s) pairs.push_back({i, j});
    }
  }
  return pairs;
}

/// An unequal pair at rest, 1 apart, slightly off-axis (m 1 and 0.5, r 0.1 and 0.07): with
/// G = 1 and no softening it falls, bounces, rises, and falls again.
inline ParticleSystem falling_pair() {
  ParticleSystem ps;
  ps.add({{-1.0 / 3, 0, 0}, {0, 0, 0}, 1.0, 0.1, 1});
  ps.add({{2.0 / 3, 0.05, 0}, {0, 0, 0}, 0.5, 0.07, 2});
  return ps;
}

/// Radius for a volume (3D) or area (2D) fraction `phi` of N equal bodies in [-1, 1]^dim.
inline double radius_for_fraction(std::size_t n, int dim, double phi) {
  return dim == 3 ? std::cbrt(phi * 8.0 / (double(n) * 4.0 / 3.0 * std::numbers::pi))
                  : std::sqrt(phi * 4.0 / (double(n) * std::numbers::pi));
}

/// Seeded random bodies in [-1, 1]^dim with radii drawn by `radius(rng)`.
template <class RadiusFn>
ParticleSystem cloud(std::size_t n, std::uint64_t seed, int dim, RadiusFn radius) {
  ParticleSystem ps = test::random_system(n, seed, dim);
  std::mt19937_64 rng(seed + 1000);
  for (double& r : ps.radius) r = radius(rng);
  return ps;
}

inline double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53;
}

inline Vec3 momentum(const ParticleSystem& ps) {
  Vec3 p;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    p.x += ps.mass[i] * ps.vx[i];
    p.y += ps.mass[i] * ps.vy[i];
    p.z += ps.mass[i] * ps.vz[i];
  }
  return p;
}

}  // namespace nbody::test
