#pragma once
// The resident state of the device stepper: float64 SoA arrays in device memory, as on the
// CPU (ARCHITECTURE.md: "the state itself stays float64"), and the launch shape its
// kernels share.
#include <algorithm>
#include <cstddef>

#include "nbody/physics/integration.hpp"

namespace nbody::cuda_resident {

/// The float64 state in device memory (SoA: coalesced loads).
struct State {
  double *x, *y, *z, *vx, *vy, *vz, *ax, *ay, *az;
  const double* m;
  unsigned n;
  /// The first k bodies alone.
  [[nodiscard]] State first(unsigned k) const {
    State s = *this;
    s.n = k;
    return s;
  }
};

inline constexpr int kThreads = 256;
inline constexpr unsigned kMaxBlocks = 4096;

/// A grid-stride launch over n items: one thread an item, at most kMaxBlocks blocks.
inline unsigned blocks_for(std::size_t n) {
  return unsigned(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

/// A force kernel's value (per unit G, in the scaled units) in physical units, G v times
/// the scale (2^(q-2p) for accelerations, 2^(q-p) for potentials), rounded as the CPU
/// solvers' G * v * scale.
template <class Real>
__device__ __forceinline__ double physical(Real v, double G, double scale) {
  return exact_mul(exact_mul(G, double(v)), scale);
}

}  // namespace nbody::cuda_resident
