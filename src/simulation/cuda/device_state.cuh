#pragma once
// The resident state of the device stepper: float64 SoA arrays in device memory, as on the
// CPU (ARCHITECTURE.md: "the state itself stays float64"), and the launch shape its
// kernels share.
#include <algorithm>
#include <cstddef>

namespace nbody::cuda_resident {

/// The float64 state in device memory (SoA: coalesced loads).
struct State {
  double *x, *y, *z, *vx, *vy, *vz, *ax, *ay, *az;
  const double* m;
  unsigned n;
};

inline constexpr int kThreads = 256;
inline constexpr unsigned kMaxBlocks = 4096;

/// A grid-stride launch over n items: one thread an item, at most kMaxBlocks blocks.
inline unsigned blocks_for(std::size_t n) {
  return unsigned(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

}  // namespace nbody::cuda_resident
