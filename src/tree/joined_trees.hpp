#pragma once
// Several trees joined into one under a root of their own (a GPU rank's received essential
// trees, NBODY_DOMAIN_MERGE: tree/cuda/tree_gpu_merge.cu). Each tree's cells are numbered from
// its root, 0, and a cell's children are consecutive cells after it; its bodies are a range of
// its own array. In the joined tree cell 0 is the new root, cells 1..K the K trees' roots (the
// root's children, consecutive), then each tree's other cells in order; the bodies one tree
// after another. Index arithmetic only, shared by the CUDA kernel and its host test.
#include <cstddef>
#include <vector>

#include "nbody/host_device.hpp"

namespace nbody::tree {

/// Where cell i of a tree goes: its root to root_slot, cell i > 0 to cell_base + i - 1.
NBODY_HD unsigned joined_cell(unsigned i, unsigned root_slot, unsigned cell_base) {
  return i == 0 ? root_slot : cell_base + i - 1;
}

/// A cell's first child in the joined tree (a leaf's negative value kept; a root is nobody's
/// child, so a first child is never 0).
NBODY_HD int joined_first_child(int first_child, unsigned cell_base) {
  return first_child > 0 ? int(cell_base) + first_child - 1 : first_child;
}

/// The bases of each tree in the joined arrays, from the trees' cell and body counts (each
/// tree at least its root).
struct JoinPlan {
  std::vector<unsigned> cell_base, body_base;  // per tree
  unsigned cells = 1, bodies = 0;              // the joined tree's, its new root included
};

inline JoinPlan plan_join(const std::vector<unsigned>& cells, const std::vector<unsigned>& bodies) {
  JoinPlan p;
  const auto k = unsigned(cells.size());
  p.cells = 1 + k;
  for (unsigned j = 0; j < k; ++j) {
    p.cell_base.push_back(p.cells);
    p.body_base.push_back(p.bodies);
    p.cells += cells[j] - 1;
    p.bodies += bodies[j];
  }
  return p;
}

}  // namespace nbody::tree
