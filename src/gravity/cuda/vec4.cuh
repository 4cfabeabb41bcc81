#pragma once
#include <cstddef>

namespace nbody::cuda_direct {

/// One body as the kernels read it: (x, y, z, m), 16-byte (float) or 32-byte (double)
/// aligned so that a load is one LDG/LDS.128 (float) or two (double). Also used for the
/// accelerations (w unused). Own type rather than double4, which CUDA 13 deprecates.
template <class Real>
struct alignas(4 * sizeof(Real)) Vec4 {
  Real x, y, z, w;
};

}  // namespace nbody::cuda_direct
