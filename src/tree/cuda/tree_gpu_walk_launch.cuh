#pragma once
// The launch of one walk variant (tree_gpu_walk_kernel.cuh): pass 1 and pass 2 on its
// persistent grid. Shared by tree_gpu_walk.cu (the geometric criterion) and
// tree_gpu_walk_mac.cu (bmax and relative), each compiling its own kernels.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_walk_kernel.cuh"

namespace nbody::cuda_tree {

/// The walk with t.foreign, t.accumulate or t.cost set (tree_gpu_walk_foreign.cu), any criterion.
template <class Real>
void launch_foreign_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2, int* stacks,
                         Vec4<Real>* out, cudaStream_t stream);
template <class Real>
unsigned foreign_walk_blocks();
/// Its active variant (TreeForces::select_active; tree_gpu_walk_foreign_active.cu).
template <class Real>
void launch_foreign_active_walk(const TreeView<Real>& t, const WalkParams& p, Real eps2,
                                int* stacks, Vec4<Real>* out, cudaStream_t stream);

namespace {

template <class Real, bool Softened, bool Quad, bool Single = false, bool Pot = false,
          bool Active = false, bool Mac = false, bool Foreign = false>
auto walk_kernel() {
  using Math = typename cuda_gravity::MathFor<Real, true, Softened>::type;
  return tree_walk<Real, Math, Quad, Single, Pot, Active, Mac, Foreign>;
}

/// The persistent grid of a walk variant. Queried once (device 0 is the only one used):
/// it was three runtime queries per launch, on every step.
template <class Real, bool Softened, bool Quad, bool Pot = false, bool Mac = false,
          bool Foreign = false>
unsigned walk_blocks() {
  static const unsigned blocks = [] {
    int device = 0, sms = 1, per_sm = 0;
    NBODY_CUDA_CHECK(cudaGetDevice(&device));
    NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, walk_kernel<Real, Softened, Quad, false, Pot, false, Mac, Foreign>(),
        kWalkThreads<Real>, 0));
    return unsigned(sms) * unsigned(per_sm > 0 ? per_sm : 1);
  }();
  return blocks;
}

// A budget of list entries, at least 4096 and at most 10^9 (b = 1e30: none).
inline unsigned long long clamp_budget(double b) {
  return b < 4096.0 ? 4096ULL : (b > 1e9 ? 1000000000ULL : (unsigned long long)b);
}

// A group whose list passes entry_budget(theta) entries goes to pass 2, body by body:
// ~3x the mean list of a 1M-16M Plummer sphere (4300 entries at theta = 0.5, 1950 at 0.7;
// the mean scales as theta^-2 there). At 8x the mean the budget-sized groups still made
// the tail (1M, theta 0.5: walk 4.9 ms, against 2.5 ms of average work).
inline unsigned long long entry_budget(double theta) {
  return clamp_budget(theta > 0 ? 3000.0 / (theta * theta) : 1e30);
}

// The relative criterion's lists follow alpha instead: 1M Plummer, eps 0.05, mean 1840
// entries at alpha 0.004 and 4340 at 0.0005 (~alpha^-0.41). Its best budgets measured
// (H200, full steps, nbody bench tree): alpha 0.005 ~4500 (2.95 ms per step; 4000 3.01,
// 5470 3.01-3.05, 6500 3.14, 3000 3.42), 0.002 ~6500 (3.91 ms; 5000 4.17, 8000 4.01),
// 0.0005 ~14000 (6.77 ms; 10000 7.06, 8000 8.37): ~alpha^-0.49, 2.6-3.2x the mean list. A
// central group, whose smallest |a_old| is tiny, is then walked body by body, where each
// body opens for its own.
inline unsigned long long relative_entry_budget(double alpha) {
  return clamp_budget(alpha > 0 ? 4500.0 * std::pow(alpha / 0.005, -0.49) : 1e30);
}

/// launch_walk (Active false) and launch_active_walk: one variant's pass 1 and pass 2 (for
/// the abandoned groups) on its persistent grid. The active walk runs on the full walk's
/// grid, for which the stacks are sized (walk_warps: the most over every variant).
/// Mac: the bmax or relative criterion's kernels (tree_walk); Foreign: walk_sources' kernels.
template <bool Active, bool Mac, class Real, bool Foreign = false>
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
    const unsigned blocks = walk_blocks<Real, S, Q, P, Mac, Foreign>();
    walk_kernel<Real, S, Q, false, P, Active, Mac,
                Foreign>()<<<blocks, kWalkThreads<Real>, 0, stream>>>(t, theta2, eps2, budget,
                                                                      stacks, out);
    NBODY_CUDA_CHECK_LAUNCH("tree_walk");
    walk_kernel<Real, S, Q, true, P, Active, Mac,
                Foreign>()<<<blocks, kWalkThreads<Real>, 0, stream>>>(t, theta2, eps2, budget,
                                                                      stacks, out);
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
