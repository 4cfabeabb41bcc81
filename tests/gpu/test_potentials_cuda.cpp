// Potentials from the GPU force kernels, in the same pass as the accelerations (issue 18):
// every direct kernel (naive, tiled, fast below and above kMutualMinBodies, deterministic
// or not), float and double, against the float64 CPU sum body_potentials(); the
// accelerations the same bits with and without the potentials; W = 1/2 sum m phi against
// potential_energy(); a heavy central body; the physical units (G and the power-of-two
// scaling); the tree's body-by-body pass; the kernels' cost with the potentials. The tree:
// test_potentials_tree_cuda.cpp; the shares of several processes:
// test_potentials_shares_cuda.cpp. Every test skips itself without a usable CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "backend_test.hpp"
#include "gpu/potentials_helpers.hpp"
#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using namespace potentials_test;  // the helpers of this suite's files

// ---- The direct sum ---------------------------------------------------------------------

using DirectParam = std::tuple<std::string, Precision, std::size_t, double,
                               bool>;  // kernel, precision, N, eps, deterministic

class DirectPotentials : public ::testing::TestWithParam<DirectParam> {};

TEST_P(DirectPotentials, MatchTheFloat64SumAndLeaveTheAccelerations) {
  NBODY_SKIP_WITHOUT_GPU();
  const auto& [kernel, precision, n, softening, deterministic] = GetParam();
  const Reference& ref = reference("random", n, softening);
  GravityOptions o =
      test::gravity_options(Device::Gpu, GravityAlgorithm::Direct, precision, softening);
  o.kernel = parse_force_kernel(kernel);
  o.deterministic = deterministic;
  auto solver = make_gravity_solver(o);
  const OnOff e = evaluate(*solver, ref.ps);
  const std::string what = solver->name() + " N=" + std::to_string(n);
  expect_flags(e, what);
  // The each-pair-once kernel (fast, N >= kMutualMinBodies, not deterministic) adds its
  // partial sums with floating-point atomics: its last bits vary from call to call, with
  // or without the potentials. Every other kernel sums in a fixed order.
  const bool atomics = kernel == "fast" && !deterministic && n >= cuda_direct::kMutualMinBodies;
  if (atomics) {
    EXPECT_LT(test::relative_acceleration_error(e.on, e.off),
              precision == Precision::Float ? 1e-6 : 1e-14)
        << what;
  } else {
    expect_same_accelerations(e.on, e.off, what);
  }
  if (n == 1) {  // no other body: exactly 0, softened or not
    EXPECT_EQ(e.on.potential[0], 0.0) << what;
    return;
  }
  const PotentialError err = potential_error(e.on.potential, ref.phi);
  const double w_rel = std::abs(w_from(e.on) - ref.w) / std::abs(ref.w);
  std::printf("[ measured ] potential %s eps=%g: relative %.3e, worst body %.3e, W %.3e\n",
              what.c_str(), softening, err.relative, err.worst, w_rel);
  const PotentialError tol = exact_tolerance(precision);
  EXPECT_LT(err.relative, tol.relative) << what;
  EXPECT_LT(err.worst, tol.worst) << what;
  EXPECT_LT(w_rel, tol.relative) << what;
}

std::string direct_name(const ::testing::TestParamInfo<DirectParam>& info) {
  const auto& [kernel, precision, n, softening, deterministic] = info.param;
  return kernel + "_" + std::string(to_string(precision)) + "_N" + std::to_string(n) +
         (softening > 0 ? "_soft" : "_plain") + (deterministic ? "_deterministic" : "");
}

// Below kMutualMinBodies: one-sided kernels (fast with j-splits and their reduction);
// N = 1 and 3 are mostly padding.
INSTANTIATE_TEST_SUITE_P(Kernels, DirectPotentials,
                         ::testing::Combine(::testing::Values("naive", "tiled", "fast"),
                                            ::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Values(std::size_t{1}, std::size_t{3},
                                                              std::size_t{1000}, std::size_t{4097}),
                                            ::testing::Values(0.0, kSoftening),
                                            ::testing::Values(false)),
                         direct_name);

// Above kMutualMinBodies: the each-pair-once kernel, and with --deterministic the
// one-sided fast kernel.
INSTANTIATE_TEST_SUITE_P(LargeN, DirectPotentials,
                         ::testing::Combine(::testing::Values("fast"),
                                            ::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Values(std::size_t{20000}),
                                            ::testing::Values(0.0, kSoftening),
                                            ::testing::Values(false, true)),
                         direct_name);

class PotentialPrecision : public ::testing::TestWithParam<Precision> {};
INSTANTIATE_TEST_SUITE_P(Precisions, PotentialPrecision,
                         ::testing::Values(Precision::Float, Precision::Double),
                         [](const auto& p) { return std::string(to_string(p.param)); });

TEST_P(PotentialPrecision, HeavyCentralBodyWithSmallSoftening) {
  // A star of mass 1 among 2000 bodies of 1e-6: its own -m/eps = -1e4 would dwarf its
  // potential (~ -2e-3) if a kernel added it and took it out again; the kernels leave the
  // self pair out instead (gravity/cuda/pair_terms.cuh).
  NBODY_SKIP_WITHOUT_GPU();
  ParticleSystem ps = test::random_system(2000, 11);
  for (std::size_t i = 0; i < ps.size(); ++i) ps.mass[i] = 1e-6;
  ps.mass[0] = 1.0;
  ps.x[0] = ps.y[0] = ps.z[0] = 0.0;
  constexpr double eps = 1e-4;
  const std::vector<double> ref = body_potentials(ps, 1.0, eps);
  std::vector<GravityOptions> options;
  for (const char* k : {"naive", "tiled", "fast"}) {
    GravityOptions o =
        test::gravity_options(Device::Gpu, GravityAlgorithm::Direct, GetParam(), eps);
    o.kernel = parse_force_kernel(k);
    options.push_back(o);
  }
  options.push_back(test::tree_options(Device::Gpu, GetParam(), 0.0, 3, false, eps));
  for (const GravityOptions& o : options) {
    auto solver = make_gravity_solver(o);
    ParticleSystem got = ps;
    solver->compute_forces(got, true);
    const PotentialError err = potential_error(got.potential, ref);
    EXPECT_LT(err.worst, exact_tolerance(GetParam()).worst) << solver->name();
    EXPECT_LT(std::abs(got.potential[0] - ref[0]) / std::abs(ref[0]),
              exact_tolerance(GetParam()).relative)
        << solver->name();
  }
}

TEST_P(PotentialPrecision, PhysicalUnitsAndG) {
  // SI units (kpc in metres, 1e11 solar masses): the kernels' w is in scaled units; the
  // solver multiplies by G * 2^(mass exponent - position exponent).
  NBODY_SKIP_WITHOUT_GPU();
  ParticleSystem ps = test::random_system(1000, 3);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.x[i] *= 3e20;
    ps.y[i] *= 3e20;
    ps.z[i] *= 3e20;
    ps.mass[i] *= 2e41;
  }
  constexpr double G = 6.67430e-11, eps = 3e18;
  const std::vector<double> ref = body_potentials(ps, G, eps);
  std::vector<GravityOptions> options;
  for (const char* k : {"naive", "tiled", "fast"}) {
    GravityOptions o =
        test::gravity_options(Device::Gpu, GravityAlgorithm::Direct, GetParam(), eps);
    o.kernel = parse_force_kernel(k);
    options.push_back(o);
  }
  options.push_back(test::tree_options(Device::Gpu, GetParam(), 0.0, 3, false, eps));
  for (GravityOptions& o : options) {
    o.G = G;
    auto solver = make_gravity_solver(o);
    ParticleSystem got = ps;
    solver->compute_forces(got, true);
    const PotentialError err = potential_error(got.potential, ref);
    EXPECT_LT(err.relative, exact_tolerance(GetParam()).relative) << solver->name();
    EXPECT_LT(err.worst, exact_tolerance(GetParam()).worst) << solver->name();
  }
}

TEST_P(PotentialPrecision, NoBodiesAndFlagsAcrossCalls) {
  NBODY_SKIP_WITHOUT_GPU();
  for (GravityAlgorithm a : {GravityAlgorithm::Direct, GravityAlgorithm::Tree}) {
    auto solver =
        make_gravity_solver(test::gravity_options(Device::Gpu, a, GetParam(), kSoftening));
    ParticleSystem empty;
    solver->compute_forces(empty, true);
    EXPECT_TRUE(empty.potentials_valid()) << solver->name();
    EXPECT_TRUE(empty.potential.empty()) << solver->name();
    ParticleSystem ps = test::random_system(500, 5);
    solver->compute_forces(ps, true);
    EXPECT_TRUE(ps.potentials_valid()) << solver->name();
    const std::vector<double> first = ps.potential;
    solver->compute_forces(ps, false);  // keeps the values, marks them stale
    EXPECT_FALSE(ps.potentials_valid()) << solver->name();
    EXPECT_EQ(ps.potential, first) << solver->name();
    solver->compute_forces(ps, true);
    EXPECT_EQ(ps.potential, first) << solver->name();  // deterministic kernels
  }
}

TEST_P(PotentialPrecision, TreeBodyByBodyPass) {
  // A budget of 64 entries sends nearly every group to the walk's pass 2 (one warp per
  // body, the list shared out over the lanes and the sums reduced over the warp).
  NBODY_SKIP_WITHOUT_GPU();
  const Reference& ref = reference("plummer", 20000, kSoftening, true);
  ::setenv("NBODY_TREE_ENTRY_BUDGET", "64", 1);
  for (bool quad : {false, true}) {
    for (double theta : {0.0, 0.5}) {
      auto solver = make_gravity_solver(
          test::tree_options(Device::Gpu, GetParam(), theta, 3, quad, kSoftening));
      const OnOff e = evaluate(*solver, ref.ps);
      const std::string what = solver->name() + " theta " + std::to_string(theta) + " pass 2";
      expect_flags(e, what);
      expect_same_accelerations(e.on, e.off, what);
      const PotentialError err = potential_error(e.on.potential, ref.phi);
      std::printf("[ measured ] potential %s: relative %.3e, worst body %.3e\n", what.c_str(),
                  err.relative, err.worst);
      if (theta == 0) {
        EXPECT_LT(err.relative, 2 * exact_tolerance(GetParam()).relative) << what;
      } else {
        EXPECT_LT(err.relative, 3e-3) << what;
      }
    }
  }
  ::unsetenv("NBODY_TREE_ENTRY_BUDGET");
}

// ---- What the potentials cost ------------------------------------------------------------

TEST(GpuPotentialCost, KernelTimeWithAndWithout) {
  // A measurement, not a check: the kernel (walk) time of the fast direct sum and the tree
  // with and without the potentials, best of 3 each.
  NBODY_SKIP_WITHOUT_GPU();
  ModelOptions m;
  m.n = 262144;
  m.seed = 2;
  const ParticleSystem ps = generate(m);
  std::vector<GravityOptions> options = {
      test::gravity_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Float, 0.01),
      test::gravity_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Double, 0.01),
      test::tree_options(Device::Gpu, Precision::Float, 0.5, 3, false, 0.01),
      test::tree_options(Device::Gpu, Precision::Float, 0.5, 3, true, 0.01)};
  for (const GravityOptions& o : options) {
    auto solver = make_gravity_solver(o);
    double best[2] = {1e30, 1e30};
    for (int r = 0; r < 3; ++r) {
      for (int pot = 0; pot < 2; ++pot) {
        ParticleSystem copy = ps;
        solver->compute_forces(copy, pot == 1);
        best[pot] = std::min(best[pot], solver->stats().walk_seconds);
      }
    }
    std::printf("[ measured ] %s N=%zu: kernel %.3f ms, with potentials %.3f ms (x%.3f)\n",
                solver->name().c_str(), ps.size(), best[0] * 1e3, best[1] * 1e3, best[1] / best[0]);
  }
}

}  // namespace
}  // namespace nbody
