#pragma once
// The backends as a value-parameterised GoogleTest fixture, in the manner of Cabana's
// per-backend tests: a test body is written once and runs on every backend, the CPU always
// and the GPU when this build has CUDA and a device is usable (otherwise the GPU instance
// is reported as skipped, with the reason, never as passed). Also the one set of option
// builders that the CPU and GPU tests share.
//
//   NBODY_BACKEND_TEST_SUITE(Kepler);
//   TEST_P(Kepler, Returns) {
//     Simulation sim(start, simulation_options(device(), GravityAlgorithm::Direct));
//     ...
//   }
//
// runs as Backends/Kepler.Returns/cpu and Backends/Kepler.Returns/gpu. tests/CMakeLists.txt
// labels the ctest tests by that suffix ("cpu" or "gpu"), so `ctest -L gpu` runs the GPU
// instances. NBODY_GPU_TEST_SUITE(Name) makes a suite with the GPU instance only (for
// comparisons of the GPU with the CPU), and NBODY_SKIP_WITHOUT_GPU() skips a plain TEST.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "nbody/build_info.hpp"
#include "nbody/collisions.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/simulation.hpp"

namespace nbody {

/// How GoogleTest prints a backend in its messages ("where GetParam() = gpu").
inline void PrintTo(Device device, std::ostream* os) {
  *os << to_string(device);
}

}  // namespace nbody

namespace nbody::test {

/// Why the GPU cannot be used by this process ("" when it can): a build without CUDA, or no
/// driver or device. Asked once.
inline const std::string& gpu_unavailable_reason() {
  static const std::string reason = [] {
    std::string why;
    if (!gpu_devices(&why).empty()) return std::string();
    return why.empty() ? std::string("no device found") : why;
  }();
  return reason;
}

/// "cpu" or "gpu": the suffix of the test names.
inline std::string backend_name(const ::testing::TestParamInfo<Device>& info) {
  return std::string(to_string(info.param));
}

/// A test body run once per backend; GetParam() (or device()) is the backend.
class BackendTest : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::Gpu && !gpu_unavailable_reason().empty()) {
      GTEST_SKIP() << "no CUDA device: " << gpu_unavailable_reason();
    }
  }
  [[nodiscard]] Device device() const { return GetParam(); }
  [[nodiscard]] bool on_gpu() const { return GetParam() == Device::Gpu; }
};

// ---- The option builders ------------------------------------------------------------------

/// Gravity on `device` with the device's default kernel (Fast: SIMD + OpenMP on the CPU, the
/// fast CUDA kernel on the GPU). Precision Auto is float64 for the direct sum and float32
/// for the tree, on both devices. The tree opens by the geometric criterion: the same cells
/// at every evaluation, where the default relative one opens by the last evaluation's
/// accelerations (its own tests: test_opening_criteria.cpp, test_tree_cuda.cpp).
inline GravityOptions gravity_options(Device device,
                                      GravityAlgorithm algorithm = GravityAlgorithm::Direct,
                                      Precision precision = Precision::Auto,
                                      double softening = 0.0) {
  GravityOptions g;
  g.mac = OpeningCriterion::Geometric;
  g.device = device;
  g.algorithm = algorithm;
  g.precision = precision;
  g.softening = softening;
  return g;
}

/// The Barnes-Hut tree on `device` (dim 2: the quadtree; Simulation sets dim from the system),
/// geometric at `theta`.
inline GravityOptions tree_options(Device device, Precision precision, double theta, int dim = 3,
                                   bool quadrupole = false, double softening = 0.0) {
  GravityOptions g = gravity_options(device, GravityAlgorithm::Tree, precision, softening);
  g.theta = theta;
  g.dim = dim;
  g.quadrupole = quadrupole;
  return g;
}

inline IntegratorOptions integrator_options(IntegratorScheme scheme = IntegratorScheme::Leapfrog,
                                            double damping = 1.0) {
  IntegratorOptions i;
  i.scheme = scheme;
  i.damping = damping;
  return i;
}

/// Collisions on the CPU (Simulation moves them to the gravity's device).
inline CollisionOptions collision_options(CollisionModel model, double restitution = 1.0,
                                          int iterations = 1, int dim = 3,
                                          Device device = Device::Cpu) {
  CollisionOptions c;
  c.model = model;
  c.restitution = restitution;
  c.iterations = iterations;
  c.dim = dim;
  c.device = device;
  return c;
}

inline SimulationOptions simulation_options(const GravityOptions& gravity,
                                            const IntegratorOptions& integrator = {},
                                            const CollisionOptions& collisions = {}) {
  return SimulationOptions{gravity, integrator, collisions, EnergyMethod::Auto};
}

/// A whole run's options: gravity on `device`, the integrator, no collisions.
inline SimulationOptions simulation_options(Device device,
                                            GravityAlgorithm algorithm = GravityAlgorithm::Direct,
                                            Precision precision = Precision::Auto,
                                            double softening = 0.0,
                                            IntegratorScheme scheme = IntegratorScheme::Leapfrog,
                                            double damping = 1.0) {
  return simulation_options(gravity_options(device, algorithm, precision, softening),
                            integrator_options(scheme, damping));
}

inline constexpr IntegratorScheme kAllSchemes[] = {
    IntegratorScheme::Leapfrog, IntegratorScheme::Euler, IntegratorScheme::Kinematic};

/// The direct-sum kernels `device` has (make_gravity_solver refuses the others).
inline std::vector<ForceKernel> direct_kernels(Device device) {
  if (device == Device::Gpu) return {ForceKernel::Fast, ForceKernel::Tiled, ForceKernel::Naive};
  return {ForceKernel::Fast, ForceKernel::Scalar};
}

}  // namespace nbody::test

/// Declares the fixture `Suite` and instantiates its tests for the CPU and the GPU.
#define NBODY_BACKEND_TEST_SUITE(Suite)                                                   \
  class Suite : public ::nbody::test::BackendTest {};                                     \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite,                                               \
                           ::testing::Values(::nbody::Device::Cpu, ::nbody::Device::Gpu), \
                           ::nbody::test::backend_name)

/// The same with the GPU instance only: comparisons of the GPU with the CPU.
#define NBODY_GPU_TEST_SUITE(Suite)                                                  \
  class Suite : public ::nbody::test::BackendTest {};                                \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::testing::Values(::nbody::Device::Gpu), \
                           ::nbody::test::backend_name)

/// For a plain TEST that needs the GPU: skips it, saying why, when none is usable.
#define NBODY_SKIP_WITHOUT_GPU()                                                     \
  do {                                                                               \
    if (!::nbody::test::gpu_unavailable_reason().empty()) {                          \
      GTEST_SKIP() << "no CUDA device: " << ::nbody::test::gpu_unavailable_reason(); \
    }                                                                                \
  } while (0)
