#pragma once
// Shared by the solvers that rescale positions and masses by powers of two before their
// kernels (CPU SIMD direct sum, CUDA direct sum and stepper): the largest finite |value|.
#include <algorithm>
#include <cmath>
#include <vector>

namespace nbody {

/// max(start, largest finite |v| over values); NaN and infinities are skipped.
inline double largest_finite_magnitude(const std::vector<double>& values, double start) {
  for (double v : values) {
    if (std::isfinite(v)) start = std::max(start, std::abs(v));
  }
  return start;
}

}  // namespace nbody
