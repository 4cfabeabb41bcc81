#pragma once
// IAS15 (Rein & Spiegel 2015, "IAS15: a fast, adaptive, high-order integrator for
// gravitational dynamics, accurate to machine precision over a billion orbits", MNRAS 446,
// 1424): a 15th-order Gauss-Radau integrator (Everhart 1985) with predictor-corrector
// iterations, a step size from the force polynomial (the paper's global rule, or that of
// Pham, Rein & Spiegel 2024), and compensated (Kahan) summation of positions and
// velocities. docs/ias15.md says how it is used; the host stepper drives it one step at a
// time with the float64 direct sum as its force evaluation.
#include <cstdint>
#include <vector>

#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"

namespace nbody {

struct Ias15Options {
  double epsilon = 1e-9;  // the step's accuracy (0: steps of the size given, never changed)
  Ias15StepRule rule = Ias15StepRule::Global;
  double min_dt = 0;  // no step below this (0: none)
};

/// What IAS15 did so far.
struct Ias15Stats {
  std::uint64_t steps = 0;                     // accepted
  std::uint64_t rejected = 0;                  // proposed steps that were too large, taken again
  std::uint64_t iterations = 0;                // predictor-corrector iterations, summed
  std::uint64_t evaluations = 0;               // force evaluations
  double dt_last = 0, dt_min = 0, dt_max = 0;  // of the accepted steps
};

class Ias15 {
 public:
  explicit Ias15(Ias15Options options = {});
  /// One accepted step from ps.time (a proposal that proves too large is taken again,
  /// smaller): of the size the last step proposed (`dt_guess` for the first), shortened to
  /// end exactly on t_limit when it would pass it. Uses ps's accelerations as those at the
  /// start when they are valid (evaluates them when not) and leaves them invalid: the last
  /// evaluation was inside the step. Returns the step taken.
  double step(ParticleSystem& ps, const ForceEvaluation& forces, double dt_guess, double t_limit);
  /// Steps until ps.time is exactly t_end (> ps.time), then evaluates the forces there.
  void advance(ParticleSystem& ps, const ForceEvaluation& forces, double t_end, double dt_guess);
  /// The step the integrator proposes next (0 before the first step).
  [[nodiscard]] double next_dt() const { return dt_next_; }
  [[nodiscard]] const Ias15Stats& stats() const { return stats_; }
  /// Forgets the force polynomial and the compensations (after the bodies were edited or
  /// collided); keeps the proposed step.
  void reset();
  /// The state a checkpoint keeps: the proposed step, then b, e (7 x 3N each), csx, csv (3N
  /// each). set_state() takes it back; a state of another size is refused (nbody::Error).
  [[nodiscard]] IntegratorState state() const;
  void set_state(const IntegratorState& state);

 private:
  /// One attempt at a step of dt from the state x0, v0, a0; returns the proposed next step
  /// (the attempt is accepted when it is not much smaller than dt).
  double attempt(ParticleSystem& ps, const ForceEvaluation& forces, double dt);
  /// The next step after a converged attempt of dt, by the options' rule (ps holds the
  /// accelerations at the last substep).
  [[nodiscard]] double proposed_step(const ParticleSystem& ps, double dt) const;
  void predict_next(double ratio);
  void resize(std::size_t n3);

  Ias15Options options_;
  Ias15Stats stats_;
  double dt_next_ = 0;
  // Per component (3N, x y z interleaved by body): the start of the step, the force
  // polynomial (b: power form, g: divided differences, e: the last prediction of b), the
  // compensation of the positions and velocities.
  std::vector<double> x0_, v0_, a0_, csx_, csv_;
  std::vector<double> b_[7], g_[7], e_[7];
};

}  // namespace nbody
