// Potentials from the GPU force kernels, in the same pass as the accelerations (issue 18):
// every direct kernel (naive, tiled, fast below and above kMutualMinBodies, deterministic
// or not) and the tree (theta 0 and 0.5, monopole and quadrupole, 2D and 3D), float and
// double, against the float64 CPU sum body_potentials(); the accelerations the same bits
// with and without the potentials; W = 1/2 sum m phi against potential_energy(); the
// physical units (G and the power-of-two scaling); the shares of several processes
// (DeviceForces::exchange) carrying them. Every test skips itself without a usable CUDA
// device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend_test.hpp"
#include "gpu/cuda_copies.hpp"
#include "gravity/cuda/direct_kernels.cuh"
#include "gravity/direct_scalar.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "thread_ranks.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

constexpr double kSoftening = 0.01;

/// Norm-wise ||phi - ref|| / ||ref|| and the worst body's |phi_i - ref_i| / |ref_i|.
struct PotentialError {
  double relative = 0, worst = 0;
};

PotentialError potential_error(const std::vector<double>& got, const std::vector<double>& ref) {
  PotentialError e;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
    e.worst = std::max(e.worst, std::abs(d) / std::abs(ref[i]));
  }
  e.relative = std::sqrt(num / den);
  return e;
}

/// The tolerances of an exact sum: float32 sums of ~1e4 terms, float64 to round-off.
PotentialError exact_tolerance(Precision p) {
  return p == Precision::Float ? PotentialError{1e-5, 1e-4} : PotentialError{1e-12, 1e-11};
}

double w_from(const ParticleSystem& ps) {
  return diagnostics_from_potentials(ps).potential;
}

/// A system with its float64 references: body_potentials, potential_energy and (for the
/// tree's force error) the float64 direct accelerations. Cached: O(N^2) each.
struct Reference {
  ParticleSystem ps;
  std::vector<double> phi;
  double w = 0;
};

const Reference& reference(const std::string& model, std::size_t n, double softening,
                           bool accelerations = false) {
  static std::map<std::tuple<std::string, std::size_t, double, bool>, Reference> cache;
  const auto key = std::make_tuple(model, n, softening, accelerations);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Reference r;
  if (model == "random") {
    r.ps = test::random_system(n, 4321 + n);
  } else {
    ModelOptions m;
    m.model = model;
    m.n = n;
    m.seed = 3;
    m.dim = model == "disk" ? 2 : 3;
    r.ps = generate(m);
  }
  if (accelerations) DirectSumScalar<double>(1.0, softening).compute_accelerations(r.ps);
  r.phi = body_potentials(r.ps, 1.0, softening);
  r.w = potential_energy(r.ps, 1.0, softening);
  return cache.emplace(key, std::move(r)).first->second;
}

/// One solver, two evaluations: without the potentials (ps.potential set to a marker that
/// must survive) and with them.
struct OnOff {
  ParticleSystem off, on;
};

OnOff evaluate(GravitySolver& solver, const ParticleSystem& ps) {
  OnOff e{ps, ps};
  e.off.potential.assign(ps.size(), 42.0);
  solver.compute_forces(e.off, false);
  solver.compute_forces(e.on, true);
  return e;
}

void expect_flags(const OnOff& e, const std::string& what) {
  EXPECT_FALSE(e.off.potentials_valid()) << what;
  EXPECT_EQ(e.off.potential, std::vector<double>(e.off.size(), 42.0)) << what;
  EXPECT_TRUE(e.on.potentials_valid()) << what;
  EXPECT_EQ(e.on.potential.size(), e.on.size()) << what;
  EXPECT_TRUE(e.on.accelerations_valid()) << what;
}

void expect_same_accelerations(const ParticleSystem& a, const ParticleSystem& b,
                               const std::string& what) {
  EXPECT_EQ(a.ax, b.ax) << what;
  EXPECT_EQ(a.ay, b.ay) << what;
  EXPECT_EQ(a.az, b.az) << what;
}

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

// ---- The tree ---------------------------------------------------------------------------

class TreePotentials : public ::testing::TestWithParam<std::tuple<Precision, int>> {};

TEST_P(TreePotentials, ExactAtThetaZeroAndWithinTheForceErrorAtHalf) {
  NBODY_SKIP_WITHOUT_GPU();
  const auto& [precision, dim] = GetParam();
  const Reference& ref = dim == 2 ? reference("disk", 8000, kSoftening, true)
                                  : reference("plummer", 20000, kSoftening, true);
  double monopole_error = 0;
  for (bool quad : {false, true}) {
    for (double theta : {0.0, 0.5}) {
      auto solver = make_gravity_solver(
          test::tree_options(Device::Gpu, precision, theta, dim, quad, kSoftening));
      const OnOff e = evaluate(*solver, ref.ps);
      const std::string what = solver->name() + " theta " + std::to_string(theta);
      expect_flags(e, what);
      expect_same_accelerations(e.on, e.off, what);  // the tree sums in a fixed order
      const PotentialError err = potential_error(e.on.potential, ref.phi);
      const double w_rel = std::abs(w_from(e.on) - ref.w) / std::abs(ref.w);
      const double force = test::relative_acceleration_error(e.on, ref.ps);
      std::printf("[ measured ] potential %s: relative %.3e, worst body %.3e, W %.3e; force %.3e\n",
                  what.c_str(), err.relative, err.worst, w_rel, force);
      if (theta == 0) {  // every cell opened: the direct sum in tree order
        const PotentialError tol = exact_tolerance(precision);
        EXPECT_LT(err.relative, 2 * tol.relative) << what;
        EXPECT_LT(err.worst, 2 * tol.worst) << what;
        EXPECT_LT(w_rel, 2 * tol.relative) << what;
        continue;
      }
      const PotentialError exact = exact_tolerance(precision);
      if (dim == 3) {
        // In a self-gravitating sphere the potential, smoother than the force, comes out
        // below the force error (H100: 6.1e-5 against 6.7e-4 monopole, 1.2e-5 against
        // 1.6e-4 quadrupole).
        EXPECT_LT(err.relative, force) << what;
      }
      // Not so in the disk: its accelerations are the central star's, which the tree
      // computes exactly (force error 7e-6), while the star's own potential sums the
      // monopole errors of the disk's cells around it, all of one sign (H100: 3.1e-3 for
      // the star, W 1.6e-3; the quadrupoles take both to 4e-5).
      EXPECT_LT(err.relative, 2e-3) << what;
      EXPECT_LT(err.worst, 2e-2) << what;
      EXPECT_LT(w_rel, dim == 3 ? 2e-3 : 5e-3) << what;
      if (!quad) monopole_error = err.relative;
      if (quad) {
        EXPECT_LT(err.relative, std::max(monopole_error, 2 * exact.relative))
            << what << ": quadrupoles help";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PrecisionsAndDims, TreePotentials,
                         ::testing::Combine(::testing::Values(Precision::Float, Precision::Double),
                                            ::testing::Values(3, 2)),
                         [](const auto& p) {
                           return std::string(to_string(std::get<0>(p.param))) + "_" +
                                  std::to_string(std::get<1>(p.param)) + "D";
                         });

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

// ---- Several processes: the shares carry the potentials ---------------------------------

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// out() of one DeviceForces launch with the potentials on ps (taken as scaled units:
/// O(1) positions and masses), as share `part` of `parts` followed by the exchange when a
/// reducer is given.
template <class Real>
std::vector<gpu::Vec4<Real>> shared_out(cuda_gravity::DeviceForces<Real>& forces,
                                        const ParticleSystem& ps, ForceReducer* reducer) {
  if (reducer) forces.set_share(reducer->part(), reducer->parts());  // before padded(): the
  // each-pair-once plan pads differently when shared
  const std::size_t n = ps.size(), padded = forces.padded(n);
  std::vector<gpu::Vec4<Real>> bodies(padded);
  for (std::size_t i = 0; i < padded; ++i) {
    const std::size_t k = std::min(i, n - 1);  // padding: on the last body, mass 0
    bodies[i] = {Real(ps.x[k]), Real(ps.y[k]), Real(ps.z[k]), i < n ? Real(ps.mass[k]) : Real(0)};
  }
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  forces.reserve(n);
  check(cudaMemcpy(forces.bodies(), bodies.data(), padded * sizeof(bodies[0]),
                   cudaMemcpyHostToDevice),
        "cudaMemcpy bodies");
  forces.launch(n, Real(kSoftening), stream, true);
  if (reducer) forces.exchange(*reducer, n, stream);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<gpu::Vec4<Real>> out(n);
  check(cudaMemcpy(out.data(), forces.out(), n * sizeof(out[0]), cudaMemcpyDeviceToHost),
        "cudaMemcpy out");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return out;
}

template <class Real, class Make>
void expect_shares_match(const char* name, const ParticleSystem& ps, Make make, double tolerance) {
  auto one_forces = make();
  const std::vector<gpu::Vec4<Real>> one = shared_out<Real>(*one_forces, ps, nullptr);
  for (int parts : {2, 3}) {
    const auto each = testing::run_parts<std::vector<gpu::Vec4<Real>>>(
        parts,
        [&](std::shared_ptr<ForceReducer> r) {
          auto forces = make();
          return shared_out<Real>(*forces, ps, r.get());
        },
        test::cuda_copies());
    for (int p = 0; p < parts; ++p) {
      const auto& got = each[std::size_t(p)];
      double worst = 0;
      for (std::size_t i = 0; i < ps.size(); ++i) {
        const double d = std::abs(double(got[i].w) - double(one[i].w)) / std::abs(double(one[i].w));
        worst = std::max(worst, d);
        if (tolerance == 0) {
          ASSERT_EQ(got[i].x, one[i].x) << name << " P=" << parts << " body " << i;
          ASSERT_EQ(got[i].z, one[i].z) << name << " P=" << parts << " body " << i;
          ASSERT_EQ(got[i].w, one[i].w) << name << " P=" << parts << " body " << i;
        }
      }
      EXPECT_LE(worst, tolerance) << name << " P=" << parts << " part " << p;
    }
  }
}

TEST(GpuSharedPotentials, TreeChunksAndEachPairOnceTasks) {
  NBODY_SKIP_WITHOUT_GPU();
  // 40000 bodies: 3 chunks of 16384 tree positions, dealt unevenly to 2 parts.
  ModelOptions m;
  m.n = 40000;
  m.seed = 8;
  const ParticleSystem ps = generate(m);
  expect_shares_match<float>(
      "tree float", ps,
      [] { return std::make_unique<cuda_tree::TreeForces<float>>(3, 0.5, false); }, 0.0);
  expect_shares_match<double>(
      "tree double quadrupole", ps,
      [] { return std::make_unique<cuda_tree::TreeForces<double>>(3, 0.5, true); }, 0.0);
  // Every parts-th task of the each-pair-once plan, partial sums added across the parts
  // (float atomics: equal to rounding).
  const ParticleSystem small = test::random_system(20000, 9);
  expect_shares_match<float>(
      "direct each pair once", small,
      [] {
        return std::make_unique<cuda_direct::DirectForces<float>>(cuda_direct::Kernel::Fast, 512,
                                                                  true);
      },
      1e-5);
}

}  // namespace
}  // namespace nbody
