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
// tree_gpu_walk_kernel.cuh; this file launches it. The active walk (TreeForces::launch_active) is
// the same kernel with Active set: the bodies walked are the active ones of each group, read
// through a list of their tree positions, and the box tested is still the whole group's (the full
// walk's lists).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_kernel.cuh"

namespace nbody::cuda_tree {

template <class Real>
unsigned walk_warps(bool, int) {
  // The stacks are allocated once for the variant with the most resident warps.
  const unsigned blocks =
      std::max({walk_blocks<Real, true, false>(), walk_blocks<Real, false, false>(),
                walk_blocks<Real, true, true>(), walk_blocks<Real, false, true>(),
                walk_blocks<Real, true, false, true>(), walk_blocks<Real, false, false, true>(),
                walk_blocks<Real, true, true, true>(), walk_blocks<Real, false, true, true>()});
  return blocks * unsigned(kWalkWarps<Real>);
}

namespace {

/// launch_walk (Active false) and launch_active_walk: one variant's pass 1 and pass 2 (for
/// the abandoned groups) on its persistent grid. The active walk runs on the full walk's
/// grid, for which the stacks are sized.
template <bool Active, class Real>
void launch_walk_variant(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                         Vec4<Real>* out, cudaStream_t stream) {
  const Real theta2 = Real(p.theta * p.theta);
  unsigned long long budget = entry_budget(p.theta);
  // Tests and tuning: NBODY_TREE_ENTRY_BUDGET=64 sends almost every group to pass 2.
  if (const char* e = std::getenv("NBODY_TREE_ENTRY_BUDGET"))
    budget = std::strtoull(e, nullptr, 10);
  auto go = [&](auto softened, auto quad, auto pot) {
    constexpr bool S = decltype(softened)::value, Q = decltype(quad)::value,
                   P = decltype(pot)::value;
    const unsigned blocks = walk_blocks<Real, S, Q, P>();
    walk_kernel<Real, S, Q, false, P, Active>()<<<blocks, kWalkThreads<Real>, 0, stream>>>(
        t, theta2, eps2, budget, stacks, out);
    NBODY_CUDA_CHECK_LAUNCH("tree_walk");
    walk_kernel<Real, S, Q, true, P, Active>()<<<blocks, kWalkThreads<Real>, 0, stream>>>(
        t, theta2, eps2, budget, stacks, out);
    NBODY_CUDA_CHECK_LAUNCH("tree_walk");
  };
  auto with_quad = [&](auto softened, auto pot) {
    p.quadrupole ? go(softened, std::true_type{}, pot) : go(softened, std::false_type{}, pot);
  };
  auto with_pot = [&](auto softened) {
    p.potential ? with_quad(softened, std::true_type{}) : with_quad(softened, std::false_type{});
  };
  eps2 >= Real(1e-30) ? with_pot(std::true_type{}) : with_pot(std::false_type{});
}

}  // namespace

template <class Real>
void launch_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                 Vec4<Real>* out, cudaStream_t stream) {
  launch_walk_variant<false>(t, p, eps2, stacks, out, stream);
}

template <class Real>
void launch_active_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                        Vec4<Real>* out, cudaStream_t stream) {
  launch_walk_variant<true>(t, p, eps2, stacks, out, stream);
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
