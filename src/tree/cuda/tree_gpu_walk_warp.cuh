#pragma once
// Warp-wide primitives of the GPU tree walk (tree_gpu_walk_kernel.cuh): min and max over
// the lanes, an exclusive prefix sum, a walk group's box.
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

/// The centre and half extents of the walk group `grp` (a range of tree positions in
/// `sorted`), as the walk's pass 1 makes its box: each lane's PerLane bodies (idle slots hold
/// the first), min and max over the warp, so the same bits.
template <int PerLane, class Real, class Body, class Range>
__device__ __forceinline__ void group_box(const Body* sorted, Range grp, unsigned lane,
                                          Real (&centre)[3], Real (&half)[3]) {
  Real lo[3], hi[3];
#pragma unroll
  for (int k = 0; k < PerLane; ++k) {
    const unsigned j = grp.begin + lane + 32u * unsigned(k);
    const Body e = sorted[j < grp.end ? j : grp.begin];
    const Real v[3] = {e.x, e.y, e.z};
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      lo[d] = k == 0 ? v[d] : min(lo[d], v[d]);
      hi[d] = k == 0 ? v[d] : max(hi[d], v[d]);
    }
  }
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    lo[d] = warp_min(lo[d]);
    hi[d] = warp_max(hi[d]);
    centre[d] = Real(0.5) * (lo[d] + hi[d]);
    half[d] = Real(0.5) * (hi[d] - lo[d]);
  }
}

}  // namespace

}  // namespace nbody::cuda_tree
