#pragma once
// Small helpers every CUDA concern uses around its launches: selecting this process's
// GPU, and the number of blocks that cover n items.
#include <cuda_runtime.h>

#include <cstddef>

#include "core/cuda/cuda_check.cuh"
#include "nbody/build_info.hpp"

namespace nbody::gpu {

/// Makes this process's GPU (gpu_in_use(): 0, or the one its MPI rank picked) the current
/// device; every CUDA path calls it before it allocates or queries the device.
inline void select_gpu() {
  NBODY_CUDA_CHECK(cudaSetDevice(gpu_in_use()));
}

/// Blocks of `threads` threads that cover n items (the last one partly idle).
inline unsigned blocks_for(std::size_t n, unsigned threads) {
  return unsigned((n + threads - 1) / threads);
}

}  // namespace nbody::gpu
