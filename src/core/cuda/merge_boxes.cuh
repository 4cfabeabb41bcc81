#pragma once
// The union of two axis-aligned boxes (any type with double lo[3], hi[3]) as a cub reduction
// operator: the bodies' bounds of the GPU tree (tree_gpu_forces.cu), of a GPU rank's domain
// (device_domain.cu), of the collision grid (collision_detect.cu, which adds the radii) and
// of the dynamical time-step criterion's cells (simulation/cuda/cell_density.cu).
#include <cuda_runtime.h>

namespace nbody::gpu {

template <class Box>
struct MergeBoxes {
  __host__ __device__ Box operator()(const Box& a, const Box& b) const {
    Box r;
    for (int k = 0; k < 3; ++k) {
      r.lo[k] = fmin(a.lo[k], b.lo[k]);
      r.hi[k] = fmax(a.hi[k], b.hi[k]);
    }
    return r;
  }
};

}  // namespace nbody::gpu
