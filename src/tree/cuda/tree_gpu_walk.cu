// The GPU tree's force walk: one warp per group of <= kMaxGroup tree-ordered bodies, each
// lane owning up to 4 of them (lane, lane + 32, ...), so that every list entry read feeds
// 4 interactions.
//
// The warp walks with a stack of cells in global memory (its own slice; the grid is
// persistent, warps take groups from an atomic cursor, so the stacks are sized by the
// GPU, not by N). Each round pops up to 32 cells, one per lane, and tests them against the
// group's bounding box with the CPU tree's test (opening_criterion.hpp: overlap, or
// s^2 >= theta^2 d^2 with d from the centre of mass to the box): __ballot_sync sorts the
// lanes' answers into the accepted cells and the opened leaves, appended to two lists in
// shared memory, and the opened inner cells push their children (a warp prefix sum gives
// each lane its slots). When a list holds 32 entries the whole warp evaluates it: every
// lane against every entry (a broadcast read), with the direct sum's pair function and,
// for --quadrupole, the quadrupole term (multipole.hpp) on accepted cells. With the
// potentials (a Pot variant of each kernel) the same terms add them too, the lists
// carrying the opened bodies' tree positions so that each body leaves itself out. The lists
// and their evaluation are in tree_gpu_walk_lists.cuh, the traversal in
// tree_gpu_walk_kernel.cuh, its launch in tree_gpu_walk_launch.cuh; this file compiles and
// launches the geometric criterion's kernels, tree_gpu_walk_mac.cu those of bmax and
// relative. The active walk (TreeForces::launch_active) is the same kernel with Active set:
// the bodies walked are the active ones of each group, read through a list of their tree
// positions, and the box tested is still the whole group's (the full walk's lists).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_launch.cuh"

namespace nbody::cuda_tree {

template <class Real>
unsigned walk_warps(bool, int) {
  // The stacks are allocated once for the variant with the most resident warps.
  const unsigned blocks =
      std::max({walk_blocks<Real, true, false>(), walk_blocks<Real, false, false>(),
                walk_blocks<Real, true, true>(), walk_blocks<Real, false, true>(),
                walk_blocks<Real, true, false, true>(), walk_blocks<Real, false, false, true>(),
                walk_blocks<Real, true, true, true>(), walk_blocks<Real, false, true, true>(),
                mac_walk_blocks<Real>(), foreign_walk_blocks<Real>()});
  return blocks * unsigned(kWalkWarps<Real>);
}

template <class Real>
void launch_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                 Vec4<Real>* out, cudaStream_t stream) {
  if (t.foreign.box || t.accumulate || t.cost || t.shared)
    return launch_foreign_walk(t, p, eps2, stacks, out, stream);
  if (t.bmax || t.a_old) return launch_mac_walk(t, p, eps2, stacks, out, stream, false);
  launch_walk_variant<false, false>(t, p, eps2, stacks, out, stream);
}

template <class Real>
void launch_active_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                        Vec4<Real>* out, cudaStream_t stream) {
  if (t.foreign.box || t.accumulate || t.cost || t.shared)  // a decomposed run's (select_active)
    return launch_foreign_active_walk(t, p, eps2, stacks, out, stream);
  if (t.bmax || t.a_old) return launch_mac_walk(t, p, eps2, stacks, out, stream, true);
  launch_walk_variant<true, false>(t, p, eps2, stacks, out, stream);
}

template unsigned walk_warps<float>(bool, int);
template unsigned walk_warps<double>(bool, int);
template void launch_walk<float>(const TreeView<float>&, const WalkParams&, float, int*,
                                 Vec4<float>*, cudaStream_t);
template void launch_walk<double>(const TreeView<double>&, const WalkParams&, double, int*,
                                  Vec4<double>*, cudaStream_t);
template void launch_active_walk<float>(const TreeView<float>&, const WalkParams&, float, int*,
                                        Vec4<float>*, cudaStream_t);
template void launch_active_walk<double>(const TreeView<double>&, const WalkParams&, double, int*,
                                         Vec4<double>*, cudaStream_t);

}  // namespace nbody::cuda_tree
