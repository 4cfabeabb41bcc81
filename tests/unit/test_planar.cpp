// 2D runs: z and vz stay exactly 0 for every solver, precision and integrator.
#include <gtest/gtest.h>

#include "nbody/simulation.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

TEST(Planar, ZAndVzStayExactlyZero) {
  for (const ForceKernel kernel : {ForceKernel::Scalar, ForceKernel::Fast}) {
    for (Precision p : {Precision::Float, Precision::Double}) {
      for (const IntegratorScheme scheme :
           {IntegratorScheme::Leapfrog, IntegratorScheme::Euler, IntegratorScheme::Kinematic}) {
        GravityOptions g;
        g.kernel = kernel;
        g.precision = p;
        g.softening = 0.01;
        IntegratorOptions i;
        i.scheme = scheme;
        Simulation sim(test::random_system(257, 5, 2), g, i);
        for (int s = 0; s < 50; ++s) sim.step(1e-3);
        const ParticleSystem& ps = sim.particles();
        for (std::size_t k = 0; k < ps.size(); ++k) {
          ASSERT_EQ(ps.z[k], 0.0) << to_string(kernel) << " " << to_string(p) << " " << to_string(scheme);
          ASSERT_EQ(ps.vz[k], 0.0) << to_string(kernel) << " " << to_string(p) << " " << to_string(scheme);
        }
      }
    }
  }
}

TEST(Planar, ThreeDimensionalInputIsProjected) {
  ParticleSystem ps = test::random_system(10, 1);
  ps.dim = 2;
  Simulation sim(ps, GravityOptions{}, IntegratorOptions{});
  for (std::size_t k = 0; k < sim.particles().size(); ++k) {
    EXPECT_EQ(sim.particles().z[k], 0.0);
    EXPECT_EQ(sim.particles().vz[k], 0.0);
  }
}

}  // namespace
}  // namespace nbody
