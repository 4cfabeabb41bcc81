#pragma once
// The power-of-two scaling of the GPU force evaluations (that of the CPU SIMD solver):
// positions and softening times 2^-p, masses times 2^-q (both O(1)), accelerations back
// by 2^(q-2p). Exact in binary, and it keeps float r^2 and masses in range whatever the
// units. The per-call solver (device_forces_solver.cu) scales on the host, the resident
// stepper (simulation/cuda) on the device.
#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>

namespace nbody::cuda_gravity {

inline constexpr int kPositionExponentLimit = 400;
inline constexpr int kMassExponentLimit = 200;

/// The exponent e with largest = f 2^e, f in [0.5, 1), clamped to [-limit, limit]; 0 for
/// 0, NaN or infinity. Host and device.
__host__ __device__ inline int scale_exponent(double largest, int limit) {
  if (!(largest > 0) || !(largest <= DBL_MAX)) return 0;
  int e = 0;
  (void)frexp(largest, &e);
  return e < -limit ? -limit : (e > limit ? limit : e);
}

}  // namespace nbody::cuda_gravity
