// GravitySolver::compute_forces_active() of the CPU direct sum (SIMD), which computes the
// active bodies alone (hierarchical time steps): the active entries as a full
// compute_forces() gives them (to rounding; bit for bit when every body is active), every
// other entry and the validity flags untouched, empty and single-body lists, no NaN without
// softening, shares of several processes that sum to the whole, and a cost that follows the
// number of active bodies (counted, never timed). The tree: test_active_forces_tree.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "active_forces_helpers.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

using namespace active_forces_test;  // the helpers of this suite's files

// ---- The direct sum ------------------------------------------------------------------

struct DirectCase {
  Precision precision;
  double softening;
};

std::string direct_case_name(const ::testing::TestParamInfo<DirectCase>& p) {
  return std::string(to_string(p.param.precision)) +
         (p.param.softening > 0 ? "_softened" : "_unsoftened");
}

class ActiveDirect : public ::testing::TestWithParam<DirectCase> {
 protected:
  [[nodiscard]] std::unique_ptr<GravitySolver> solver(int threads = 2) const {
    return simd::make_direct_simd(GetParam().precision, kG, GetParam().softening, threads,
                                  simd::best_isa());
  }
  [[nodiscard]] double tolerance() const {
    return GetParam().precision == Precision::Float ? 1e-5 : 1e-12;
  }
};

TEST_P(ActiveDirect, ActiveEntriesMatchTheFullEvaluation) {
  const ParticleSystem ps = plummer(2000);
  for (const bool potential : {false, true}) {
    SCOPED_TRACE(potential ? "with potential" : "accelerations");
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    for (const std::size_t k : {std::size_t(1), std::size_t(37), std::size_t(300)}) {
      const std::vector<std::uint32_t> active = pick(ps.size(), k, 100 + k);
      const ParticleSystem out = active_forces(*s, ps, potential, active);
      expect_only_active_written(out, potential, active);
      const double worst = worst_relative(out, full, active, potential);
      RecordProperty("worst_relative_" + std::to_string(k) + (potential ? "_phi" : ""),
                     std::to_string(worst));
      EXPECT_LE(worst, tolerance()) << k << " active";
    }
  }
}

TEST_P(ActiveDirect, EveryBodyActiveIsBitIdentical) {
  const ParticleSystem ps = plummer(1000);  // not a multiple of the block
  for (const bool potential : {false, true}) {
    auto s = solver();
    const ParticleSystem full = full_forces(*s, ps, potential);
    const ParticleSystem out = active_forces(*s, ps, potential, everyone(ps.size()));
    expect_same_results(out, full, potential);
  }
}

TEST_P(ActiveDirect, FlagsAreNotChanged) {
  const ParticleSystem ps = plummer(300);
  expect_flags_unchanged(*solver(), ps);
}

TEST_P(ActiveDirect, EmptyListChangesNothing) {
  const ParticleSystem ps = plummer(500);
  auto s = solver();
  const ParticleSystem out = active_forces(*s, ps, true, {});
  expect_only_active_written(out, true, {});
  EXPECT_EQ(s->stats().interactions_per_body, 0.0);
  ParticleSystem none;
  s->compute_forces_active(none, true, {});
  EXPECT_TRUE(none.ax.empty());
}

TEST_P(ActiveDirect, SingleBodyAtEitherEnd) {
  const ParticleSystem ps = plummer(777);
  auto s = solver();
  const ParticleSystem full = full_forces(*s, ps, true);
  for (const std::uint32_t i : {0U, 400U, 776U}) {
    const ParticleSystem out = active_forces(*s, ps, true, {i});
    expect_only_active_written(out, true, {i});
    EXPECT_LE(worst_relative(out, full, {i}, true), tolerance()) << "body " << i;
  }
}

TEST_P(ActiveDirect, CoincidentBodiesGiveNoNaN) {
  // Without softening the self pair, and a distinct body at the same place, have r = 0.
  ParticleSystem ps = plummer(200);
  ps.x[5] = ps.x[4];
  ps.y[5] = ps.y[4];
  ps.z[5] = ps.z[4];
  const std::vector<std::uint32_t> active{4, 5, 150};
  const ParticleSystem out = active_forces(*solver(), ps, true, active);
  expect_only_active_written(out, true, active);
}

TEST_P(ActiveDirect, SharesSumToTheWhole) {
  const ParticleSystem ps = plummer(2000);
  const std::vector<std::uint32_t> active = pick(ps.size(), 500);  // 8 blocks of 64
  expect_shares_sum_to_whole([this] { return solver(); }, ps, active);
  // Every body active: the shares of a full evaluation, bit for bit.
  const ParticleSystem full = full_forces(*solver(), ps, true);
  ParticleSystem sum = with_sentinels(ps);
  for (int f = 0; f < 4; ++f) field(sum, f)->assign(ps.size(), 0.0);
  for (int part = 0; part < 3; ++part) {
    auto s = solver();
    s->set_share(part, 3);
    const ParticleSystem share = active_forces(*s, ps, true, everyone(ps.size()));
    for (int f = 0; f < 4; ++f) {
      for (std::size_t i = 0; i < ps.size(); ++i) (*field(sum, f))[i] += field(share, f)[i];
    }
  }
  expect_same_results(sum, full, true);
}

TEST_P(ActiveDirect, CostFollowsTheActiveBodies) {
  // 1% of N = 20000: the kernel runs 4 blocks of 64 targets against all N sources, 1.28%
  // of the full evaluation's N^2 pairs.
  constexpr std::size_t kN = 20000;
  const ParticleSystem ps = test::random_system(kN, 5);
  const std::vector<std::uint32_t> active = pick(kN, kN / 100, 9);
  auto s = solver();
  const ParticleSystem out = active_forces(*s, ps, false, active);
  expect_only_active_written(out, false, active);
  const double pairs = s->stats().interactions_per_body * double(active.size());
  const double fraction = pairs / (double(kN) * double(kN));
  RecordProperty("fraction_of_full", std::to_string(fraction));
  EXPECT_GE(fraction, 0.01);
  EXPECT_LE(fraction, 0.0130);
  // And right: against the float64 reference on the active bodies.
  ParticleSystem exact = ps;
  std::vector<std::size_t> indices(active.begin(), active.end());
  direct_accelerations_for(ps, indices, kG, GetParam().softening, exact);
  const double worst = worst_relative(out, exact, active, false);
  EXPECT_LE(worst, GetParam().precision == Precision::Float ? 1e-4 : 1e-12);
}

TEST_P(ActiveDirect, FullEvaluationCountsEveryPair) {
  const ParticleSystem ps = plummer(1000);
  auto s = solver();
  (void)full_forces(*s, ps, false);
  EXPECT_EQ(s->stats().interactions_per_body, 1024.0);  // padded to the block
}

TEST_P(ActiveDirect, BadListIsAClearError) {
  ParticleSystem ps = plummer(50);
  auto s = solver();
  EXPECT_NE(test::error_of([&] {
              s->compute_forces_active(ps, false, {3, 50});
            }).find("50"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              s->compute_forces_active(ps, false, {3, 3});
            }).find("twice"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(CpuDirect, ActiveDirect,
                         ::testing::Values(DirectCase{Precision::Double, 0.0},
                                           DirectCase{Precision::Double, 0.05},
                                           DirectCase{Precision::Float, 0.0},
                                           DirectCase{Precision::Float, 0.05}),
                         direct_case_name);

}  // namespace
}  // namespace nbody
