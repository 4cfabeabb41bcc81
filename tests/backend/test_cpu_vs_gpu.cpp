// The GPU against the CPU on the same runs (the GPU instance only; skipped without a
// device): every integrator with and without damping in float and double, the energy a
// leapfrog run keeps, and the tree. The forces differ by rounding (float: the summation
// order; double: ~1 ulp), which the dynamics amplify; the bounds are about 10x what was
// measured on an H200.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "backend_test.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

constexpr double kDt = 1e-3;

/// ||x_a - x_b|| / ||x_b|| over all bodies.
double relative_position_difference(const ParticleSystem& a, const ParticleSystem& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double dx = a.x[i] - b.x[i], dy = a.y[i] - b.y[i], dz = a.z[i] - b.z[i];
    num += dx * dx + dy * dy + dz * dz;
    den += b.x[i] * b.x[i] + b.y[i] * b.y[i] + b.z[i] * b.z[i];
  }
  return std::sqrt(num / den);
}

NBODY_GPU_TEST_SUITE(CpuVsGpu);

TEST_P(CpuVsGpu, EveryIntegratorFollowsTheCpu) {
  // 1000 steps of N = 1000 (softening 0.05) on both devices, the CPU with the SIMD direct
  // sum of the same precision.
  const ParticleSystem start = test::random_system(1000, 99);
  for (const IntegratorScheme scheme : test::kAllSchemes) {
    for (double damping : {1.0, 0.95}) {
      for (Precision p : {Precision::Float, Precision::Double}) {
        const std::string what = std::string(to_string(scheme)) + " damping " +
                                 std::to_string(damping) + " " + std::string(to_string(p));
        SCOPED_TRACE(what);
        Simulation cpu(start, test::simulation_options(Device::Cpu, GravityAlgorithm::Direct, p,
                                                       0.05, scheme, damping));
        Simulation gpu(start, test::simulation_options(Device::Gpu, GravityAlgorithm::Direct, p,
                                                       0.05, scheme, damping));
        ASSERT_TRUE(gpu.on_device());
        for (int s = 0; s < 1000; ++s) {
          cpu.step(kDt);
          gpu.step(kDt);
        }
        const double rel = relative_position_difference(gpu.particles(), cpu.particles());
        std::printf("[ measured ] %s, 1000 steps: relative position difference GPU vs CPU %.3e\n",
                    what.c_str(), rel);
        // Measured on an H200: float 1.25e-8 undamped, 3.5e-10 damped; double 1.0e-15
        // undamped, 5.1e-17 damped.
        const double bound =
            p == Precision::Float ? (damping < 1 ? 5e-9 : 1.5e-7) : (damping < 1 ? 1e-15 : 1.5e-14);
        EXPECT_LT(rel, bound);
        EXPECT_EQ(gpu.time(), cpu.time());
      }
    }
  }
}

TEST_P(CpuVsGpu, LeapfrogEnergyErrorIsTheCpus) {
  const ParticleSystem start = test::random_system(1000, 5);
  Simulation cpu(start, test::simulation_options(Device::Cpu, GravityAlgorithm::Direct,
                                                 Precision::Double, 0.05));
  Simulation gpu(start, test::simulation_options(Device::Gpu, GravityAlgorithm::Direct,
                                                 Precision::Double, 0.05));
  const double e0 = gpu.diagnostics().total_energy;
  const double e0_cpu = cpu.diagnostics().total_energy;
  for (int s = 0; s < 1000; ++s) {
    cpu.step(kDt);
    gpu.step(kDt);
  }
  const double drift_gpu = relative_energy_drift(e0, gpu.diagnostics().total_energy);
  const double drift_cpu = relative_energy_drift(e0_cpu, cpu.diagnostics().total_energy);
  std::printf("[ measured ] leapfrog 1000 steps: |dE/E| GPU %.3e, CPU %.3e\n", drift_gpu,
              drift_cpu);
  EXPECT_NEAR(drift_gpu, drift_cpu, 1e-3 * drift_cpu + 1e-12);
}

TEST_P(CpuVsGpu, TreeRunFollowsTheCpuTree) {
  const ParticleSystem ps = generate({.model = "plummer", .n = 4000, .seed = 3});
  for (Precision p : {Precision::Float, Precision::Double}) {
    SCOPED_TRACE(std::string(to_string(p)));
    Simulation cpu(ps, test::tree_options(Device::Cpu, p, 0.5, 3, false, 0.01),
                   IntegratorOptions{});
    Simulation gpu(ps, test::tree_options(Device::Gpu, p, 0.5, 3, false, 0.01),
                   IntegratorOptions{});
    EXPECT_NE(gpu.solver_name().find("tree-cuda-octree"), std::string::npos) << gpu.solver_name();
    const double e0 = cpu.diagnostics().total_energy;
    for (int s = 0; s < 100; ++s) {
      cpu.step(kDt);
      gpu.step(kDt);
    }
    const ParticleSystem& a = cpu.particles();
    const ParticleSystem& b = gpu.particles();
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      worst = std::max(
          {worst, std::abs(a.x[i] - b.x[i]), std::abs(a.y[i] - b.y[i]), std::abs(a.z[i] - b.z[i])});
    }
    const double de = relative_energy_drift(e0, gpu.diagnostics().total_energy);
    std::printf(
        "[ measured ] %s tree, 100 steps: max position difference GPU vs CPU %.3e, GPU |dE/E| "
        "%.3e\n",
        std::string(to_string(p)).c_str(), worst, de);
    EXPECT_LT(worst, 1e-5);
    EXPECT_LT(de, 1e-4);
  }
}

}  // namespace
}  // namespace nbody
