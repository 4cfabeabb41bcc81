// GravitySolver::compute_forces_active() of the CPU tree (hierarchical time steps): the active
// bodies' forces those of the full walk, bit for bit, every other entry and the flags
// untouched, shares of several processes that sum to the whole, a cost that follows them.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "active_forces_helpers.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "test_helpers.hpp"
#include "tree/tree_solver.hpp"

namespace nbody {
namespace {

using namespace active_forces_test;  // the helpers of this suite's files

// ---- The tree ------------------------------------------------------------------------

struct TreeCase {
  int dim;
  bool quadrupole;
};

std::string tree_case_name(const ::testing::TestParamInfo<TreeCase>& p) {
  return std::to_string(p.param.dim) + "d_" + (p.param.quadrupole ? "quadrupole" : "monopole");
}

class ActiveTree : public ::testing::TestWithParam<TreeCase> {
 protected:
  static constexpr double kSoftening = 0.02;
  [[nodiscard]] GravityOptions options() const {
    GravityOptions o;
    o.algorithm = GravityAlgorithm::Tree;
    o.precision = Precision::Float;
    o.G = kG;
    o.softening = kSoftening;
    o.mac = OpeningCriterion::Geometric;  // the same opening at every evaluation
    o.theta = 0.5;
    o.dim = GetParam().dim;
    o.quadrupole = GetParam().quadrupole;
    return o;
  }
  [[nodiscard]] std::unique_ptr<GravitySolver> solver() const {
    return make_tree_solver(options());
  }
  [[nodiscard]] ParticleSystem system(std::size_t n) const { return plummer(n, GetParam().dim); }
  /// Bounds on the force errors at theta 0.5, float (median, max), of the full walk.
  [[nodiscard]] std::pair<double, double> tolerance() const {
    if (GetParam().dim == 3)
      return GetParam().quadrupole ? std::pair{5e-4, 5e-3} : std::pair{2e-3, 2e-2};
    return GetParam().quadrupole ? std::pair{1e-3, 3e-2} : std::pair{2e-2, 0.5};
  }
};

TEST_P(ActiveTree, ActiveEntriesAreThoseOfTheFullWalk) {
  // A group shrunk to its active bodies keeps its whole box, so the walk opens the cells a
  // full evaluation opens: each active body's forces are the full walk's, bit for bit,
  // whatever else is active (and at the tree's accuracy against the direct sum).
  const ParticleSystem ps = system(4000);
  std::vector<std::size_t> all(ps.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, all, kG, kSoftening, exact);
  const auto [median_tolerance, max_tolerance] = tolerance();
  for (const bool potential : {false, true}) {
    SCOPED_TRACE(potential ? "with potential" : "accelerations");
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    for (const std::size_t k : {std::size_t(1), std::size_t(40), std::size_t(400)}) {
      SCOPED_TRACE(std::to_string(k) + " active");
      const std::vector<std::uint32_t> active = pick(ps.size(), k, 200 + k);
      const ParticleSystem out = active_forces(*s, ps, potential, active);
      expect_only_active_written(out, potential, active);
      std::size_t differ = 0;
      for (const std::uint32_t i : active) {
        differ += out.ax[i] != full.ax[i] || out.ay[i] != full.ay[i] || out.az[i] != full.az[i] ||
                  (potential && out.potential[i] != full.potential[i]);
      }
      EXPECT_EQ(differ, 0u) << "active bodies whose forces differ from the full walk's";
      const std::vector<std::size_t> idx(active.begin(), active.end());
      const ForceErrorStats got = summarize_errors(relative_force_errors(out, exact, idx));
      EXPECT_LE(got.max, max_tolerance);
      if (k > 1) {
        EXPECT_LE(got.median, median_tolerance);
      }
    }
  }
}

TEST_P(ActiveTree, EveryBodyActiveIsBitIdentical) {
  const ParticleSystem ps = system(3000);
  for (const bool potential : {false, true}) {
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    const double full_interactions = s->stats().interactions_per_body;
    const ParticleSystem out = active_forces(*s, ps, potential, everyone(ps.size()));
    expect_same_results(out, full, potential);
    EXPECT_EQ(s->stats().interactions_per_body, full_interactions);
  }
}

TEST_P(ActiveTree, FlagsAreNotChanged) {
  const ParticleSystem ps = system(300);
  expect_flags_unchanged(*solver(), ps);
}

TEST_P(ActiveTree, EmptyListChangesNothing) {
  const ParticleSystem ps = system(500);
  auto s = solver();
  const ParticleSystem out = active_forces(*s, ps, true, {});
  expect_only_active_written(out, true, {});
  EXPECT_EQ(s->stats().interactions_per_body, 0.0);
  ParticleSystem none;
  none.dim = GetParam().dim;
  s->compute_forces_active(none, true, {});
  EXPECT_TRUE(none.ax.empty());
}

TEST_P(ActiveTree, SingleBodyAndUnsoftened) {
  const ParticleSystem ps = system(2000);
  GravityOptions o = options();
  o.softening = 0;
  auto s = make_tree_solver(o);
  ParticleSystem exact = ps;
  direct_accelerations_for(ps, {0, 1234, 1999}, kG, 0.0, exact);
  for (const std::uint32_t i : {0U, 1234U, 1999U}) {
    const ParticleSystem out = active_forces(*s, ps, true, {i});
    expect_only_active_written(out, true, {i});
    EXPECT_LE(worst_relative(out, exact, {i}, false), tolerance().second) << "body " << i;
  }
}

TEST_P(ActiveTree, SharesSumToTheWhole) {
  const ParticleSystem ps = system(5000);  // 5 chunks of 1024 bodies dealt to 3 parts
  expect_shares_sum_to_whole([this] { return solver(); }, ps, pick(ps.size(), 1000));
}

TEST_P(ActiveTree, CostFollowsTheActiveBodies) {
  // 1% active: the active bodies' interactions, all told, about 1% of the full walk's
  // (each with its whole group's list).
  const ParticleSystem ps = system(20000);
  const std::vector<std::uint32_t> active = pick(ps.size(), 200, 9);
  auto s = solver();
  (void)full_forces(*s, ps, false);
  const double full_per_body = s->stats().interactions_per_body;
  const double full = full_per_body * double(ps.size());
  const ParticleSystem out = active_forces(*s, ps, false, active);
  expect_only_active_written(out, false, active);
  const double walked = s->stats().interactions_per_body * double(active.size());
  RecordProperty("fraction_of_full", std::to_string(walked / full));
  EXPECT_GT(walked, 0.0);
  EXPECT_LE(walked, 0.015 * full);
  EXPECT_LE(s->stats().interactions_per_body, 1.5 * full_per_body);
}

TEST_P(ActiveTree, OutOfRangeIsAClearError) {
  ParticleSystem ps = system(50);
  EXPECT_NE(test::error_of([&] {
              solver()->compute_forces_active(ps, false, {3, 50});
            }).find("50"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(CpuTree, ActiveTree,
                         ::testing::Values(TreeCase{3, false}, TreeCase{3, true},
                                           TreeCase{2, false}, TreeCase{2, true}),
                         tree_case_name);

}  // namespace
}  // namespace nbody
