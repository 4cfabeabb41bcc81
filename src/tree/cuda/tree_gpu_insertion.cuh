#pragma once
// The GPU tree's insertion build (--tree-build insertion, tree_gpu_insertion.cu and
// tree_gpu_forces_insertion.cu): its pointer tree and its stages. The rest of the tree, and
// the arrays the layout fills, are tree_gpu.cuh's.
#include <cuda_runtime.h>

#include "tree/cuda/tree_gpu.cuh"

namespace nbody::cuda_tree {

/// The insertion build's pointer tree (tree_gpu_insertion.cu): inner nodes with 2^dim child
/// slots each (stride 8), leaves holding a list of bodies. A slot holds kSlotEmpty, kSlotLocked
/// (taken by atomicCAS while a thread changes what hangs there), an inner node (>= 0) or a
/// leaf L as -(L + 3). Node 0 is the root.
struct InsertTree {
  int* child = nullptr;             // 8 per inner node
  unsigned* inner_count = nullptr;  // bodies under each inner node
  int* leaf_head = nullptr;         // each leaf's first body (its list runs through next)
  unsigned* leaf_count = nullptr;   // bodies of each leaf
  unsigned* leaf_cell = nullptr;    // each leaf's cell in the laid-out tree
  int* next = nullptr;              // per body: the next body of its leaf, -1 at the end
  unsigned* leaf_of = nullptr;      // per body: its leaf
  int* cell_node = nullptr;         // per laid-out cell: its node (inner index, leaf code)
  unsigned* pool =
      nullptr;  // [0] inner nodes used, [1] leaves used, [2] overflow (1 inner, 2 leaves)
  unsigned inner_capacity = 0, leaf_capacity = 0;
  const unsigned long long* keys = nullptr;  // per body, input order (launch_keys)
};
inline constexpr int kSlotEmpty = -1;
inline constexpr int kSlotLocked = -2;

/// The insertion build (tree_gpu_insertion.cu): every body inserted from the root by its
/// key digits, concurrently, under -2 locks; s.pool[2] != 0 afterwards when a pool was too
/// small (the host grows it and inserts again).
void launch_insertion(const InsertTree& s, unsigned n, int dim, cudaStream_t stream);
/// The insertion tree laid out as launch_build's (the seeds' "sort" kernel): cells level by
/// level with contiguous children in digit order, body ranges from the counts (t.counter[1]
/// bit 1 on overflow of the cell arrays: grow and lay out again), box, level_start.
template <class Real>
void launch_layout(const TreeView<Real>& t, const InsertTree& s, cudaStream_t stream);
/// Then every body to its place: sorted, order, keys in tree order, as the Morton build's.
template <class Real>
void launch_place(const TreeView<Real>& t, const InsertTree& s, cudaStream_t stream);

}  // namespace nbody::cuda_tree
