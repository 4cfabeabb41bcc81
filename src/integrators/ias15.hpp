#pragma once
// IAS15 (Rein & Spiegel 2015, "IAS15: a fast, adaptive, high-order integrator for
// gravitational dynamics, accurate to machine precision over a billion orbits", MNRAS 446,
// 1424): a 15th-order Gauss-Radau integrator (Everhart 1985) with predictor-corrector
// iterations, a step size from the relative size of the last coefficient of the force
// polynomial, and compensated (Kahan) summation of positions and velocities.
//
// Issue #20, work in progress: the integrator itself, on any ParticleSystem with a force
// evaluation (the float64 direct sum), tested against Kepler and the figure-eight. Not yet
// wired into Simulation and `nbody run --integrator`.
#include <cstdint>
#include <vector>

#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"

namespace nbody {

struct Ias15Options {
  double epsilon = 1e-9;  // the step's accuracy: max |b6| / max |a| is held near it
  double min_dt = 0;      // no step below this (0: none)
};

/// What IAS15 did so far.
struct Ias15Stats {
  std::uint64_t steps = 0;                     // accepted
  std::uint64_t rejected = 0;                  // proposed steps that were too large, taken again
  std::uint64_t iterations = 0;                // predictor-corrector iterations, summed
  double dt_last = 0, dt_min = 0, dt_max = 0;  // of the accepted steps
};

class Ias15 {
 public:
  explicit Ias15(Ias15Options options = {});
  /// Advances ps to exactly t_end (> ps.time) in adaptive steps, the first of size
  /// `dt_guess` (or the step the last call proposed, when there was one); the last step is
  /// shortened to land on t_end. `forces` fills ps.ax, ay, az at ps's positions.
  void advance(ParticleSystem& ps, const ForceEvaluation& forces, double t_end, double dt_guess);
  /// The step the integrator proposes next (0 before the first step).
  [[nodiscard]] double next_dt() const { return dt_next_; }
  [[nodiscard]] const Ias15Stats& stats() const { return stats_; }
  /// Forgets the force polynomial and the compensation (after the bodies were edited).
  void reset();

 private:
  /// One attempt at a step of dt from the state x0, v0, a0; returns the proposed next
  /// step (the attempt is accepted when it is not much smaller than dt).
  double attempt(ParticleSystem& ps, const ForceEvaluation& forces, double dt);
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
