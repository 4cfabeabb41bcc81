#pragma once
// Warp-wide primitives of the GPU tree walk (tree_gpu_walk_kernel.cuh): min and max over
// the lanes, an exclusive prefix sum.
#include <cuda_runtime.h>

namespace nbody::cuda_tree {

namespace {

constexpr unsigned kFull = 0xffffffffu;  // every lane of the warp

template <class Real>
__device__ __forceinline__ Real warp_min(Real v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = min(v, __shfl_xor_sync(kFull, v, off));
  return v;
}
template <class Real>
__device__ __forceinline__ Real warp_max(Real v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = max(v, __shfl_xor_sync(kFull, v, off));
  return v;
}

/// Exclusive prefix sum over the warp; total in `sum`.
__device__ __forceinline__ int warp_exclusive_sum(int v, unsigned lane, int& sum) {
  int upto = v;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int u = __shfl_up_sync(kFull, upto, off);
    if (int(lane) >= off) upto += u;
  }
  sum = __shfl_sync(kFull, upto, 31);
  return upto - v;
}

}  // namespace

}  // namespace nbody::cuda_tree
