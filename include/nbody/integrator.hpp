#pragma once
// Time integrators: each advances the particle state by one step of size dt,
// calling the gravity solver for new accelerations. All keep ps.ax/ay/az equal to the
// accelerations at the current positions at the end of a step, so one force
// evaluation per step suffices and diagnostics can reuse them.
#include <memory>
#include <string>
#include <vector>

#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace nbody {

struct IntegratorOptions {
  std::string scheme = "leapfrog";  // leapfrog | euler | kinematic
  double damping = 1.0;             // velocities *= damping after each step's velocity update
};

class Integrator {
 public:
  virtual ~Integrator() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Advances ps by dt; computes accelerations first if ps has none valid.
  virtual void step(ParticleSystem& ps, GravitySolver& gravity, double dt) = 0;
};

[[nodiscard]] std::unique_ptr<Integrator> make_integrator(const IntegratorOptions& options);
[[nodiscard]] std::vector<std::string> integrator_names();

}  // namespace nbody
