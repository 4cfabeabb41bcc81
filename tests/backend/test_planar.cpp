// 2D runs on every backend: z, vz and az stay exactly 0 for every solver, kernel,
// precision and integrator, and a 3D input given dim 2 is projected.
#include <gtest/gtest.h>

#include <string>

#include "backend_test.hpp"
#include "nbody/simulation.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

NBODY_BACKEND_TEST_SUITE(Planar);

void expect_planar(Simulation& sim) {
  const ParticleSystem& ps = sim.particles();
  EXPECT_EQ(ps.dim, 2);
  for (std::size_t k = 0; k < ps.size(); ++k) {
    ASSERT_EQ(ps.z[k], 0.0) << "body " << k;
    ASSERT_EQ(ps.vz[k], 0.0) << "body " << k;
    ASSERT_EQ(ps.az[k], 0.0) << "body " << k;
  }
  EXPECT_EQ(sim.diagnostics().momentum.z, 0.0);
}

TEST_P(Planar, DirectSumKeepsZExactlyZero) {
  for (const ForceKernel kernel : test::direct_kernels(device())) {
    for (Precision p : {Precision::Float, Precision::Double}) {
      for (const IntegratorScheme scheme : test::kAllSchemes) {
        for (double damping : {1.0, 0.95}) {
          SCOPED_TRACE(std::string(to_string(kernel)) + " " + std::string(to_string(p)) + " " +
                       std::string(to_string(scheme)) + " damping " + std::to_string(damping));
          GravityOptions g = test::gravity_options(device(), GravityAlgorithm::Direct, p, 0.01);
          g.kernel = kernel;
          Simulation sim(test::random_system(257, 5, 2), g,
                         test::integrator_options(scheme, damping));
          for (int s = 0; s < 50; ++s) sim.step(1e-3);
          expect_planar(sim);
        }
      }
    }
  }
}

TEST_P(Planar, QuadtreeKeepsZExactlyZero) {
  for (Precision p : {Precision::Float, Precision::Double}) {
    for (bool quadrupole : {false, true}) {
      SCOPED_TRACE(std::string(to_string(p)) + (quadrupole ? " quadrupole" : ""));
      Simulation sim(test::random_system(3000, 29, 2),
                     test::tree_options(device(), p, 0.5, 2, quadrupole, 0.01),
                     IntegratorOptions{});
      EXPECT_NE(sim.solver_name().find("quadtree"), std::string::npos) << sim.solver_name();
      for (int s = 0; s < 20; ++s) sim.step(1e-3);
      expect_planar(sim);
    }
  }
}

TEST_P(Planar, ThreeDimensionalInputIsProjected) {
  ParticleSystem ps = test::random_system(10, 1);
  ps.dim = 2;
  Simulation sim(ps, test::gravity_options(device()), IntegratorOptions{});
  for (std::size_t k = 0; k < sim.particles().size(); ++k) {
    EXPECT_EQ(sim.particles().z[k], 0.0);
    EXPECT_EQ(sim.particles().vz[k], 0.0);
  }
  sim.step(1e-3);
  expect_planar(sim);
}

}  // namespace
}  // namespace nbody
