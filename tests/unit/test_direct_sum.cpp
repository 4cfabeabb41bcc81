// The fast CPU direct sum (SIMD + OpenMP) against the scalar reference, and the
// physical properties it must keep: zero self force, no NaN for coincident bodies,
// momentum conservation, G scaling, unit independence.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gravity/direct_scalar.hpp"
#include "gravity/direct_simd.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "nbody/gravity.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

using simd::Isa;

struct Tolerance {
  double relative;      // test::relative_acceleration_error
  double max_over_rms;  // test::max_error_over_rms
};

Tolerance tolerance(Precision p) {
  return p == Precision::Float ? Tolerance{1e-5, 1e-4} : Tolerance{1e-12, 1e-11};
}

std::unique_ptr<GravitySolver> reference_solver(Precision p, double G, double softening) {
  if (p == Precision::Float) return std::make_unique<DirectSumScalar<float>>(G, softening);
  return std::make_unique<DirectSumScalar<double>>(G, softening);
}

ParticleSystem accelerations(GravitySolver& solver, ParticleSystem ps) {
  solver.compute_accelerations(ps);
  return ps;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> isas{Isa::Baseline};
  if (simd::isa_supported(Isa::Avx2)) isas.push_back(Isa::Avx2);
  return isas;
}

bool all_finite(const ParticleSystem& ps) {
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (!std::isfinite(ps.ax[i]) || !std::isfinite(ps.ay[i]) || !std::isfinite(ps.az[i])) {
      return false;
    }
  }
  return true;
}

// ---- Against the scalar reference --------------------------------------------------

using MatchParam = std::tuple<Precision, std::size_t, double>;  // precision, N, softening

class FastMatchesScalar : public ::testing::TestWithParam<MatchParam> {};

TEST_P(FastMatchesScalar, ForEveryKernelAndThreadCount) {
  const auto [precision, n, softening] = GetParam();
  const ParticleSystem ps = test::random_system(n, 1000 + n);
  auto reference = reference_solver(precision, 1.0, softening);
  const ParticleSystem expected = accelerations(*reference, ps);
  const Tolerance tol = tolerance(precision);

  for (Isa isa : supported_isas()) {
    for (int threads : {1, 2, 0}) {
      SCOPED_TRACE(std::string(simd::to_string(isa)) + ", threads " + std::to_string(threads));
      auto fast = simd::make_direct_simd(precision, 1.0, softening, threads, isa);
      const ParticleSystem got = accelerations(*fast, ps);
      ASSERT_TRUE(got.accelerations_valid());
      ASSERT_TRUE(all_finite(got));
      EXPECT_LT(test::relative_acceleration_error(got, expected), tol.relative);
      EXPECT_LT(test::max_error_over_rms(got, expected), tol.max_over_rms);
    }
  }
}

std::string match_name(const ::testing::TestParamInfo<MatchParam>& param_info) {
  const auto [precision, n, softening] = param_info.param;
  return std::string(to_string(precision)) + "_N" + std::to_string(n) +
         (softening > 0 ? "_softened" : "_unsoftened");
}

INSTANTIATE_TEST_SUITE_P(DirectSimd, FastMatchesScalar,
                         ::testing::Combine(::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Values(std::size_t{1}, std::size_t{2},
                                                              std::size_t{3}, std::size_t{7},
                                                              std::size_t{1000}, std::size_t{4097}),
                                            ::testing::Values(0.0, 0.01)),
                         match_name);

// ---- Properties, for each precision -------------------------------------------------

class DirectSimd : public ::testing::TestWithParam<Precision> {};

std::string precision_name(const ::testing::TestParamInfo<Precision>& param_info) {
  return std::string(to_string(param_info.param));
}

INSTANTIATE_TEST_SUITE_P(Precisions, DirectSimd,
                         ::testing::Values(Precision::Float, Precision::Double), precision_name);

TEST_P(DirectSimd, NameSaysKernelAndPrecision) {
  const std::string precision(to_string(GetParam()));
  auto best = make_direct_simd(GetParam(), 1.0, 0.0, 1);
  EXPECT_EQ(best->name(),
            "direct-simd-" + std::string(simd::to_string(simd::best_isa())) + "-" + precision);
  auto baseline = simd::make_direct_simd(GetParam(), 1.0, 0.0, 1, Isa::Baseline);
  EXPECT_EQ(baseline->name(), "direct-simd-baseline-" + precision);
}

TEST_P(DirectSimd, SingleBodyFeelsExactlyNothing) {
  for (Isa isa : supported_isas()) {
    for (double softening : {0.0, 0.1}) {
      ParticleSystem ps = test::random_system(1, 7);
      ps.ax[0] = ps.ay[0] = ps.az[0] = 42.0;  // must be overwritten
      simd::make_direct_simd(GetParam(), 1.0, softening, 0, isa)->compute_accelerations(ps);
      EXPECT_EQ(ps.ax[0], 0.0);
      EXPECT_EQ(ps.ay[0], 0.0);
      EXPECT_EQ(ps.az[0], 0.0);
      EXPECT_TRUE(ps.accelerations_valid());
    }
  }
}

TEST_P(DirectSimd, EmptySystemIsFine) {
  ParticleSystem ps;
  make_direct_simd(GetParam(), 1.0, 0.0, 0)->compute_accelerations(ps);
  EXPECT_TRUE(ps.accelerations_valid());
}

TEST_P(DirectSimd, CoincidentBodiesWithoutSofteningGiveZeroNotNaN) {
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(simd::to_string(isa)));
    auto solver = simd::make_direct_simd(GetParam(), 1.0, 0.0, 0, isa);
    ParticleSystem ps;
    ps.add(Body{{0.25, -0.5, 0.75}, {}, 1.0});
    ps.add(Body{{0.25, -0.5, 0.75}, {}, 2.0});
    solver->compute_accelerations(ps);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(ps.ax[i], 0.0);
      EXPECT_EQ(ps.ay[i], 0.0);
      EXPECT_EQ(ps.az[i], 0.0);
    }
    // A third body elsewhere: the coincident pair still adds nothing to each other.
    ps.add(Body{{1.25, -0.5, 0.75}, {}, 3.0});
    solver->compute_accelerations(ps);
    ASSERT_TRUE(all_finite(ps));
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_NEAR(ps.ax[i], 3.0, 3.0 * tolerance(GetParam()).relative);
      EXPECT_EQ(ps.ay[i], 0.0);
      EXPECT_EQ(ps.az[i], 0.0);
    }
    EXPECT_NEAR(ps.ax[2], -3.0, 3.0 * tolerance(GetParam()).relative);
  }
}

TEST_P(DirectSimd, BaselineAndAvx2KernelsAgree) {
  if (!simd::isa_supported(Isa::Avx2)) GTEST_SKIP() << "no AVX2+FMA on this machine";
  const Tolerance tol = tolerance(GetParam());
  for (double softening : {0.0, 0.01}) {
    const ParticleSystem ps = test::random_system(2049, 11);
    auto baseline = simd::make_direct_simd(GetParam(), 1.0, softening, 0, Isa::Baseline);
    auto avx2 = simd::make_direct_simd(GetParam(), 1.0, softening, 0, Isa::Avx2);
    const ParticleSystem a = accelerations(*baseline, ps);
    const ParticleSystem b = accelerations(*avx2, ps);
    EXPECT_LT(test::relative_acceleration_error(b, a), tol.relative);
    EXPECT_LT(test::max_error_over_rms(b, a), tol.max_over_rms);
  }
}

TEST_P(DirectSimd, ThreadCountDoesNotChangeTheBits) {
  // Each body's sum runs over j in the same order whatever thread computes it.
  const ParticleSystem ps = test::random_system(3001, 5);
  for (Isa isa : supported_isas()) {
    const ParticleSystem one =
        accelerations(*simd::make_direct_simd(GetParam(), 1.0, 0.01, 1, isa), ps);
    for (int threads : {2, 3, 0}) {
      const ParticleSystem many =
          accelerations(*simd::make_direct_simd(GetParam(), 1.0, 0.01, threads, isa), ps);
      EXPECT_EQ(many.ax, one.ax);
      EXPECT_EQ(many.ay, one.ay);
      EXPECT_EQ(many.az, one.az);
    }
  }
}

TEST_P(DirectSimd, ConservesMomentumToRoundOff) {
  // sum_i m_i a_i = 0: the j -> i and i -> j terms cancel (same r^2, same rsqrt), so
  // only rounding in the sums remains.
  const double bound = GetParam() == Precision::Float ? 1e-5 : 1e-13;
  for (Isa isa : supported_isas()) {
    for (double softening : {0.0, 0.01}) {
      SCOPED_TRACE(std::string(simd::to_string(isa)) + ", softening " + std::to_string(softening));
      ParticleSystem ps = test::random_system(1000, 3);
      simd::make_direct_simd(GetParam(), 1.0, softening, 0, isa)->compute_accelerations(ps);
      double px = 0, py = 0, pz = 0, scale = 0;
      for (std::size_t i = 0; i < ps.size(); ++i) {
        px += ps.mass[i] * ps.ax[i];
        py += ps.mass[i] * ps.ay[i];
        pz += ps.mass[i] * ps.az[i];
        scale +=
            ps.mass[i] * std::sqrt(ps.ax[i] * ps.ax[i] + ps.ay[i] * ps.ay[i] + ps.az[i] * ps.az[i]);
      }
      ASSERT_GT(scale, 0.0);
      EXPECT_LT(std::sqrt(px * px + py * py + pz * pz) / scale, bound);
    }
  }
}

TEST_P(DirectSimd, ScalesWithG) {
  const double G = 6.67430e-11;
  const ParticleSystem ps = test::random_system(777, 9);
  for (Isa isa : supported_isas()) {
    const ParticleSystem unit =
        accelerations(*simd::make_direct_simd(GetParam(), 1.0, 0.01, 0, isa), ps);
    const ParticleSystem scaled =
        accelerations(*simd::make_direct_simd(GetParam(), G, 0.01, 0, isa), ps);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      EXPECT_NEAR(scaled.ax[i], G * unit.ax[i], 4e-16 * std::abs(G * unit.ax[i]));
      EXPECT_NEAR(scaled.ay[i], G * unit.ay[i], 4e-16 * std::abs(G * unit.ay[i]));
      EXPECT_NEAR(scaled.az[i], G * unit.az[i], 4e-16 * std::abs(G * unit.az[i]));
    }
  }
}

TEST_P(DirectSimd, WorksInSIUnits) {
  // A galaxy-sized system in metres and kilograms: r^2 ~ 1e40 m^2 and masses ~1e30 kg
  // overflow float (and the float first guess of the double kernel) unless the solver
  // rescales. Compared with the double reference.
  ParticleSystem ps = test::random_system(500, 13);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.x[i] *= 3.0e20;
    ps.y[i] *= 3.0e20;
    ps.z[i] *= 3.0e20;
    ps.mass[i] *= 2.0e40;
  }
  const double G = 6.67430e-11, softening = 3.0e17;
  const ParticleSystem expected =
      accelerations(*reference_solver(Precision::Double, G, softening), ps);
  const Tolerance tol = tolerance(GetParam());
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(simd::to_string(isa)));
    const ParticleSystem got =
        accelerations(*simd::make_direct_simd(GetParam(), G, softening, 0, isa), ps);
    ASSERT_TRUE(all_finite(got));
    EXPECT_LT(test::relative_acceleration_error(got, expected), tol.relative);
    EXPECT_LT(test::max_error_over_rms(got, expected), tol.max_over_rms);
  }
}

TEST_P(DirectSimd, PlanarSystemsStayPlanar) {
  ParticleSystem ps = test::random_system(300, 17, 2);
  make_direct_simd(GetParam(), 1.0, 0.0, 0)->compute_accelerations(ps);
  for (std::size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(ps.az[i], 0.0);
}

TEST_P(DirectSimd, ReusesScratchAcrossSizes) {
  // Shrinking and growing the system between calls must not leave stale bodies behind.
  auto fast = make_direct_simd(GetParam(), 1.0, 0.01, 0);
  auto reference = reference_solver(GetParam(), 1.0, 0.01);
  const Tolerance tol = tolerance(GetParam());
  for (std::size_t n : {1000, 7, 65, 64, 1}) {
    SCOPED_TRACE("N = " + std::to_string(n));
    const ParticleSystem ps = test::random_system(n, 21 + n);
    const ParticleSystem got = accelerations(*fast, ps);
    const ParticleSystem expected = accelerations(*reference, ps);
    EXPECT_LT(test::relative_acceleration_error(got, expected), tol.relative);
    EXPECT_LT(test::max_error_over_rms(got, expected), tol.max_over_rms);
  }
}

TEST(DirectSimdFactory, FastIsTheDefaultCpuKernel) {
  GravityOptions options;
  options.precision = Precision::Float;
  EXPECT_EQ(make_gravity_solver(options)->name(),
            "direct-simd-" + std::string(simd::to_string(simd::best_isa())) + "-float");
}

}  // namespace
}  // namespace nbody
