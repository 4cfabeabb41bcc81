#include <fmt/format.h>

#include "integrators/integrators.hpp"
#include "nbody/error.hpp"

namespace nbody {

namespace {
using StepFunction = void (*)(ParticleSystem&, GravitySolver&, double dt, double damping);

/// An integrator is a named step function plus its damping factor.
class SchemeIntegrator final : public Integrator {
 public:
  SchemeIntegrator(std::string name, StepFunction step_function, double damping)
      : name_(std::move(name)), step_(step_function), damping_(damping) {}
  [[nodiscard]] std::string name() const override { return name_; }
  void step(ParticleSystem& ps, GravitySolver& gravity, double dt) override {
    step_(ps, gravity, dt, damping_);
  }

 private:
  std::string name_;
  StepFunction step_;
  double damping_;
};

struct Scheme {
  const char* name;
  StepFunction step;
};
constexpr Scheme kSchemes[] = {{"leapfrog", leapfrog_kdk_step},
                               {"euler", symplectic_euler_step},
                               {"kinematic", kinematic_step}};
}  // namespace

std::vector<std::string> integrator_names() {
  std::vector<std::string> names;
  for (const auto& s : kSchemes) names.emplace_back(s.name);
  return names;
}

std::unique_ptr<Integrator> make_integrator(const IntegratorOptions& o) {
  if (!(o.damping > 0.0 && o.damping <= 1.0)) {
    throw Error(fmt::format("--damping {}: must be in (0, 1] (1 = no damping)", o.damping));
  }
  for (const auto& s : kSchemes) {
    if (o.scheme == s.name) return std::make_unique<SchemeIntegrator>(s.name, s.step, o.damping);
  }
  throw Error(fmt::format("--integrator {}: unknown integrator (available: leapfrog, euler, kinematic)",
                          o.scheme));
}

}  // namespace nbody
