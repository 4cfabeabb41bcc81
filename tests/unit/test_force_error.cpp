// Force-error statistics: nearest-rank quantiles on known vectors, deterministic distinct
// sampling, the sampled float64 reference against the full scalar direct sum, and the
// float32-vs-float64 error level (small but not zero), which needs no tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gravity/direct_scalar.hpp"
#include "nbody/error.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

TEST(ForceErrorStats, NearestRankQuantilesOfOneToTen) {
  std::vector<double> e{7, 3, 10, 1, 9, 2, 8, 5, 4, 6};  // order must not matter
  const ForceErrorStats s = summarize_errors(e);
  EXPECT_EQ(s.sample, 10u);
  EXPECT_EQ(s.median, 5);  // rank ceil(0.5 * 10) = 5
  EXPECT_EQ(s.p90, 9);     // rank 9
  EXPECT_EQ(s.p99, 10);    // rank ceil(9.9) = 10
  EXPECT_EQ(s.p999, 10);
  EXPECT_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.rms, std::sqrt(385.0 / 10.0));  // sum of squares 1..10 = 385
}

TEST(ForceErrorStats, NearestRankQuantilesOfAThousand) {
  std::vector<double> e;
  for (int i = 1000; i >= 1; --i) e.push_back(i / 1000.0);
  const ForceErrorStats s = summarize_errors(e);
  EXPECT_EQ(s.median, 0.5);
  EXPECT_EQ(s.p90, 0.9);
  EXPECT_EQ(s.p99, 0.99);
  EXPECT_EQ(s.p999, 0.999);  // exactly rank 999: no floating-point rounding up to 1000
  EXPECT_EQ(s.max, 1.0);
}

TEST(ForceErrorStats, SingleEmptyAndNaN) {
  const ForceErrorStats one = summarize_errors({0.25});
  EXPECT_EQ(one.median, 0.25);
  EXPECT_EQ(one.p999, 0.25);
  EXPECT_EQ(one.rms, 0.25);
  const ForceErrorStats none = summarize_errors({});
  EXPECT_EQ(none.sample, 0u);
  EXPECT_EQ(none.max, 0);
  // A NaN force error must not hide: it counts as infinite.
  const ForceErrorStats nan =
      summarize_errors({1e-3, std::numeric_limits<double>::quiet_NaN(), 2e-3});
  EXPECT_TRUE(std::isinf(nan.max));
  EXPECT_EQ(nan.median, 2e-3);
}

TEST(ForceErrorSampling, AllIndicesWhenKIsZeroOrAtLeastN) {
  for (std::size_t k : {std::size_t(0), std::size_t(50), std::size_t(80)}) {
    const auto idx = sample_indices(50, k, 1);
    ASSERT_EQ(idx.size(), 50u);
    for (std::size_t i = 0; i < idx.size(); ++i) EXPECT_EQ(idx[i], i);
  }
  EXPECT_TRUE(sample_indices(0, 10, 1).empty());
}

TEST(ForceErrorSampling, DistinctSortedDeterministic) {
  for (std::size_t k : {std::size_t(1), std::size_t(100), std::size_t(9999)}) {
    const auto a = sample_indices(10000, k, 42);
    ASSERT_EQ(a.size(), k);
    EXPECT_TRUE(std::adjacent_find(a.begin(), a.end(), [](auto x, auto y) { return x >= y; }) ==
                a.end())
        << "indices must be strictly increasing (sorted and distinct)";
    EXPECT_LT(a.back(), 10000u);
    EXPECT_EQ(a, sample_indices(10000, k, 42)) << "same seed, same sample";
  }
  EXPECT_NE(sample_indices(10000, 100, 1), sample_indices(10000, 100, 2));
}

TEST(ForceErrorSampling, CoversTheRangeEvenly) {
  // Half of 10000 bodies: each half of the index range should get close to half the sample
  // (the standard deviation of the count is ~25, so 200 is a very loose bound).
  const auto idx = sample_indices(10000, 5000, 7);
  const auto low = std::count_if(idx.begin(), idx.end(), [](std::size_t i) { return i < 5000; });
  EXPECT_NEAR(double(low), 2500.0, 200.0);
}

TEST(ForceErrors, RelativeAndAbsoluteWhenExactIsZero) {
  ParticleSystem exact = test::random_system(3, 1);
  ParticleSystem approx = exact;
  exact.ax = {3, 0, 0};
  exact.ay = {4, 0, 0};
  exact.az = {0, 0, 0};
  approx.ax = {3, 0, 0};
  approx.ay = {4, 0.5, 0};
  approx.az = {0.05, 0, 0};
  const auto e = relative_force_errors(approx, exact, {0, 1, 2});
  ASSERT_EQ(e.size(), 3u);
  EXPECT_DOUBLE_EQ(e[0], 0.05 / 5.0);
  EXPECT_DOUBLE_EQ(e[1], 0.5);  // |a_exact| = 0: the absolute error
  EXPECT_EQ(e[2], 0.0);
  EXPECT_THROW((void)relative_force_errors(approx, exact, {3}), Error);
  EXPECT_THROW((void)relative_force_errors(test::random_system(4, 1), exact, {0}), Error);
}

TEST(ForceErrorReference, SampledDirectSumEqualsFullScalarSum) {
  const double G = 0.7, softening = 0.01;
  const ParticleSystem ps = test::random_system(1500, 11);
  ParticleSystem full = ps;
  DirectSumScalar<double>(G, softening).compute_accelerations(full);

  ParticleSystem sampled = ps;
  std::fill(sampled.ax.begin(), sampled.ax.end(), -123.0);  // marks bodies not computed
  const auto idx = sample_indices(ps.size(), 200, 3);
  direct_accelerations_for(ps, idx, G, softening, sampled);
  for (const std::size_t i : idx) {
    const double scale = std::hypot(full.ax[i], full.ay[i], full.az[i]);
    EXPECT_NEAR(sampled.ax[i], full.ax[i], 1e-14 * scale) << i;
    EXPECT_NEAR(sampled.ay[i], full.ay[i], 1e-14 * scale) << i;
    EXPECT_NEAR(sampled.az[i], full.az[i], 1e-14 * scale) << i;
  }
  const auto untouched = std::count(sampled.ax.begin(), sampled.ax.end(), -123.0);
  EXPECT_EQ(std::size_t(untouched), ps.size() - idx.size()) << "only sampled bodies are written";
  const auto errors = relative_force_errors(sampled, full, idx);
  EXPECT_EQ(summarize_errors(errors).max, 0.0);

  ParticleSystem wrong_size = test::random_system(10, 1);
  EXPECT_THROW(direct_accelerations_for(ps, idx, G, softening, wrong_size), Error);
}

TEST(ForceErrorReference, FloatDirectSumErrorsAreAboutFloatEpsilon) {
  ModelOptions model;
  model.model = "plummer";
  model.n = 3000;
  model.seed = 5;
  const ParticleSystem ps = generate(model);
  GravityOptions options;
  options.precision = Precision::Float;
  options.softening = 0.01;
  ParticleSystem approx = ps;
  make_gravity_solver(options)->compute_accelerations(approx);
  ParticleSystem exact = ps;
  const auto idx = sample_indices(ps.size(), 500, 1);
  direct_accelerations_for(ps, idx, options.G, options.softening, exact);
  const ForceErrorStats s = summarize_errors(relative_force_errors(approx, exact, idx));
  EXPECT_EQ(s.sample, 500u);
  // float32 rounding (2^-24 ~ 6e-8) accumulated over 3000 terms: ~1e-7, never exact.
  EXPECT_GT(s.median, 1e-9);
  EXPECT_LT(s.median, 1e-5);
  EXPECT_LT(s.max, 1e-4);
  EXPECT_LE(s.median, s.p90);
  EXPECT_LE(s.p90, s.p99);
  EXPECT_LE(s.p99, s.p999);
  EXPECT_LE(s.p999, s.max);
}

TEST(ForceErrorReference, TreeAtThetaHalfWhenAvailable) {
  GravityOptions options;
  options.algorithm = GravityAlgorithm::Tree;
  options.theta = 0.5;
  options.softening = 0.01;
  std::unique_ptr<GravitySolver> tree;
  try {
    tree = make_gravity_solver(options);
  } catch (const Error& e) {
    GTEST_SKIP() << "tree solver not available: " << e.what();
  }
  ModelOptions model;
  model.n = 4000;
  const ParticleSystem ps = generate(model);
  ParticleSystem approx = ps;
  tree->compute_accelerations(approx);
  ParticleSystem exact = ps;
  const auto idx = sample_indices(ps.size(), 400, 1);
  direct_accelerations_for(ps, idx, options.G, options.softening, exact);
  const ForceErrorStats s = summarize_errors(relative_force_errors(approx, exact, idx));
  EXPECT_GT(s.median, 0.0);
  EXPECT_LT(s.median, 5e-3);  // monopole Barnes-Hut at theta 0.5: typically ~1e-3 or below
}

}  // namespace
}  // namespace nbody
