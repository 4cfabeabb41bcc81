// The direct sum of the domain decomposition (parallel/direct_ring.hpp): P thread ranks, each
// owning a scattered part of the bodies, get from the ring of travelling blocks the forces
// and potentials one process's direct sum gives its bodies, to the rounding of the order
// the blocks are added in. A ring that skipped a block, counted one twice or kept a body's
// own potential term would be off by far more than that.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "domain_test_helpers.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "parallel/direct_ring.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

void ring_matches_one_process(Precision precision, int dim, double tolerance) {
  const ParticleSystem all = testing::plummer_sphere(1000, dim, 5);
  GravityOptions o;
  o.precision = precision;
  o.softening = 0.01;
  o.G = 0.7;
  ParticleSystem one = all;
  make_gravity_solver(o)->compute_forces(one, true);
  for (const int parts : {1, 2, 3, 4}) {
    const auto got =
        testing::run_parts<ParticleSystem>(parts, [&](std::shared_ptr<ForceReducer> comm) {
          ParticleSystem mine = testing::dealt_share(all, comm->part(), comm->parts());
          auto ring = parallel::make_direct_ring(precision, o.G, o.softening, 1);
          ring->compute_forces(mine, true, *comm);
          EXPECT_TRUE(mine.accelerations_valid());
          EXPECT_TRUE(mine.potentials_valid());
          EXPECT_GT(ring->stats().pairs, 0u);
          EXPECT_EQ(ring->stats().bytes_sent > 0, comm->parts() > 1);
          return mine;
        });
    double worst = 0, worst_phi = 0;
    for (int p = 0; p < parts; ++p) {
      const ParticleSystem& mine = got[std::size_t(p)];
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const std::size_t i = std::size_t(p) + k * std::size_t(parts);
        ASSERT_EQ(mine.id[k], one.id[i]);
        const double a = std::hypot(one.ax[i], one.ay[i], one.az[i]);
        const double d =
            std::hypot(mine.ax[k] - one.ax[i], mine.ay[k] - one.ay[i], mine.az[k] - one.az[i]);
        worst = std::max(worst, d / a);
        worst_phi = std::max(worst_phi, std::abs(mine.potential[k] / one.potential[i] - 1));
      }
    }
    EXPECT_LE(worst, tolerance) << parts << " ranks, " << dim << "D";
    EXPECT_LE(worst_phi, tolerance) << parts << " ranks, " << dim << "D";
  }
}

TEST(DirectRing, DoubleMatchesOneProcess) {
  ring_matches_one_process(Precision::Double, 3, 1e-12);
  ring_matches_one_process(Precision::Double, 2, 1e-12);
}

TEST(DirectRing, FloatMatchesOneProcess) {
  ring_matches_one_process(Precision::Float, 3, 1e-4);
}

TEST(DirectRing, RankWithoutBodies) {
  const ParticleSystem all = testing::plummer_sphere(50, 3, 5);
  GravityOptions o;
  o.precision = Precision::Double;
  ParticleSystem one = all;
  make_gravity_solver(o)->compute_forces(one, false);
  const auto got = testing::run_parts<ParticleSystem>(3, [&](std::shared_ptr<ForceReducer> c) {
    ParticleSystem mine =
        c->part() == 1 ? ParticleSystem{} : testing::dealt_share(all, c->part() / 2, 2);
    parallel::make_direct_ring(Precision::Double, 1.0, 0.0, 1)->compute_forces(mine, false, *c);
    return mine;
  });
  EXPECT_EQ(got[1].size(), 0u);
  for (std::size_t k = 0; k < got[2].size(); ++k)
    EXPECT_NEAR(got[2].ax[k], one.ax[1 + 2 * k], 1e-12 * std::abs(one.ax[1 + 2 * k]) + 1e-15);
}

}  // namespace
}  // namespace nbody
