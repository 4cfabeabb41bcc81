#pragma once
#include <cstddef>

namespace nbody::gpu {

/// Four values of one element (a body's x, y, z, m; an acceleration, w unused; a cell's
/// box or moments), 16-byte (float) or 32-byte (double) aligned so that a load is one
/// LDG/LDS.128 (float) or two (double). Own type rather than double4, which CUDA 13
/// deprecates.
template <class Real>
struct alignas(4 * sizeof(Real)) Vec4 {
  Real x, y, z, w;
};

}  // namespace nbody::gpu
