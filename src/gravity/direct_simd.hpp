#pragma once
// The fast CPU direct sum: SoA, vectorised inner loop, OpenMP threads. (Helper-owned.)
#include <memory>

#include "nbody/gravity.hpp"

namespace nbody {

/// Builds the SIMD/OpenMP direct-sum solver for the given precision.
[[nodiscard]] std::unique_ptr<GravitySolver> make_direct_simd(Precision precision, double G,
                                                              double softening, int threads);

}  // namespace nbody
