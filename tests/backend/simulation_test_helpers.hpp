#pragma once
// Shared by the tests of Simulation's contract (test_simulation*.cpp): the softening and the
// step of their runs, and the direct sum's options on a backend.
#include "backend_test.hpp"
#include "nbody/gravity.hpp"

namespace nbody::simulation_test {

inline constexpr double kSoftening = 0.05;
inline constexpr double kDt = 1e-3;

inline GravityOptions direct(Device device, Precision p = Precision::Double) {
  return test::gravity_options(device, GravityAlgorithm::Direct, p, kSoftening);
}

}  // namespace nbody::simulation_test
