// The active variant of the walk of TreeForces::walk_sources (issue 36: hierarchical time
// steps on GPU ranks that own their bodies): the Foreign kernels of tree_gpu_walk_foreign.cu
// with Active set, for the bodies TreeForces::select_active listed, in a file of their own so
// that the two compile side by side. Each group is tested with its whole box, so an active
// body meets the cells, and gets the forces, of the full walk.
#include <cuda_runtime.h>

#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_launch.cuh"

namespace nbody::cuda_tree {

template <class Real>
void launch_foreign_active_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2,
                                int* stacks, Vec4<Real>* out, cudaStream_t stream) {
  if (t.bmax || t.a_old) {
    launch_walk_variant<true, true, Real, true>(t, p, eps2, stacks, out, stream);
  } else {
    launch_walk_variant<true, false, Real, true>(t, p, eps2, stacks, out, stream);
  }
}

template void launch_foreign_active_walk<float>(const TreeView<float>&, const WalkParams&, float,
                                                int*, Vec4<float>*, cudaStream_t);
template void launch_foreign_active_walk<double>(const TreeView<double>&, const WalkParams&, double,
                                                 int*, Vec4<double>*, cudaStream_t);

}  // namespace nbody::cuda_tree
