// Trees joined under a root of their own (tree/joined_trees.hpp; the GPU ranks' received
// essential trees with NBODY_DOMAIN_MERGE=1, tree/cuda/tree_gpu_merge.cu, whose kernel uses
// the same index arithmetic): joined on the host as the kernel joins them, every cell of
// every tree is reached once from the new root, with its own children in order and its own
// bodies.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "tree/joined_trees.hpp"

namespace nbody {
namespace {

struct Link {
  int first_child, child_count;
  unsigned begin, end;
};

struct SmallTree {
  std::vector<Link> cells;  // cell 0 the root; children consecutive, after their parent
  std::vector<int> bodies;
};

std::vector<SmallTree> three_trees() {
  SmallTree a;  // root -> {leaf of 3 bodies, inner -> {leaf of 2, a pruned cell}}
  a.cells = {{1, 2, 0, 5}, {-1, 0, 0, 3}, {3, 2, 3, 5}, {-1, 0, 3, 5}, {-1, 0, 5, 5}};
  a.bodies = {100, 101, 102, 103, 104};
  SmallTree b;  // a root that is a leaf
  b.cells = {{-1, 0, 0, 2}};
  b.bodies = {200, 201};
  SmallTree c;  // root -> three leaves
  c.cells = {{1, 3, 0, 4}, {-1, 0, 0, 1}, {-1, 0, 1, 3}, {-1, 0, 3, 4}};
  c.bodies = {300, 301, 302, 303};
  return {a, b, c};
}

TEST(JoinedTrees, EveryCellIsReachedOnceWithItsChildrenAndBodies) {
  const std::vector<SmallTree> trees = three_trees();
  std::vector<unsigned> cells, bodies;
  for (const SmallTree& t : trees)
    cells.push_back(unsigned(t.cells.size())), bodies.push_back(unsigned(t.bodies.size()));
  const tree::JoinPlan plan = tree::plan_join(cells, bodies);
  ASSERT_EQ(plan.cells, 1u + 5 + 1 + 4);  // the new root, then every tree's cells
  ASSERT_EQ(plan.bodies, 11u);

  // Joined as the kernel joins them; origin: which tree's which cell each slot holds.
  std::vector<Link> joined(plan.cells, Link{-2, -2, 0, 0});
  std::vector<std::pair<int, int>> origin(plan.cells, {-1, -1});
  std::vector<int> joined_bodies(plan.bodies, -1);
  const auto k = unsigned(trees.size());
  joined[0] = {1, int(k), 0, plan.bodies};
  for (unsigned j = 0; j < k; ++j) {
    for (unsigned i = 0; i < cells[j]; ++i) {
      const unsigned at = tree::joined_cell(i, 1 + j, plan.cell_base[j]);
      ASSERT_LT(at, plan.cells);
      ASSERT_EQ(origin[at].first, -1) << "slot " << at << " written twice";
      Link l = trees[j].cells[i];
      l.first_child = tree::joined_first_child(l.first_child, plan.cell_base[j]);
      l.begin += plan.body_base[j];
      l.end += plan.body_base[j];
      joined[at] = l;
      origin[at] = {int(j), int(i)};
    }
    for (unsigned b = 0; b < bodies[j]; ++b)
      joined_bodies[plan.body_base[j] + b] = trees[j].bodies[b];
  }
  for (unsigned at = 1; at < plan.cells; ++at) EXPECT_NE(origin[at].first, -1) << "slot " << at;

  // The walk's way down from the new root: each cell once, as the tree it came from has it.
  std::vector<int> seen(plan.cells, 0);
  std::vector<unsigned> stack = {0};
  while (!stack.empty()) {
    const unsigned at = stack.back();
    stack.pop_back();
    ++seen[at];
    const Link& l = joined[at];
    if (at == 0) {  // the new root: the trees' roots, in order
      for (unsigned j = 0; j < k; ++j) EXPECT_EQ(origin[1 + j], std::make_pair(int(j), 0));
    } else {
      const auto [j, i] = origin[at];
      const Link& was = trees[std::size_t(j)].cells[std::size_t(i)];
      EXPECT_EQ(l.child_count, was.child_count);
      for (int c = 0; c < l.child_count; ++c)  // the same children, consecutive, in order
        EXPECT_EQ(origin[std::size_t(l.first_child + c)], std::make_pair(j, was.first_child + c));
      ASSERT_EQ(l.end - l.begin, was.end - was.begin);
      for (unsigned b = 0; b < l.end - l.begin; ++b)
        EXPECT_EQ(joined_bodies[l.begin + b], trees[std::size_t(j)].bodies[was.begin + b]);
    }
    for (int c = 0; c < l.child_count; ++c) stack.push_back(unsigned(l.first_child + c));
  }
  for (unsigned at = 0; at < plan.cells; ++at) EXPECT_EQ(seen[at], 1) << "slot " << at;
}

}  // namespace
}  // namespace nbody
