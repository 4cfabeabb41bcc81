// TreeForces::walk_received (issues 35/39): the essential trees a rank received, walked one by
// one (the default) or joined into one tree and walked once (NBODY_DOMAIN_MERGE=1, an
// experiment). On 4 H200s at 64M bodies the received trees' three walks took 14.5 ms a step for
// 543-762 interactions a body, ~1.5x the local walk's cost per interaction: each walk loads
// and stores every group again, flushes its own short lists, and ends with its own grid's
// tail. Joined, a group meets every received tree in one walk.
//
// The joined tree, in the layout of one received buffer (essential_sources): cell 0 a root
// of its own, with the common root cube every rank's tree is built in (so the walk's slack is
// the same, and every group, inside that cube, opens it); its children the received trees'
// roots, in cells 1..K; then each tree's other cells, their links moved by the tree's base;
// the bodies one after another. The walk's decisions for a cell depend on the cell and the
// group alone, so the interactions are those of the separate walks; their sums come in
// another order.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_essential_layout.cuh"
#include "tree/joined_trees.hpp"

namespace nbody::cuda_tree {

namespace {

/// Cell 0: the common root cube (received root 0's box), no mass, children 1..k.
template <class Real>
__global__ void join_root(const Vec4<Real>* first_root_box, unsigned k, unsigned bodies,
                          Packed<Real> to) {
  const Vec4<Real> b = first_root_box[0];
  to.box[0] = b;
  to.com[0] = {b.x, b.y, b.z, Real(0)};
  if (to.quad) to.quad[0] = to.quad[1] = {};
  if (to.bmax) to.bmax[0] = Real(0);
  if (to.shared) to.shared[0] = 0;
  to.link[0] = {1, int(k), 0u, bodies};
}

/// One received tree's cells: its root to `root_slot`, cell i > 0 to cell_base + i - 1,
/// children and bodies moved by the same bases.
template <class Real>
__global__ void join_cells(TreeSources<Real> from, unsigned root_slot, unsigned cell_base,
                           unsigned body_base, Packed<Real> to) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= from.cells) return;
  const unsigned at = tree::joined_cell(i, root_slot, cell_base);
  pack_cell(from.box, from.com, from.quad, from.bmax, from.shared, i, to, at);
  CellLink l = from.link[i];
  l.first_child = tree::joined_first_child(l.first_child, cell_base);
  l.begin += body_base;
  l.end += body_base;
  to.link[at] = l;
}

}  // namespace

template <class Real>
void TreeForces<Real>::walk_received(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                                     const std::vector<TreeSources<Real>>& received, bool merge) {
  if (!merge || received.size() < 2) {
    for (const TreeSources<Real>& s : received) walk_sources(n, eps, stream, potential, &s, true);
    return;
  }
  std::vector<unsigned> cells, bodies;
  for (const TreeSources<Real>& s : received) cells.push_back(s.cells), bodies.push_back(s.bodies);
  const tree::JoinPlan plan = tree::plan_join(cells, bodies);
  const EssentialCounts all{plan.cells, plan.bodies};
  const bool bmax = mac_ == OpeningCriterion::Bmax;
  merged_.reserve(layout<Real>(all, quadrupole_, bmax, decomposed_).end, "essential trees joined");
  const Packed<Real> to = packed_at<Real>(merged_.data(), all, quadrupole_, bmax, decomposed_);
  const auto k = unsigned(received.size());
  join_root<Real><<<1, 1, 0, stream>>>(received[0].box, k, all.bodies, to);
  NBODY_CUDA_CHECK_LAUNCH("join_root");
  for (unsigned j = 0; j < k; ++j) {
    const TreeSources<Real>& s = received[j];
    join_cells<Real><<<gpu::blocks_for(s.cells, 256), 256, 0, stream>>>(s, 1 + j, plan.cell_base[j],
                                                                        plan.body_base[j], to);
    NBODY_CUDA_CHECK_LAUNCH("join_cells");
    if (s.bodies > 0) {
      NBODY_CUDA_CHECK(cudaMemcpyAsync(to.bodies + plan.body_base[j], s.sorted,
                                       s.bodies * sizeof(Vec4<Real>), cudaMemcpyDeviceToDevice,
                                       stream));
    }
  }
  const TreeSources<Real> joined = essential_sources(merged_.data(), all);
  // Its second pass tests the shared top cells with the group's box, as every other walk of
  // the build (tree_gpu_walk_kernel.cuh): with the body's point box ~1 % of the bodies of some
  // decompositions had errors up to 7-13x one process's 99th percentile (the relative
  // criterion on 3-4 thread ranks, GpuDomain.ReceivedTreesWalkedAsOneKeepOneProcessForces).
  walk_sources(n, eps, stream, potential, &joined, true);
}

template void TreeForces<float>::walk_received(std::size_t, float, cudaStream_t, bool,
                                               const std::vector<TreeSources<float>>&, bool);
template void TreeForces<double>::walk_received(std::size_t, double, cudaStream_t, bool,
                                                const std::vector<TreeSources<double>>&, bool);

}  // namespace nbody::cuda_tree
