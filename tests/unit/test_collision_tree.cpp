// The tree contact search (seed 001 §3, --collision-search tree) against the grid and
// brute force: the same candidate pairs on every input, and the same handler results
// (contacts, final state) in bounce and merge stages.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "collision_search_inputs.hpp"
#include "nbody/collisions.hpp"

namespace nbody {
namespace {

using test::brute_force_pairs;

TEST(TreeContactSearch, SamePairsAsTheGridAndBruteForce) {
  for (int dim : {2, 3}) {
    for (const auto& [name, ps] : test::search_inputs(dim)) {
      for (double skin : {0.0, 0.25}) {
        const std::string what =
            name + ", dim " + std::to_string(dim) + ", skin " + std::to_string(skin);
        const auto expected = brute_force_pairs(ps, skin);
        EXPECT_GT(expected.size(), 100u) << what;  // a real test: many contacts
        const auto grid = find_contact_pairs(ps, skin, 1, Device::Cpu, CollisionSearch::Grid);
        EXPECT_TRUE(grid == expected) << what;
        for (int threads : {1, 2}) {
          const auto tree =
              find_contact_pairs(ps, skin, threads, Device::Cpu, CollisionSearch::Tree);
          ASSERT_EQ(tree.size(), expected.size()) << what << ", threads " << threads;
          EXPECT_TRUE(tree == expected) << what << ", threads " << threads;
        }
      }
    }
  }
}

TEST(TreeContactSearch, LargeSpreadOutCloudAndEdgeCases) {
  // More bodies than one work chunk (threads split the search), tiny bodies in a huge box
  // with a dense clump in the middle (the finest cells of the keys are then too coarse).
  ParticleSystem ps = test::cloud(12000, 26, 3, [](auto&) { return 2e-6; });
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double scale = i % 2 ? 1e7 : 1e-4;
    ps.x[i] *= scale;
    ps.y[i] *= scale;
    ps.z[i] *= scale;
  }
  const auto grid = find_contact_pairs(ps, 0.25, 2, Device::Cpu, CollisionSearch::Grid);
  EXPECT_GT(grid.size(), 100u);
  EXPECT_TRUE(find_contact_pairs(ps, 0.25, 2, Device::Cpu, CollisionSearch::Tree) == grid);
  EXPECT_TRUE(
      find_contact_pairs(ParticleSystem{}, 0, 0, Device::Cpu, CollisionSearch::Tree).empty());
  ParticleSystem one;
  one.add(Body{{1, 2, 3}, {}, 1.0, 0.5, 0});
  EXPECT_TRUE(find_contact_pairs(one, 0, 0, Device::Cpu, CollisionSearch::Tree).empty());
  one.add(Body{{1, 2, 3.9}, {}, 1.0, 0.5, 0});
  EXPECT_EQ(find_contact_pairs(one, 0, 0, Device::Cpu, CollisionSearch::Tree).size(), 1u);
}

/// 200 touching, approaching pairs on a jittered lattice, so that no body is in two
/// contacts and the Gauss-Seidel passes give the same result in any pair order (each
/// search resolves its pairs in its own order).
ParticleSystem isolated_pairs(int dim) {
  ParticleSystem ps = test::cloud(400, 27, dim, [](auto&) { return 0.004; });
  const int side = dim == 3 ? 6 : 15;
  for (std::size_t k = 0; 2 * k + 1 < ps.size(); ++k) {
    const std::size_t i = 2 * k;
    const auto cell = [&](int axis) {
      int c = int(k);
      for (int a = 0; a < axis; ++a) c /= side;
      return 0.1 * (c % side) + 0.01 * ps.x[i + 1];  // jitter from the cloud
    };
    ps.x[i] = cell(0);
    ps.y[i] = cell(1);
    ps.z[i] = dim == 3 ? cell(2) : 0.0;
    ps.x[i + 1] = ps.x[i] + 0.007;
    ps.y[i + 1] = ps.y[i] + 0.001 * ps.vy[i];
    ps.z[i + 1] = ps.z[i];
    ps.vx[i + 1] = ps.vx[i] - 0.05;
  }
  return ps;
}

TEST(TreeContactSearch, HandlerGivesTheGridsContactsAndFinalState) {
  for (int dim : {2, 3}) {
    for (CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
      const ParticleSystem start = isolated_pairs(dim);
      // Each body touches at most its partner (else the pair order would matter).
      const auto pairs = find_contact_pairs(start, 0.25);
      ASSERT_GT(pairs.size(), 150u);
      std::vector<int> in_pairs(start.size(), 0);
      for (const IndexPair& p : pairs) ASSERT_EQ(++in_pairs[p.a] + ++in_pairs[p.b], 2);
      ParticleSystem grid = start, tree = start;
      CollisionOptions o = test::collision_options(model, 0.8, 3, dim);
      auto by_grid = make_collision_handler(o);
      o.search = CollisionSearch::Tree;
      auto by_tree = make_collision_handler(o);
      EXPECT_EQ(by_tree->name(), std::string(to_string(model)) + "-tree-cpu");
      const CollisionStats g = by_grid->resolve(grid), t = by_tree->resolve(tree);
      EXPECT_EQ(t.contacts, g.contacts);
      EXPECT_EQ(t.candidates, g.candidates);
      EXPECT_EQ(t.merges, g.merges);
      EXPECT_GT(g.contacts, 150u);
      EXPECT_NEAR(t.energy_lost, g.energy_lost, 1e-12 * std::abs(g.energy_lost) + 1e-15);
      ASSERT_EQ(tree.size(), grid.size());
      for (std::size_t i = 0; i < grid.size(); ++i) {
        ASSERT_EQ(tree.id[i], grid.id[i]);
        EXPECT_NEAR(tree.x[i], grid.x[i], 1e-14);
        EXPECT_NEAR(tree.y[i], grid.y[i], 1e-14);
        EXPECT_NEAR(tree.vx[i], grid.vx[i], 1e-14);
        EXPECT_NEAR(tree.vy[i], grid.vy[i], 1e-14);
        EXPECT_NEAR(tree.mass[i], grid.mass[i], 1e-15);
        EXPECT_NEAR(tree.radius[i], grid.radius[i], 1e-15);
      }
    }
  }
}

}  // namespace
}  // namespace nbody
