#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

void validate(const IntegratorOptions& o) {
  if (!(o.damping > 0.0 && o.damping <= 1.0)) {
    throw Error(fmt::format("--damping {}: must be in (0, 1] (1 = no damping)", o.damping));
  }
  for (const auto& s : kSchemes) {
    if (o.scheme == s.name) return;
  }
  throw Error(fmt::format("--integrator {}: unknown integrator (available: {})", o.scheme,
                          fmt::join(integrator_names(), ", ")));
}

std::unique_ptr<Integrator> make_integrator(const IntegratorOptions& o) {
  validate(o);
  for (const auto& s : kSchemes) {
    if (o.scheme == s.name) return std::make_unique<SchemeIntegrator>(s.name, s.step, o.damping);
  }
  return nullptr;  // not reached: validate() threw
}

void check_time_step(double dt) {
  if (!(std::isfinite(dt) && dt > 0)) {
    throw Error(fmt::format("--dt {}: the time step must be positive and finite", dt));
  }
}

double step_toward(double time, double t_end, double dt) {
  const double remaining = t_end - time;
  if (!(remaining > 1e-12 * std::max(std::abs(t_end), dt))) return 0.0;
  return remaining <= dt * (1 + 1e-9) ? remaining : dt;
}

std::uint64_t steps_to_reach(double t_start, double t_end, double dt) {
  check_time_step(dt);
  if (!(t_end > t_start) || !std::isfinite(t_end)) {
    throw Error(fmt::format("--t-end {}: must be after the start time {}", t_end, t_start));
  }
  // The 1e-12 keeps a rounding error in (t_end - t_start) / dt from adding a tiny last step.
  return std::uint64_t(std::ceil((t_end - t_start) / dt * (1 - 1e-12)));
}

}  // namespace nbody
