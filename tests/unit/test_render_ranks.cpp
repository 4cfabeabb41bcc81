// nbody render under mpirun (cli/render_ranks.hpp): the frames' bodies gathered to rank 0
// from ranks that own their bodies, whole or every k-th by id; thread ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "cli/render_ranks.hpp"
#include "domain_test_helpers.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

SimulationOptions tree_run() {
  SimulationOptions o;
  o.gravity.algorithm = GravityAlgorithm::Tree;
  o.gravity.threads = 1;
  o.gravity.softening = 0.01;
  return o;
}

TEST(RenderRanks, Rank0GetsEveryBodyInIdOrderOrEveryKth) {
  const ParticleSystem start = testing::plummer_sphere(5000, 3, 9);
  for (int parts : {2, 3}) {
    testing::run_parts<int>(parts, [&](std::shared_ptr<ForceReducer> r) {
      Simulation sim(start, tree_run(), r);
      EXPECT_TRUE(sim.decomposed());
      sim.step(0.01);  // the bodies have migrated: each rank holds its own
      const ParticleSystem whole = sim.all_particles();  // collective, id order
      ParticleSystem gathered;
      const ParticleSystem& drawn = cli::drawn_bodies(sim, r.get(), gathered);
      if (r->part() != 0) {
        EXPECT_EQ(drawn.size(), 0u);
      } else {
        EXPECT_EQ(drawn.size(), whole.size());
        for (std::size_t i = 0; i < std::min(drawn.size(), whole.size()); ++i) {
          EXPECT_EQ(drawn.id[i], whole.id[i]);
          EXPECT_EQ(drawn.x[i], whole.x[i]);
          EXPECT_EQ(drawn.vz[i], whole.vz[i]);
        }
      }
      // At most 1000 of 5000: every 5th id.
      const ParticleSystem& few = cli::drawn_bodies(sim, r.get(), gathered, 1000);
      if (r->part() == 0) {
        EXPECT_EQ(few.size(), 1000u);
        for (std::size_t i = 0; i < few.size(); ++i) EXPECT_EQ(few.id[i] % 5, 0u);
      }
      return 0;
    });
  }
}

TEST(RenderRanks, OneProcessDrawsItsOwnBodies) {
  Simulation sim(testing::plummer_sphere(100, 3, 9), tree_run());
  ParticleSystem gathered;
  EXPECT_EQ(&cli::drawn_bodies(sim, nullptr, gathered), &sim.particles());
}

}  // namespace
}  // namespace nbody
