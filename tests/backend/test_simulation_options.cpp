// Simulation's options on every backend: reconfigure() (time, ids, steps and collision totals
// kept; device and solver switched, and back), the option errors, the threads of small runs,
// and the names of what runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backend/simulation_test_helpers.hpp"
#include "backend_test.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/simulation.hpp"
#include "unit/collision_test_helpers.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using simulation_test::direct;
using simulation_test::kDt;
using test::expect_same_state;
using test::gravity_options;
using test::integrator_options;

// ---- reconfigure() --------------------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(Reconfigure);

TEST_P(Reconfigure, KeepsTimeIdsStepsAndCollisionTotalsAndSwitchesDeviceAndSolver) {
  ParticleSystem start = test::cloud(1000, 31, 3, [](auto&) { return 0.02; });
  std::reverse(start.id.begin(), start.id.end());  // ids not in index order
  const SimulationOptions on_cpu = test::simulation_options(
      gravity_options(Device::Cpu, GravityAlgorithm::Direct, Precision::Auto, 0.02), {},
      test::collision_options(CollisionModel::Bounce, 0.5, 2));
  SimulationOptions here = on_cpu;
  here.gravity = test::tree_options(device(), Precision::Auto, 0.5, 3, false, 0.02);
  here.integrator.scheme = IntegratorScheme::Kinematic;

  Simulation sim(start, on_cpu);
  for (int s = 0; s < 10; ++s) sim.step(kDt);
  const ParticleSystem before = sim.particles();
  const CollisionTotals totals = sim.collision_totals();
  ASSERT_GT(totals.contacts, 0u);

  auto expect_kept = [&](const std::string& what) {
    EXPECT_EQ(sim.time(), before.time) << what;
    EXPECT_EQ(sim.steps_done(), 10u) << what;
    EXPECT_EQ(sim.collision_totals().stages, totals.stages) << what;
    EXPECT_EQ(sim.collision_totals().contacts, totals.contacts) << what;
    EXPECT_EQ(sim.collision_totals().energy_lost, totals.energy_lost) << what;
    EXPECT_EQ(sim.particles().id, before.id) << what;
    EXPECT_EQ(sim.particles().x, before.x) << what;
    EXPECT_EQ(sim.particles().vz, before.vz) << what;
    EXPECT_EQ(sim.collision_model(), CollisionModel::Bounce) << what;
  };

  // A bad option changes nothing.
  SimulationOptions bad = here;
  bad.integrator.damping = 1.5;
  EXPECT_THROW(sim.reconfigure(bad), Error);
  EXPECT_FALSE(sim.on_device());
  expect_kept("after a refused reconfigure");

  sim.reconfigure(here);
  EXPECT_EQ(sim.on_device(), on_gpu());
  EXPECT_NE(sim.solver_name().find("tree"), std::string::npos) << sim.solver_name();
  EXPECT_EQ(sim.integrator_name(), "kinematic");
  expect_kept("switched to " + std::string(to_string(device())) + " and the tree");
  for (int s = 0; s < 5; ++s) sim.step(kDt);
  EXPECT_EQ(sim.steps_done(), 15u);
  EXPECT_GT(sim.collision_totals().stages, totals.stages);
  EXPECT_NEAR(sim.time(), before.time + 5 * kDt, 1e-15);

  const double time = sim.time();
  const CollisionTotals later = sim.collision_totals();
  const std::vector<std::uint64_t> ids = sim.particles().id;
  sim.reconfigure(on_cpu);
  EXPECT_FALSE(sim.on_device());
  EXPECT_EQ(sim.solver_name().find("tree"), std::string::npos) << sim.solver_name();
  EXPECT_EQ(sim.time(), time);
  EXPECT_EQ(sim.steps_done(), 15u);
  EXPECT_EQ(sim.collision_totals().stages, later.stages);
  EXPECT_EQ(sim.collision_totals().energy_lost, later.energy_lost);
  EXPECT_EQ(sim.particles().id, ids);
  sim.step(kDt);
  EXPECT_EQ(sim.steps_done(), 16u);
}

TEST_P(Reconfigure, CpuToThisDeviceAndBackContinuesTheRun) {
  // 10 steps on the CPU, 10 on this backend, 10 on the CPU again, against 30 on the CPU:
  // the same bits when this backend is the CPU (the options are equal, so the
  // accelerations are kept); on the GPU the float64 forces differ by rounding only.
  const ParticleSystem start = test::random_system(1000, 21);
  const SimulationOptions cpu = test::simulation_options(direct(Device::Cpu));
  const SimulationOptions here = test::simulation_options(direct(device()));
  Simulation straight(start, cpu);
  Simulation moved(start, cpu);
  for (int leg = 0; leg < 3; ++leg) {
    if (leg == 1) moved.reconfigure(here);
    if (leg == 2) moved.reconfigure(cpu);
    EXPECT_EQ(moved.on_device(), leg == 1 && on_gpu());
    for (int s = 0; s < 10; ++s) {
      straight.step(kDt);
      moved.step(kDt);
    }
  }
  EXPECT_EQ(moved.steps_done(), 30u);
  EXPECT_EQ(moved.time(), straight.time());
  const ParticleSystem& a = moved.particles();
  const ParticleSystem& b = straight.particles();
  if (!on_gpu()) {
    expect_same_state(a, b, "cpu, cpu, cpu vs 30 steps on the cpu");
    return;
  }
  double dx = 0, x = 0, dv = 0, v = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dx +=
        std::pow(a.x[i] - b.x[i], 2) + std::pow(a.y[i] - b.y[i], 2) + std::pow(a.z[i] - b.z[i], 2);
    x += b.x[i] * b.x[i] + b.y[i] * b.y[i] + b.z[i] * b.z[i];
    dv += std::pow(a.vx[i] - b.vx[i], 2) + std::pow(a.vy[i] - b.vy[i], 2) +
          std::pow(a.vz[i] - b.vz[i], 2);
    v += b.vx[i] * b.vx[i] + b.vy[i] * b.vy[i] + b.vz[i] * b.vz[i];
  }
  std::printf(
      "[ measured ] cpu, gpu, cpu vs cpu: relative difference positions %.3e, velocities %.3e\n",
      std::sqrt(dx / x), std::sqrt(dv / v));
  EXPECT_LT(std::sqrt(dx / x), 1e-13);
  EXPECT_LT(std::sqrt(dv / v), 1e-12);
  EXPECT_EQ(a.id, b.id);
}

// ---- Options --------------------------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(OptionsAndNames);

TEST_P(OptionsAndNames, BadOptionsAreErrors) {
  const ParticleSystem ps = test::random_system(10, 1);
  GravityOptions g = direct(device());
  g.kernel = on_gpu() ? ForceKernel::Scalar : ForceKernel::Tiled;  // the other device's kernel
  EXPECT_THROW((void)Simulation(ps, g, IntegratorOptions{}), Error);
  g = direct(device());
  g.kernel = on_gpu() ? ForceKernel::Tiled : ForceKernel::Fast;
  g.block_size = 7;  // not a power of two on the GPU; GPU only on the CPU
  EXPECT_THROW((void)Simulation(ps, g, IntegratorOptions{}), Error);
  EXPECT_THROW(
      (void)Simulation(ps, direct(device()), integrator_options(IntegratorScheme::Leapfrog, 1.5)),
      Error);
  EXPECT_THROW((void)Simulation(ps, test::tree_options(device(), Precision::Auto, -1.0),
                                IntegratorOptions{}),
               Error);
  g = direct(device());
  g.softening = -1;
  EXPECT_THROW((void)Simulation(ps, g, IntegratorOptions{}), Error);
}

TEST_P(OptionsAndNames, FewBodiesTakeTheScalarSumAndSampledTimes) {
  // Up to 64 bodies the CPU's fast float64 kernel gives way to the scalar sum (the SIMD
  // kernel pads to 64 targets), and one step in 64 is timed for all of them: the phases
  // still add up to about the steps' time.
  Simulation sim(test::random_system(3, 4), direct(device()), IntegratorOptions{});
  for (int s = 0; s < 200; ++s) sim.step(1e-4);
  EXPECT_EQ(sim.steps_done(), 200u);
  if (!on_gpu()) {
    EXPECT_EQ(sim.solver_name(), "direct-scalar-double");
  }
  EXPECT_GT(sim.times().get("gravity"), 0.0);
  EXPECT_GT(sim.times().get("integrate"), 0.0);
}

TEST_P(OptionsAndNames, SmallRunsTakeOneThreadUnlessTold) {
  // --threads 0: one thread where an evaluation is too small to share (default_threads()),
  // all of OpenMP's above; a number given is kept; the GPU has no CPU threads to choose.
  GravityOptions g = direct(device());
  const auto threads_for = [](const GravityOptions& o, std::size_t n) {
    return Simulation(test::random_system(n, 5), o, IntegratorOptions{}).run_threads();
  };
  if (on_gpu()) {
    EXPECT_EQ(threads_for(g, 300), 0);
    return;
  }
  EXPECT_EQ(threads_for(g, 300), 1);
  EXPECT_EQ(threads_for(g, kSerialDirectBodies), 0);
  g.threads = 2;
  EXPECT_EQ(threads_for(g, 300), 2);
  GravityOptions t = test::tree_options(device(), Precision::Auto, 0.5);
  EXPECT_EQ(threads_for(t, kSerialTreeBodies - 1), 1);
  EXPECT_EQ(threads_for(t, kSerialTreeBodies), 0);
  // The choice changes only the time: one thread and two give the same bits.
  const ParticleSystem start = test::random_system(500, 6);
  GravityOptions one = direct(device()), two = direct(device());
  one.threads = 1;
  two.threads = 2;
  Simulation a(start, one, IntegratorOptions{}), b(start, two, IntegratorOptions{});
  for (int s = 0; s < 3; ++s) {
    a.step(kDt);
    b.step(kDt);
  }
  EXPECT_EQ(a.particles().x, b.particles().x);
}

TEST_P(OptionsAndNames, NamesSayWhatRuns) {
  for (const ForceKernel kernel : test::direct_kernels(device())) {
    GravityOptions g = direct(device());
    g.kernel = kernel;
    Simulation sim(test::random_system(100, 2), g, IntegratorOptions{});
    sim.step(kDt);
    const std::string name = sim.solver_name();
    if (on_gpu()) {
      EXPECT_EQ(name, "direct-cuda-" + std::string(to_string(kernel)) + "-double-resident");
    } else if (kernel == ForceKernel::Scalar) {
      EXPECT_EQ(name, "direct-scalar-double");
    } else {
      EXPECT_EQ(name.rfind("direct-simd-", 0), 0u) << name;
    }
    EXPECT_EQ(sim.on_device(), on_gpu());
  }
  for (const IntegratorScheme scheme : test::kAllSchemes) {
    Simulation sim(test::random_system(10, 3), direct(device()), integrator_options(scheme));
    EXPECT_EQ(sim.integrator_name(), to_string(scheme));
  }
  Simulation tree(test::random_system(100, 2), test::tree_options(device(), Precision::Auto, 0.5),
                  IntegratorOptions{});
  EXPECT_NE(tree.solver_name().find(on_gpu() ? "tree-cuda-octree" : "tree-octree"),
            std::string::npos)
      << tree.solver_name();
}

}  // namespace
}  // namespace nbody
