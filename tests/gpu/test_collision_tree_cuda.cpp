// The GPU tree contact search (--collision-search tree --device gpu) against the CPU grid:
// the same pairs on every input of the CPU test (unit/collision_search_inputs.hpp) and on a
// larger cloud, and the same handler results as the GPU grid (its resolution takes the
// pairs as sorted partner lists, so the final states agree to the bit). Every test skips
// itself when the machine has no usable CUDA device.
#include <gtest/gtest.h>

#include <string>

#include "backend_test.hpp"
#include "nbody/collisions.hpp"
#include "unit/collision_search_inputs.hpp"

namespace nbody {
namespace {

constexpr auto kTree = CollisionSearch::Tree;
constexpr auto kGrid = CollisionSearch::Grid;

TEST(GpuTreeContactSearch, SamePairsAsTheCpuGrid) {
  NBODY_SKIP_WITHOUT_GPU();
  for (int dim : {2, 3}) {
    for (const auto& [name, ps] : test::search_inputs(dim)) {
      for (double skin : {0.0, 0.25}) {
        const std::string what =
            name + ", dim " + std::to_string(dim) + ", skin " + std::to_string(skin);
        const auto expected = find_contact_pairs(ps, skin, 0, Device::Cpu, kGrid);
        EXPECT_GT(expected.size(), 100u) << what;
        const auto tree = find_contact_pairs(ps, skin, 0, Device::Gpu, kTree);
        ASSERT_EQ(tree.size(), expected.size()) << what;
        EXPECT_TRUE(tree == expected) << what;
      }
    }
  }
  // A larger cloud with a spread of radii (many threads, deep descents).
  const double r = test::radius_for_fraction(200000, 3, 0.2);
  const ParticleSystem big = test::cloud(200000, 31, 3, [r](auto& rng) {
    return r * (test::uniform(rng, 0, 1) < 0.01 ? 20.0 : test::uniform(rng, 0.5, 1.5));
  });
  const auto expected = find_contact_pairs(big, 0.25, 0, Device::Cpu, kGrid);
  EXPECT_GT(expected.size(), 100000u);
  EXPECT_TRUE(find_contact_pairs(big, 0.25, 0, Device::Gpu, kTree) == expected);
  EXPECT_TRUE(find_contact_pairs(big, 0.25, 0, Device::Gpu, kGrid) == expected);
}

TEST(GpuTreeContactSearch, HandlerGivesTheGpuGridsResultsBitwise) {
  NBODY_SKIP_WITHOUT_GPU();
  for (int dim : {2, 3}) {
    for (CollisionModel model : {CollisionModel::Bounce, CollisionModel::Merge}) {
      // Dense: chains of contacts, bodies in many pairs at once.
      const double r = test::radius_for_fraction(5000, dim, 0.4);
      const ParticleSystem start =
          test::cloud(5000, 32, dim, [r](auto& rng) { return r * test::uniform(rng, 0.5, 1.5); });
      ParticleSystem grid = start, tree = start;
      CollisionOptions o = test::collision_options(model, 0.7, 4, dim, Device::Gpu);
      const CollisionStats g = make_collision_handler(o)->resolve(grid);
      o.search = kTree;
      auto by_tree = make_collision_handler(o);
      EXPECT_EQ(by_tree->name(), std::string(to_string(model)) + "-tree-gpu");
      const CollisionStats t = by_tree->resolve(tree);
      EXPECT_GT(g.contacts, 1000u);
      EXPECT_EQ(t.contacts, g.contacts);
      EXPECT_EQ(t.candidates, g.candidates);
      EXPECT_EQ(t.merges, g.merges);
      EXPECT_EQ(t.searches, g.searches);
      EXPECT_EQ(t.energy_lost, g.energy_lost);
      EXPECT_EQ(tree.id, grid.id);
      EXPECT_EQ(tree.x, grid.x);
      EXPECT_EQ(tree.y, grid.y);
      EXPECT_EQ(tree.z, grid.z);
      EXPECT_EQ(tree.vx, grid.vx);
      EXPECT_EQ(tree.vy, grid.vy);
      EXPECT_EQ(tree.mass, grid.mass);
      EXPECT_EQ(tree.radius, grid.radius);
    }
  }
}

}  // namespace
}  // namespace nbody
