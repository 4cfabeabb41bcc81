// The GPU tree's opening criteria (issue #22; the CPU tree's are tests/unit/
// test_opening_criteria.cpp): bmax and relative give the CPU tree's errors with the same
// options, their errors fall as theta and alpha tighten, theta 0 is still the direct sum,
// the relative criterion's first evaluation is the geometric one's and later ones use the
// last accelerations, on the per-call solver and on the resident stepper alike. Each test
// skips itself without a usable CUDA device. The figures are printed as [ measured ] lines.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "nbody/force_error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"

namespace nbody {
namespace {

constexpr double kSoftening = 0.01;

GravityOptions criterion(Device device, Precision p, OpeningCriterion mac, double theta,
                         double alpha = 0.001) {
  GravityOptions o = test::tree_options(device, p, theta, 3, false, kSoftening);
  o.mac = mac;
  o.alpha = alpha;
  return o;
}

const ParticleSystem& plummer() {
  static const ParticleSystem ps = generate({.model = "plummer", .n = 20000, .seed = 3});
  return ps;
}

/// The float64 direct sum on a sample of 2000 bodies of plummer().
struct Reference {
  std::vector<std::size_t> indices;
  ParticleSystem exact;
};
const Reference& reference() {
  static const Reference r = [] {
    Reference ref{sample_indices(plummer().size(), 2000, 7), plummer()};
    direct_accelerations_for(plummer(), ref.indices, 1.0, kSoftening, ref.exact);
    return ref;
  }();
  return r;
}

struct Measured {
  ForceErrorStats errors;
  double interactions = 0;
};

/// The tree's errors after `evaluations` evaluations by one solver (the relative criterion
/// needs a first one).
Measured measure(const GravityOptions& o, int evaluations = 1) {
  auto solver = make_gravity_solver(o);
  ParticleSystem approx = plummer();
  for (int k = 0; k < evaluations; ++k) solver->compute_accelerations(approx);
  const Reference& ref = reference();
  const Measured m{summarize_errors(relative_force_errors(approx, ref.exact, ref.indices)),
                   solver->stats().interactions_per_body};
  std::printf(
      "[ measured ] %s %s %s theta %.2f alpha %.4f: median %.3e, p99 %.3e, %.0f "
      "interactions per body\n",
      std::string(to_string(o.device)).c_str(), std::string(to_string(o.precision)).c_str(),
      std::string(to_string(o.mac)).c_str(), o.theta, o.alpha, m.errors.median, m.errors.p99,
      m.interactions);
  return m;
}

class GpuOpeningCriteria : public ::testing::TestWithParam<Precision> {
 protected:
  void SetUp() override { NBODY_SKIP_WITHOUT_GPU(); }
  [[nodiscard]] GravityOptions gpu(OpeningCriterion mac, double theta, double alpha = 0.001) const {
    return criterion(Device::Gpu, GetParam(), mac, theta, alpha);
  }
};
INSTANTIATE_TEST_SUITE_P(Precisions, GpuOpeningCriteria,
                         ::testing::Values(Precision::Float, Precision::Double),
                         [](const auto& p) { return std::string(to_string(p.param)); });

TEST_P(GpuOpeningCriteria, ErrorsMatchTheCpuTree) {
  struct Case {
    OpeningCriterion mac;
    double theta, alpha;
  };
  for (const Case c :
       {Case{OpeningCriterion::Bmax, 0.5, 0.001}, Case{OpeningCriterion::Bmax, 0.7, 0.001},
        Case{OpeningCriterion::Relative, 0.5, 0.002},
        Case{OpeningCriterion::Relative, 0.5, 0.0005}}) {
    const int evaluations = c.mac == OpeningCriterion::Relative ? 2 : 1;
    const Measured cpu =
        measure(criterion(Device::Cpu, GetParam(), c.mac, c.theta, c.alpha), evaluations);
    const Measured gpu = measure(this->gpu(c.mac, c.theta, c.alpha), evaluations);
    const std::string what = std::string(to_string(c.mac)) + " theta " + std::to_string(c.theta) +
                             " alpha " + std::to_string(c.alpha);
    EXPECT_LT(std::abs(gpu.errors.median - cpu.errors.median), 0.2 * cpu.errors.median) << what;
    EXPECT_LT(gpu.errors.p99, 1.5 * cpu.errors.p99) << what;
  }
}

TEST_P(GpuOpeningCriteria, ErrorsFallAsEachCriterionTightens) {
  const Measured loose = measure(gpu(OpeningCriterion::Bmax, 0.8));
  const Measured tight = measure(gpu(OpeningCriterion::Bmax, 0.4));
  EXPECT_LT(tight.errors.median, 0.5 * loose.errors.median);
  EXPECT_LT(tight.errors.p99, 0.5 * loose.errors.p99);
  EXPECT_GT(tight.interactions, loose.interactions);
  const Measured rel_loose = measure(gpu(OpeningCriterion::Relative, 0.5, 0.01), 2);
  const Measured rel_tight = measure(gpu(OpeningCriterion::Relative, 0.5, 0.0005), 2);
  EXPECT_LT(rel_tight.errors.median, 0.3 * rel_loose.errors.median);
  EXPECT_LT(rel_tight.errors.p99, 0.3 * rel_loose.errors.p99);
  EXPECT_GT(rel_tight.interactions, rel_loose.interactions);
}

TEST_P(GpuOpeningCriteria, BmaxAtThetaZeroIsTheDirectSum) {
  const Measured m = measure(gpu(OpeningCriterion::Bmax, 0.0));
  EXPECT_LT(m.errors.max, GetParam() == Precision::Double ? 1e-10 : 1e-4);
}

TEST_P(GpuOpeningCriteria, RelativeStartsWithThetaThenUsesTheLastAccelerations) {
  const ParticleSystem& ps = plummer();
  // First evaluation: theta decides, bit for bit the geometric criterion's.
  ParticleSystem geometric = ps, relative = ps;
  make_gravity_solver(gpu(OpeningCriterion::Geometric, 0.5))->compute_accelerations(geometric);
  auto solver = make_gravity_solver(gpu(OpeningCriterion::Relative, 0.5, 0.002));
  solver->compute_accelerations(relative);
  EXPECT_EQ(relative.ax, geometric.ax);
  EXPECT_EQ(relative.az, geometric.az);
  // Second: alpha decides, and the lists change.
  const double first = solver->stats().interactions_per_body;
  solver->compute_accelerations(relative);
  EXPECT_NE(solver->stats().interactions_per_body, first);
  EXPECT_NE(relative.ax, geometric.ax);
  // Bodies merged away since (another N): theta again.
  ParticleSystem fewer = ps;
  fewer.remove({0});
  solver->compute_accelerations(fewer);
  ParticleSystem fewer_geometric = ps;
  fewer_geometric.remove({0});
  make_gravity_solver(gpu(OpeningCriterion::Geometric, 0.5))
      ->compute_accelerations(fewer_geometric);
  EXPECT_EQ(fewer.ax, fewer_geometric.ax);
}

TEST_P(GpuOpeningCriteria, ResidentStepperUsesTheCriteria) {
  // The resident stepper (simulation/cuda/device_stepper.cu) evaluates what the per-call
  // solver does: bmax from the first evaluation on; relative by theta first, then from the
  // stored accelerations, converted on the device to the per-call solver's bits.
  const ParticleSystem start = generate({.model = "plummer", .n = 8000, .seed = 11});
  const double dt = 1e-3;
  for (const OpeningCriterion mac : {OpeningCriterion::Bmax, OpeningCriterion::Relative}) {
    const GravityOptions o = gpu(mac, 0.5, 0.002);
    Simulation sim(start, test::simulation_options(o));
    sim.evaluate_forces(false);
    const ParticleSystem first = sim.particles();
    auto solver = make_gravity_solver(o);
    ParticleSystem expected = start;
    solver->compute_accelerations(expected);
    EXPECT_EQ(first.ax, expected.ax) << to_string(mac);
    EXPECT_EQ(first.az, expected.az) << to_string(mac);
    sim.step(dt);
    const ParticleSystem second = sim.particles();
    // The same positions and last accelerations through the per-call solver, which
    // evaluated these N last.
    expected = second;
    expected.ax = first.ax;
    expected.ay = first.ay;
    expected.az = first.az;
    solver->compute_accelerations(expected);
    EXPECT_EQ(second.ax, expected.ax) << to_string(mac);
    EXPECT_EQ(second.az, expected.az) << to_string(mac);
    if (mac == OpeningCriterion::Relative) {  // not the geometric lists any more
      ParticleSystem geometric = second;
      make_gravity_solver(gpu(OpeningCriterion::Geometric, 0.5))->compute_accelerations(geometric);
      EXPECT_NE(second.ax, geometric.ax);
    }
  }
}

}  // namespace
}  // namespace nbody
