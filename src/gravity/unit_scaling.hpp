#pragma once
// Shared by the solvers that rescale positions and masses by powers of two before their
// kernels (CPU SIMD direct sum and the decomposition's ring, CUDA direct sum and stepper):
// the largest finite |value|, and the CPU kernels' scaling from it.
#include <algorithm>
#include <cmath>
#include <vector>

#include "nbody/particles.hpp"

namespace nbody {

/// max(start, largest finite |v| over values); NaN and infinities are skipped.
inline double largest_finite_magnitude(const std::vector<double>& values, double start) {
  for (double v : values) {
    if (std::isfinite(v)) start = std::max(start, std::abs(v));
  }
  return start;
}

/// e with 2^-e * largest in [0.5, 1) (0 for largest == 0), clamped to [-limit, limit].
inline int scale_exponent(double largest, int limit) {
  if (!(largest > 0) || !std::isfinite(largest)) return 0;
  int e = 0;
  (void)std::frexp(largest, &e);
  return std::clamp(e, -limit, limit);
}

/// The kernels work on scaled data: positions and softening times 2^-p, masses times
/// 2^-q, with p and q chosen to make both O(1); accelerations scale back by 2^(q-2p) (m/r^2)
/// and potentials by 2^(q-p) (m/r).
/// Powers of two scale exactly (every kernel operation gives the same bits, scaled, short
/// of subnormals), so in ordinary units this changes nothing. It keeps the kernels'
/// float quantities in range whatever the units: in float, r^2 overflows for r > 1.8e19
/// and masses above 3.4e38 (a galaxy in SI units), and the double kernel starts from a
/// float rsqrt of r^2.
struct Scaling {
  double position = 1, mass = 1, acceleration = 1, potential = 1;
};

/// The scaling for bodies within `extent` (the largest |coordinate|, or the softening when
/// larger) whose largest mass is `largest_mass`; the limits keep every factor a normal
/// double.
inline Scaling power_of_two_scaling(double extent, double largest_mass) {
  const int p = scale_exponent(extent, 400);
  const int q = scale_exponent(largest_mass, 200);
  return {std::ldexp(1.0, -p), std::ldexp(1.0, -q), std::ldexp(1.0, q - 2 * p),
          std::ldexp(1.0, q - p)};
}

/// The CPU kernels' scaling for every body of ps (and the softening).
inline Scaling bodies_scaling(const ParticleSystem& ps, double softening) {
  double extent = std::isfinite(softening) ? std::abs(softening) : 0.0;
  for (const auto* v : {&ps.x, &ps.y, &ps.z}) extent = largest_finite_magnitude(*v, extent);
  return power_of_two_scaling(extent, largest_finite_magnitude(ps.mass, 0.0));
}

}  // namespace nbody
