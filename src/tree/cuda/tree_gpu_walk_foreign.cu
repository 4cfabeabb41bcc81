// The GPU tree walk of TreeForces::walk_sources (issue 35): the kernels of tree_gpu_walk.cu
// and tree_gpu_walk_mac.cu with Foreign set (sources from a received essential tree, results
// added to out[], per-body costs), in a file of their own so that the default kernels keep
// their registers and the files compile side by side.
#include <cuda_runtime.h>

#include <algorithm>

#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_launch.cuh"

namespace nbody::cuda_tree {

template <class Real>
unsigned foreign_walk_blocks() {
  return std::max({walk_blocks<Real, true, false, false, false, true>(),
                   walk_blocks<Real, false, false, false, false, true>(),
                   walk_blocks<Real, true, true, false, false, true>(),
                   walk_blocks<Real, false, true, false, false, true>(),
                   walk_blocks<Real, true, false, true, false, true>(),
                   walk_blocks<Real, false, false, true, false, true>(),
                   walk_blocks<Real, true, true, true, false, true>(),
                   walk_blocks<Real, false, true, true, false, true>(),
                   walk_blocks<Real, true, false, false, true, true>(),
                   walk_blocks<Real, false, false, false, true, true>(),
                   walk_blocks<Real, true, true, false, true, true>(),
                   walk_blocks<Real, false, true, false, true, true>(),
                   walk_blocks<Real, true, false, true, true, true>(),
                   walk_blocks<Real, false, false, true, true, true>(),
                   walk_blocks<Real, true, true, true, true, true>(),
                   walk_blocks<Real, false, true, true, true, true>()});
}

template <class Real>
void launch_foreign_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                         Vec4<Real>* out, cudaStream_t stream) {
  if (t.bmax || t.a_old) {
    launch_walk_variant<false, true, Real, true>(t, p, eps2, stacks, out, stream);
  } else {
    launch_walk_variant<false, false, Real, true>(t, p, eps2, stacks, out, stream);
  }
}

template unsigned foreign_walk_blocks<float>();
template unsigned foreign_walk_blocks<double>();
template void launch_foreign_walk<float>(const TreeView<float>&, const WalkParams&, float, int*,
                                         Vec4<float>*, cudaStream_t);
template void launch_foreign_walk<double>(const TreeView<double>&, const WalkParams&, double, int*,
                                          Vec4<double>*, cudaStream_t);

}  // namespace nbody::cuda_tree
