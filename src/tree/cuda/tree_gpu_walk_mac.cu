// The GPU tree walk with the bmax and relative opening criteria (issue #22;
// physics/opening_criterion.hpp): the kernels of tree_gpu_walk.cu with the Mac test, in a
// file of their own so that both compile side by side. bmax reads each cell's b_max (the
// moments' bound, tree_gpu_build.cu); relative takes alpha times the smallest |a_old| / G
// of the group's bodies (TreeForces::old_accelerations) and opens a cell when
// M s^2 > alpha |a_old| / G d^4, M and s from the records the geometric test reads.
#include <cuda_runtime.h>

#include <algorithm>

#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_launch.cuh"

namespace nbody::cuda_tree {

template <class Real>
unsigned mac_walk_blocks() {
  return std::max(
      {walk_blocks<Real, true, false, false, true>(),
       walk_blocks<Real, false, false, false, true>(), walk_blocks<Real, true, true, false, true>(),
       walk_blocks<Real, false, true, false, true>(), walk_blocks<Real, true, false, true, true>(),
       walk_blocks<Real, false, false, true, true>(), walk_blocks<Real, true, true, true, true>(),
       walk_blocks<Real, false, true, true, true>()});
}

template <class Real>
void launch_mac_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                     Vec4<Real>* out, cudaStream_t stream, bool active) {
  if (active) {
    launch_walk_variant<true, true>(t, p, eps2, stacks, out, stream);
  } else {
    launch_walk_variant<false, true>(t, p, eps2, stacks, out, stream);
  }
}

template unsigned mac_walk_blocks<float>();
template unsigned mac_walk_blocks<double>();
template void launch_mac_walk<float>(const TreeView<float>&, const WalkParams&, float, int*,
                                     Vec4<float>*, cudaStream_t, bool);
template void launch_mac_walk<double>(const TreeView<double>&, const WalkParams&, double, int*,
                                      Vec4<double>*, cudaStream_t, bool);

}  // namespace nbody::cuda_tree
