#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "integrators/ias15.hpp"
#include "integrators/scheme_step.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody {

namespace {
using StepFunction = void (*)(ParticleSystem&, const ForceEvaluation&, const CollisionStage&,
                              double dt, double damping);

/// An integrator is a scheme's step function plus its damping factor.
class SchemeIntegrator final : public Integrator {
 public:
  SchemeIntegrator(IntegratorScheme scheme, StepFunction step_function, double damping)
      : scheme_(scheme), step_(step_function), damping_(damping) {}
  [[nodiscard]] std::string name() const override { return std::string(to_string(scheme_)); }
  using Integrator::step;
  void step(ParticleSystem& ps, const ForceEvaluation& forces, double dt,
            const CollisionStage& collide) override {
    step_(ps, forces, collide, dt, damping_);
  }

 private:
  IntegratorScheme scheme_;
  StepFunction step_;
  double damping_;
};

/// IAS15 as an Integrator: a step of dt is as many of its own adaptive steps as take the
/// time to exactly t + dt (REBOUND's integrate() with an exact finish time); the first of
/// them is dt long, or the size the last step proposed.
class Ias15Integrator final : public Integrator {
 public:
  explicit Ias15Integrator(const IntegratorOptions& o)
      : ias15_({.epsilon = o.ias15_epsilon, .rule = o.ias15_rule}) {}
  [[nodiscard]] std::string name() const override { return "ias15"; }
  using Integrator::step;
  /// Collisions are the host stepper's business with IAS15 (after each of its steps).
  void step(ParticleSystem& ps, const ForceEvaluation& forces, double dt,
            const CollisionStage&) override {
    check_time_step(dt);
    ias15_.advance(ps, forces, ps.time + dt, dt);
  }

 private:
  Ias15 ias15_;
};

StepFunction step_function(IntegratorScheme scheme) {
  switch (scheme) {
    case IntegratorScheme::Ias15:  // its own class
      break;
    case IntegratorScheme::Euler:
      return scheme_step<IntegratorScheme::Euler>;
    case IntegratorScheme::Kinematic:
      return scheme_step<IntegratorScheme::Kinematic>;
    case IntegratorScheme::Leapfrog:
      break;
  }
  return scheme_step<IntegratorScheme::Leapfrog>;
}

constexpr IntegratorScheme kSchemes[] = {IntegratorScheme::Leapfrog, IntegratorScheme::Euler,
                                         IntegratorScheme::Kinematic, IntegratorScheme::Ias15};
}  // namespace

std::vector<std::string> integrator_names() {
  std::vector<std::string> names;
  for (IntegratorScheme s : kSchemes) names.emplace_back(to_string(s));
  return names;
}

void validate(const IntegratorOptions& o) {
  if (!(o.damping > 0.0 && o.damping <= 1.0)) {
    throw input_error("--damping", "must be in (0, 1] (1 = no damping)", o.damping);
  }
  if (!(std::isfinite(o.eta) && o.eta > 0)) {
    throw input_error("--eta", "the time-step accuracy must be positive and finite", o.eta);
  }
  if (!(std::isfinite(o.dt_min) && o.dt_min >= 0)) {
    throw input_error("--dt-min", "must be >= 0 and finite (0: no floor)", o.dt_min);
  }
  if (has_bins(o.timestep)) {
    const std::string_view mode = to_string(o.timestep);
    if (o.scheme == IntegratorScheme::Ias15) {
      throw input_error("--timestep",
                        "not with --integrator ias15 (IAS15 chooses its own steps; "
                        "--ias15-epsilon sets their accuracy)",
                        mode);
    }
    if (o.scheme != IntegratorScheme::Leapfrog) {
      throw input_error("--timestep",
                        fmt::format("needs --integrator leapfrog (the block steps are "
                                    "kick-drift-kick), not {}",
                                    to_string(o.scheme)),
                        mode);
    }
    if (o.damping != 1.0) {
      throw input_error("--damping", fmt::format("not with --timestep {}", mode), o.damping);
    }
  }
  if (o.timestep == TimestepMode::Hierarchical &&
      o.timestep_criterion != TimestepCriterion::Acceleration) {
    throw input_error("--timestep-criterion",
                      "with --timestep adaptive only (hierarchical: "
                      "acceleration)",
                      to_string(o.timestep_criterion));
  }
  if (!(std::isfinite(o.ias15_epsilon) && o.ias15_epsilon >= 0)) {
    throw input_error("--ias15-epsilon", "must be >= 0 and finite (0: fixed steps of --dt)",
                      o.ias15_epsilon);
  }
  if (o.scheme == IntegratorScheme::Ias15) {
    if (o.damping != 1.0) {
      throw input_error("--damping", "not with --integrator ias15", o.damping);
    }
  }
}

std::unique_ptr<Integrator> make_integrator(const IntegratorOptions& o) {
  validate(o);
  if (o.scheme == IntegratorScheme::Ias15) return std::make_unique<Ias15Integrator>(o);
  return std::make_unique<SchemeIntegrator>(o.scheme, step_function(o.scheme), o.damping);
}

void check_time_step(double dt) {
  if (!(std::isfinite(dt) && dt > 0)) {
    throw input_error("--dt", "the time step must be positive and finite", dt);
  }
}

double step_toward(double time, double t_end, double dt) {
  const double remaining = t_end - time;
  // A remainder within rounding of t_end is no step; but never one of half a step or more
  // (at t = 1e16 the relative 1e-12 alone would end a run of steps of 2 some 1e4 early).
  if (!(remaining > std::min(1e-12 * std::max(std::abs(t_end), dt), 0.5 * dt))) return 0.0;
  return remaining <= dt * (1 + 1e-9) ? remaining : dt;
}

}  // namespace nbody
