// The domain decomposition's keys and cuts (src/parallel/domain.hpp) on P = 1..4 thread ranks:
// the global cube and keys are the one-process tree's, bit for bit; balance() cuts the key
// line at cell boundaries into pieces of equal cost within the tolerance, and keeps the
// memory cap.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "domain_test_helpers.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"
#include "parallel/domain_state.hpp"
#include "thread_ranks.hpp"
#include "tree/tree.hpp"

namespace nbody {
namespace {

using parallel::DomainCuts;
using parallel::KeyCube;
using testing::first_rank;

struct CubeAndKeys {
  KeyCube cube;
  std::vector<std::uint64_t> keys;
};

TEST(DomainKeys, GlobalCubeAndKeysAreTheOneProcessTree) {
  for (const int dim : {2, 3}) {
    const ParticleSystem all = testing::domain_bodies(3000, dim);
    tree::Tree t;
    tree::bounding_cube(all, dim, 1, t);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
    tree::morton_keys(all, dim, 1, t, keyed);
    for (const int parts : {1, 2, 3, 4}) {
      const auto got = testing::run_parts<CubeAndKeys>(parts, [&](std::shared_ptr<ForceReducer> r) {
        const ParticleSystem mine =
            testing::subset(all, [&](std::size_t i) { return first_rank(i, parts) == r->part(); });
        const KeyCube cube = parallel::global_cube(mine, dim, *r, 1);
        return CubeAndKeys{
            cube, parallel::domain_keys(mine, dim, cube, 1, parallel::DomainCurve::Morton)};
      });
      std::vector<std::size_t> next(std::size_t(parts), 0);
      for (int p = 0; p < parts; ++p) {
        const KeyCube& c = got[std::size_t(p)].cube;  // bit for bit
        EXPECT_EQ(c.cx, t.root_x) << dim << "D, " << parts << " ranks";
        EXPECT_EQ(c.cy, t.root_y);
        EXPECT_EQ(c.cz, t.root_z);
        EXPECT_EQ(c.half, t.root_half);
      }
      for (std::size_t i = 0; i < all.size(); ++i) {
        const auto p = std::size_t(first_rank(i, parts));
        ASSERT_EQ(got[p].keys[next[p]++], keyed[i].first) << "body " << i << ", " << parts;
      }
    }
  }
}

TEST(DomainKeys, RanksWithoutBodiesAddNothingToTheCube) {
  ParticleSystem all = testing::domain_bodies(500, 3);
  all.x[3] = -40;  // an outlier on the rank that has the bodies
  tree::Tree t;
  tree::bounding_cube(all, 3, 1, t);
  const auto got = testing::run_parts<KeyCube>(3, [&](std::shared_ptr<ForceReducer> r) {
    return parallel::global_cube(r->part() == 1 ? all : ParticleSystem{}, 3, *r, 1);
  });
  for (const KeyCube& c : got) {
    EXPECT_EQ(c.cx, t.root_x);
    EXPECT_EQ(c.half, t.root_half);
  }
  const auto none = testing::run_parts<KeyCube>(2, [](std::shared_ptr<ForceReducer> r) {
    return parallel::global_cube(ParticleSystem{}, 3, *r, 1);
  });
  EXPECT_EQ(none[0].half, 1.0);
}

// Every rank's keys and costs for the bodies `all`, dealt by first_rank; cut by balance().
struct Balanced {
  DomainCuts cuts;
  double imbalance = 0;
};

std::vector<Balanced> cut(const ParticleSystem& all, int dim, int parts, bool skewed,
                          parallel::BalanceOptions options = {}) {
  return testing::run_parts<Balanced>(parts, [&](std::shared_ptr<ForceReducer> r) {
    const ParticleSystem mine =
        testing::subset(all, [&](std::size_t i) { return first_rank(i, parts) == r->part(); });
    // Morton keys: pieces() counts by tree::morton_keys (the Hilbert keys' cuts are tested in
    // test_domain_curve.cpp).
    const auto keys = parallel::domain_keys(mine, dim, parallel::global_cube(mine, dim, *r, 1), 1,
                                            parallel::DomainCurve::Morton);
    std::vector<double> cost(mine.size(), 1.0);
    if (skewed)
      for (std::size_t i = 0; i < mine.size(); ++i) cost[i] = testing::core_cost(mine, i);
    Balanced b{parallel::balance(keys, cost, dim, *r, options), 0};
    b.imbalance = parallel::imbalance(keys, cost, b.cuts, *r);
    return b;
  });
}

// The cost and count of each piece, counted here from all bodies (not by the library).
void pieces(const ParticleSystem& all, int dim, const DomainCuts& cuts, bool skewed,
            std::vector<double>& cost, std::vector<std::size_t>& count) {
  tree::Tree t;
  tree::bounding_cube(all, dim, 1, t);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
  tree::morton_keys(all, dim, 1, t, keyed);
  cost.assign(std::size_t(cuts.parts()), 0.0);
  count.assign(std::size_t(cuts.parts()), 0);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::uint64_t k = keyed[i].first;
    std::size_t p = 0;
    while (!(cuts.first[p] <= k && k < cuts.first[p + 1])) ++p;
    ASSERT_EQ(int(p), cuts.owner(k));
    cost[p] += skewed ? testing::core_cost(all, i) : 1.0;
    ++count[p];
  }
}

TEST(DomainCuts, EqualCostPiecesAtCellBoundaries) {
  for (const int dim : {2, 3}) {
    const ParticleSystem all = testing::domain_bodies(20000, dim);
    for (const bool skewed : {false, true}) {
      for (const int parts : {1, 2, 3, 4}) {
        SCOPED_TRACE(::testing::Message() << dim << "D, " << parts << " ranks, skewed " << skewed);
        const auto got = cut(all, dim, parts, skewed);
        const DomainCuts& c = got[0].cuts;
        for (const auto& g : got) EXPECT_EQ(g.cuts.first, c.first);  // the same on every rank
        ASSERT_EQ(c.first.size(), std::size_t(parts) + 1);
        EXPECT_EQ(c.first.front(), 0u);
        EXPECT_EQ(c.first.back(), parallel::kKeyEnd);
        EXPECT_TRUE(std::is_sorted(c.first.begin(), c.first.end()));
        EXPECT_TRUE(c.tolerance_met);
        // Cell boundaries of a coarse level: the cuts are unions of the tree's cells.
        EXPECT_LE(c.level, 12);
        for (int k = 1; k < parts; ++k)
          EXPECT_EQ(c.first[std::size_t(k)] % parallel::cell_width(dim, c.level), 0u);
        std::vector<double> cost;
        std::vector<std::size_t> count;
        pieces(all, dim, c, skewed, cost, count);
        double total = 0;
        for (double w : cost) total += w;
        for (int p = 0; p < parts; ++p) {
          EXPECT_LE(cost[std::size_t(p)], 1.05 * total / parts) << "rank " << p;
          EXPECT_GE(cost[std::size_t(p)], 0.95 * total / parts) << "rank " << p;
        }
        const double measured = *std::max_element(cost.begin(), cost.end()) / (total / parts);
        EXPECT_NEAR(got[0].imbalance, measured, 1e-9);
        EXPECT_LE(got[0].imbalance, 1.05);
      }
    }
  }
}

TEST(DomainCuts, TheMemoryCapHoldsWhereTheCostAloneWouldBreakIt) {
  const int dim = 3, parts = 4;
  const ParticleSystem all = testing::domain_bodies(8000, dim);
  std::vector<double> cost;
  std::vector<std::size_t> count;
  pieces(all, dim, cut(all, dim, parts, true)[0].cuts, true, cost, count);
  const std::size_t cap = 2200;  // the skewed cost alone gives the outer ranks more
  ASSERT_GT(*std::max_element(count.begin(), count.end()), cap);
  const auto capped = cut(all, dim, parts, true, {.tolerance = 0.05, .max_bodies_per_rank = cap});
  pieces(all, dim, capped[0].cuts, true, cost, count);
  for (std::size_t n : count) EXPECT_LE(n, cap);
  EXPECT_FALSE(capped[0].cuts.tolerance_met);
  EXPECT_THROW(
      {
        try {
          cut(all, dim, parts, false, {.tolerance = 0.05, .max_bodies_per_rank = 1999});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("do not fit 4 ranks of at most 1999"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
}

TEST(DomainCuts, CoincidentBodiesCannotBeSplit) {
  ParticleSystem all = testing::domain_bodies(400, 3);
  for (std::size_t i = 0; i < 300; ++i) all.x[i] = all.y[i] = all.z[i] = 0.25;
  const auto got = cut(all, 3, 2, false);
  EXPECT_FALSE(got[0].cuts.tolerance_met);  // 300 of 400 on one key: no piece of 200
  EXPECT_NEAR(got[0].imbalance, 1.5, 0.26);
  EXPECT_THROW(cut(all, 3, 2, false, {.tolerance = 0.05, .max_bodies_per_rank = 250}), Error);
}

TEST(DomainCuts, BadCostsStopEveryRank) {
  const auto results = testing::run_parts<int>(3, [](std::shared_ptr<ForceReducer> r) {
    std::vector<std::uint64_t> keys = {1, 2, 3};
    std::vector<double> cost = {1, r->part() == 1 ? -1.0 : 1.0, 1};
    try {
      (void)parallel::balance(keys, cost, 3, *r);
    } catch (const Error&) {
      return 1;
    }
    return 0;
  });
  for (int thrown : results) EXPECT_EQ(thrown, 1);
}

TEST(DomainCuts, NoBodiesAnywhereGiveEverythingToTheLastRank) {
  const auto got = testing::run_parts<DomainCuts>(3, [](std::shared_ptr<ForceReducer> r) {
    return parallel::balance({}, {}, 3, *r, {.tolerance = 0.05, .max_bodies_per_rank = 1});
  });
  EXPECT_EQ(got[1].first, (std::vector<std::uint64_t>{0, 0, 0, parallel::kKeyEnd}));
  EXPECT_EQ(got[1].owner(12345), 2);
}

// Not a test: the figures for docs/distributed.md (--gtest_also_run_disabled_tests).
TEST(DomainCuts, DISABLED_MeasurePlummer200k) {
  const std::size_t n = 200000;
  const ParticleSystem all = testing::domain_bodies(n, 3);
  for (const double tolerance : {0.05, 0.01, 0.001}) {
    for (const bool skewed : {false, true}) {
      for (const int parts : {2, 4}) {
        for (const bool capped : {false, true}) {
          if (capped && (!skewed || tolerance != 0.05)) continue;
          const std::size_t cap = capped ? n / std::size_t(parts) * 105 / 100 : 0;
          const auto t0 = std::chrono::steady_clock::now();
          const auto got = cut(all, 3, parts, skewed, {tolerance, cap});
          const double s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::printf(
              "Plummer N=%zu P=%d cost=%s tolerance=%g cap=%zu: imbalance %.5f, %d rounds, "
              "level %d, met %d, %.3f s (P thread ranks, with the keys)\n",
              n, parts, skewed ? "1/(r+0.01)" : "uniform", tolerance, cap, got[0].imbalance,
              got[0].cuts.rounds, got[0].cuts.level, int(got[0].cuts.tolerance_met), s);
        }
      }
    }
  }
}

// --energy exact on owned bodies: the pair sum by the ring, no rank holding all N. Every
// rank's shares give one process's diagnostics: W to the rounding of the summation order.
TEST(ExactDiagnostics, SharesByTheRingGiveOneProcesssPairSum) {
  const ParticleSystem all = testing::plummer_sphere(3000, 3, 17);
  const double G = 1.5, eps = 0.01;
  const Diagnostics one = compute_diagnostics(all, G, eps);
  for (int parts : {1, 2, 3}) {
    const auto got = testing::run_parts<Diagnostics>(parts, [&](std::shared_ptr<ForceReducer> r) {
      return parallel::exact_diagnostics(parallel::keep_share(all, r->part(), r->parts()), *r, G,
                                         eps);
    });
    for (const Diagnostics& d : got) {
      EXPECT_EQ(d.energy_method, EnergyMethod::Exact);
      EXPECT_NEAR(d.potential, one.potential, 1e-13 * std::abs(one.potential)) << parts;
      EXPECT_NEAR(d.kinetic, one.kinetic, 1e-13 * one.kinetic) << parts;
      EXPECT_NEAR(d.total_mass, one.total_mass, 1e-12) << parts;  // 3000 terms in another order
      EXPECT_EQ(d.potential, got[0].potential) << parts << ": every rank the same bits";
    }
  }
}

}  // namespace
}  // namespace nbody
