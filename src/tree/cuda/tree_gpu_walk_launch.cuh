#pragma once
// The launch of one walk variant (tree_gpu_walk_kernel.cuh): pass 1 and pass 2 on its
// persistent grid. Shared by tree_gpu_walk.cu (the geometric criterion) and
// tree_gpu_walk_mac.cu (bmax and relative), each compiling its own kernels.
#include <cuda_runtime.h>

#include <cstdlib>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_kernel.cuh"

namespace nbody::cuda_tree {

namespace {

/// launch_walk (Active false) and launch_active_walk: one variant's pass 1 and pass 2 (for
/// the abandoned groups) on its persistent grid. The active walk runs on the full walk's
/// grid, for which the stacks are sized (walk_warps: the most over every variant).
/// Mac: the bmax or relative criterion's kernels (tree_walk).
template <bool Active, bool Mac, class Real>
void launch_walk_variant(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                         Vec4<Real>* out, cudaStream_t stream) {
  const Real theta2 = Real(p.theta * p.theta);
  unsigned long long budget =
      t.a_old != nullptr ? relative_entry_budget(double(t.alpha)) : entry_budget(p.theta);
  // Tests and tuning: NBODY_TREE_ENTRY_BUDGET=64 sends almost every group to pass 2.
  if (const char* e = std::getenv("NBODY_TREE_ENTRY_BUDGET"))
    budget = std::strtoull(e, nullptr, 10);
  auto go = [&](auto softened, auto quad, auto pot) {
    constexpr bool S = decltype(softened)::value, Q = decltype(quad)::value,
                   P = decltype(pot)::value;
    const unsigned blocks = walk_blocks<Real, S, Q, P, Mac>();
    walk_kernel<Real, S, Q, false, P, Active, Mac>()<<<blocks, kWalkThreads<Real>, 0, stream>>>(
        t, theta2, eps2, budget, stacks, out);
    NBODY_CUDA_CHECK_LAUNCH("tree_walk");
    walk_kernel<Real, S, Q, true, P, Active, Mac>()<<<blocks, kWalkThreads<Real>, 0, stream>>>(
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

}  // namespace nbody::cuda_tree
