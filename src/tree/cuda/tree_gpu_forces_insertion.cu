// TreeForces' seed-document variants: the insertion build's host side (its pools, grown and
// the insertion redone when one runs out; the layout redone when the cell arrays do) and
// the walk in input order (the seeds' "without kernel 4").
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/error.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/cuda/tree_gpu_insertion.cuh"

namespace nbody::cuda_tree {

namespace {

/// Pools for n bodies: inner nodes are cells of more than kLeafSize bodies (~0.1 n for a
/// Plummer sphere); leaves are the tree's plus one retired per split.
std::size_t initial_inner(std::size_t n) {
  return n / 4 + 64;
}
std::size_t initial_leaves(std::size_t n) {
  return n / 2 + 64;
}

/// The input-order walk: position[order[k]] = k (each input body's tree position), groups
/// of kMaxGroup consecutive input bodies, the walk's counters for that many groups.
template <class Real>
__global__ void input_walk_groups(TreeView<Real> t, unsigned* position, Group* groups) {
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned count = (t.n + kMaxGroup - 1) / kMaxGroup;
  if (k == 0) {
    t.counter[2] = count;
    t.counter[3] = 0;
    t.counter[4] = 0;
    t.counter[5] = 0;
  }
  if (k < t.n) position[t.order[k]] = k;
  if (k < count) groups[k] = {k * kMaxGroup, min(t.n, (k + 1) * kMaxGroup)};
}

}  // namespace

template <class Real>
void TreeForces<Real>::reserve_insertion(std::size_t n, std::size_t inner, std::size_t leaves) {
  if (n > ins_body_capacity_) {
    ins_next_.reserve(n, "tree insertion lists");
    ins_leaf_of_.reserve(n, "tree insertion leaf of each body");
    ins_body_capacity_ = n;
  }
  if (inner > std::size_t(INT32_MAX) / 8 || leaves > std::size_t(INT32_MAX) / 2) {
    throw Error("GPU tree: the insertion build's node pools do not fit 32-bit indices");
  }
  if (inner > ins_inner_capacity_) {
    ins_child_.reserve(8 * inner, "tree insertion child slots");
    ins_inner_count_.reserve(inner, "tree insertion counts");
    ins_inner_capacity_ = inner;
  }
  if (leaves > ins_leaf_capacity_) {
    ins_leaf_head_.reserve(leaves, "tree insertion leaves");
    ins_leaf_count_.reserve(leaves, "tree insertion leaf counts");
    ins_leaf_cell_.reserve(leaves, "tree insertion leaf cells");
    ins_leaf_capacity_ = leaves;
  }
  ins_pool_.reserve(3, "tree insertion pools");
  ins_cell_node_.reserve(cell_capacity_, "tree cell nodes");
}

template <class Real>
InsertTree TreeForces<Real>::insert_view() const {
  InsertTree s;
  s.child = ins_child_.data();
  s.inner_count = ins_inner_count_.data();
  s.leaf_head = ins_leaf_head_.data();
  s.leaf_count = ins_leaf_count_.data();
  s.leaf_cell = ins_leaf_cell_.data();
  s.next = ins_next_.data();
  s.leaf_of = ins_leaf_of_.data();
  s.cell_node = ins_cell_node_.data();
  s.pool = ins_pool_.data();
  s.inner_capacity = unsigned(ins_inner_capacity_);
  s.leaf_capacity = unsigned(ins_leaf_capacity_);
  s.keys = keys_tmp_.data();
  return s;
}

template <class Real>
unsigned TreeForces<Real>::build_insertion(std::size_t n, cudaStream_t stream) {
  reserve_insertion(n, initial_inner(n), initial_leaves(n));
  // build: the keys (the Morton build's digits, so the same cells), then the insertion
  TreeView<Real> unsorted = view(n);
  unsorted.keys = keys_tmp_.data();
  unsorted.order = order_tmp_.data();
  launch_keys(unsorted, stream);
  for (;;) {
    launch_insertion(insert_view(), unsigned(n), dim_, stream);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(host_counters_, ins_pool_.data(), 3 * sizeof(unsigned),
                                     cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
    const unsigned overflow = host_counters_[2];
    if (overflow == 0) break;
    const std::size_t inner = (overflow & 1u) != 0 ? 2 * ins_inner_capacity_ : 0;
    const std::size_t leaves = (overflow & 2u) != 0 ? 2 * ins_leaf_capacity_ : 0;
    reserve_insertion(n, inner, leaves);
  }
  NBODY_CUDA_CHECK(cudaEventRecord(events_[2], stream));

  // sort: the pointer tree laid out level by level (redone while the cells overflow), then
  // the bodies put in tree order
  const unsigned cells =
      until_cells_fit([&] { launch_layout(view(n), insert_view(), stream); }, stream);
  launch_place(view(n), insert_view(), stream);
  return cells;
}

template <class Real>
void TreeForces<Real>::set_input_order_walk(bool input) {
  if (input && opens_by_old_accelerations(mac_, theta_)) {
    throw Error(
        "GPU tree: the walk in input order takes the geometric or bmax criterion (the relative "
        "one's group minimum is read over the tree-ordered groups)");
  }
  input_walk_ = input;
}

template <class Real>
void TreeForces<Real>::prepare_input_walk(TreeView<Real>& t, std::size_t n, cudaStream_t stream) {
  if (parts_ > 1) {  // a group's bodies lie in every process's chunks: one process only
    throw Error("GPU tree: the walk in input order runs in one process only");
  }
  const std::size_t groups = (n + kMaxGroup - 1) / kMaxGroup;
  active_pos_.reserve(body_capacity_, "tree input positions");
  active_groups_.reserve(std::max(groups, cell_capacity_), "tree input groups");
  input_walk_groups<Real>
      <<<gpu::blocks_for(n, 256), 256, 0, stream>>>(t, active_pos_.data(), active_groups_.data());
  NBODY_CUDA_CHECK_LAUNCH("tree input_walk_groups");
  t.active_pos = active_pos_.data();
  t.active_groups = active_groups_.data();
  t.groups = active_groups_.data();  // read as the "whole" group, whose box own_box replaces
  t.own_box = true;
}

template <class Real>
std::vector<CellLink> TreeForces<Real>::cells() const {
  std::vector<CellLink> links(n_ == 0 ? 0 : cells_);
  if (!links.empty()) {
    NBODY_CUDA_CHECK(cudaDeviceSynchronize());
    NBODY_CUDA_CHECK(cudaMemcpy(links.data(), link_.data(), links.size() * sizeof(CellLink),
                                cudaMemcpyDeviceToHost));
  }
  return links;
}

#define NBODY_TREE_FORCES_INSERTION(Real)                                                         \
  template void TreeForces<Real>::reserve_insertion(std::size_t, std::size_t, std::size_t);       \
  template InsertTree TreeForces<Real>::insert_view() const;                                      \
  template unsigned TreeForces<Real>::build_insertion(std::size_t, cudaStream_t);                 \
  template void TreeForces<Real>::set_input_order_walk(bool);                                     \
  template void TreeForces<Real>::prepare_input_walk(TreeView<Real>&, std::size_t, cudaStream_t); \
  template std::vector<CellLink> TreeForces<Real>::cells() const;
NBODY_TREE_FORCES_INSERTION(float)
NBODY_TREE_FORCES_INSERTION(double)
#undef NBODY_TREE_FORCES_INSERTION

}  // namespace nbody::cuda_tree
