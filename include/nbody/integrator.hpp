#pragma once
// Time integrators on the CPU: each advances the particle state by one step of size dt,
// calling the step's force evaluation once, after its position update. All keep
// ps.ax/ay/az equal to the accelerations at the current positions at the end of a step,
// so one force evaluation per step suffices and diagnostics can reuse them. The
// per-body arithmetic is in physics/integration.hpp, shared with the CUDA kernels.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"

namespace nbody {

/// Leapfrog (kick-drift-kick), Euler (semi-implicit), Kinematic (x += (v + a dt/2) dt, v += a
/// dt), or IAS15 (Rein & Spiegel 2015: 15th-order Gauss-Radau with its own adaptive steps,
/// on the CPU with the float64 direct sum; docs/ias15.md).
enum class IntegratorScheme { Leapfrog, Euler, Kinematic, Ias15 };

/// "leapfrog", "euler", "kinematic" or "ias15" (src/core/option_names.cpp).
[[nodiscard]] std::string_view to_string(IntegratorScheme s);
/// Throws nbody::Error naming --integrator for an unknown name.
[[nodiscard]] IntegratorScheme parse_integrator_scheme(std::string_view name);

/// How IAS15 chooses its next step. Global: the paper's rule, from the relative size of the
/// last term of the force polynomial, max|b6| / max|a| (Rein & Spiegel 2015, eq. 11).
/// Prs23: the rule of Pham, Rein & Spiegel (2024), from each body's acceleration, jerk and
/// snap over the step (REBOUND's default since version 4).
enum class Ias15StepRule { Global, Prs23 };

/// "global" or "prs23" (src/core/option_names.cpp).
[[nodiscard]] std::string_view to_string(Ias15StepRule r);
/// Throws nbody::Error naming --ias15-adaptive for an unknown name.
[[nodiscard]] Ias15StepRule parse_ias15_step_rule(std::string_view name);

/// Fixed: every body takes the step of size dt. Adaptive: hierarchical (block) steps, each
/// body in a power-of-two bin dt / 2^k chosen from its acceleration (physics/timestep.hpp),
/// kick-drift-kick as in GADGET-2 (docs/timesteps.md). Hierarchical: the same bins, with
/// the Hamiltonian split by them (HOLD, GADGET-4's hierarchical scheme): every pair's
/// interaction kicked with its slower body's step, so momentum is kept to rounding (CPU;
/// integrators/hold_steps.hpp).
enum class TimestepMode { Fixed, Adaptive, Hierarchical };

/// Whether bodies take steps of their own (Adaptive or Hierarchical: bins, --eta, --dt-min).
[[nodiscard]] inline bool has_bins(TimestepMode m) {
  return m != TimestepMode::Fixed;
}

/// "fixed", "adaptive" or "hierarchical" (src/core/option_names.cpp).
[[nodiscard]] std::string_view to_string(TimestepMode m);
/// Throws nbody::Error naming --timestep for an unknown name.
[[nodiscard]] TimestepMode parse_timestep_mode(std::string_view name);

/// What sets an adaptive body's step (physics/timestep.hpp; docs/timesteps.md).
/// Acceleration: GADGET's sqrt(2 eta eps / |a|). Dynamical: eta times the local dynamical
/// time 1 / omega, omega^2 the larger of the mean density of the body's neighbourhood (the
/// smallest octree cell around it holding kDensityCellBodies bodies) as G M / r^3 and
/// |a|^2 / |phi| (G M / r^3 of a Kepler orbit): Zemp et al. (2007)'s dynamical time.
/// Jerk: dt_i = eta |a_i| / |da_i/dt|, the first-order form of Aarseth's criterion, with the
/// jerk summed directly over the bodies (the CPU direct sum, one process).
enum class TimestepCriterion { Acceleration, Dynamical, Jerk };

/// "acceleration", "dynamical" or "jerk" (src/core/option_names.cpp).
[[nodiscard]] std::string_view to_string(TimestepCriterion c);
/// Throws nbody::Error naming --timestep-criterion for an unknown name.
[[nodiscard]] TimestepCriterion parse_timestep_criterion(std::string_view name);

struct IntegratorOptions {
  IntegratorScheme scheme = IntegratorScheme::Leapfrog;
  double damping = 1.0;  // velocities *= damping after each step's velocity update
  TimestepMode timestep = TimestepMode::Fixed;
  double eta = 0.025;  // adaptive: dt_i = sqrt(2 eta eps / |a_i|) (GADGET's ErrTolIntAccuracy)
  double dt_min = 0;   // adaptive: no bin below this step (0: down to dt / 2^30)
  TimestepCriterion timestep_criterion = TimestepCriterion::Acceleration;
  double ias15_epsilon = 1e-9;  // IAS15: the step's accuracy (0: fixed steps of --dt)
  // Pham, Rein & Spiegel (2024), REBOUND's default: fewer steps at the same accuracy (ias15.md)
  Ias15StepRule ias15_rule = Ias15StepRule::Prs23;
};

/// What an integrator with memory carries from one step to the next, saved in checkpoints
/// so that a restart goes on bit for bit (IAS15: the proposed next step, the force
/// polynomial and the compensations of the sums; empty for the other schemes).
struct IntegratorState {
  double next_dt = 0;
  std::vector<double> values;
  [[nodiscard]] bool empty() const { return values.empty() && next_dt == 0; }
};

/// What an integrator calls for new accelerations at the current positions: the
/// stepper's force stages (gravity, the sum of the processes' shares).
using ForceEvaluation = std::function<void(ParticleSystem&)>;
/// The collision stage: contacts resolved in the bodies' current state (empty: none).
using CollisionStage = std::function<void(ParticleSystem&)>;

class Integrator {
 public:
  virtual ~Integrator() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Advances ps by dt; evaluates forces first if ps has none valid. With a collision
  /// stage, the leapfrog resolves contacts in the middle of its drift, where positions and
  /// velocities are both at the middle of the step (the step stays time-symmetric, so
  /// energy errors stay second order; docs/collisions.md); the other schemes after their
  /// position update, before the force evaluation.
  virtual void step(ParticleSystem& ps, const ForceEvaluation& forces, double dt,
                    const CollisionStage& collide) = 0;
  void step(ParticleSystem& ps, const ForceEvaluation& forces, double dt) {
    step(ps, forces, dt, nullptr);
  }
  /// The same with a gravity solver alone as the force evaluation.
  void step(ParticleSystem& ps, GravitySolver& gravity, double dt) {
    step(
        ps, [&gravity](ParticleSystem& p) { gravity.compute_accelerations(p); }, dt);
  }
};

/// Damping in (0, 1]; eta positive and finite, dt_min >= 0 and finite; adaptive steps
/// with the leapfrog and no damping; IAS15 with its epsilon >= 0 and finite, fixed
/// --timestep (it has its own) and no damping. Throws nbody::Error naming the option (--damping,
/// --eta, --dt-min, --timestep: the messages of `nbody run`). make_integrator() calls it
/// first.
void validate(const IntegratorOptions& options);
[[nodiscard]] std::unique_ptr<Integrator> make_integrator(const IntegratorOptions& options);
[[nodiscard]] std::vector<std::string> integrator_names();

/// Throws nbody::Error naming --dt unless dt is positive and finite.
void check_time_step(double dt);

// The length of a run. Every run must end: a step that does not advance the time (t + dt
// == t in double, e.g. steps of 0.5 at t = 1e16, where doubles are 2 apart) would repeat
// forever, and a count beyond 2^53 is neither exact in a double nor ever finished. So a
// run is refused before it starts unless every step advances the time up to the largest
// time it reaches and it takes at most kMaxRunSteps steps; the message gives the smallest
// workable step. The command line (`nbody run`) and Python (Simulation.evolve) call these.

/// The most steps one run may take: 2^53 (every count exact as a double).
inline constexpr std::uint64_t kMaxRunSteps = std::uint64_t(1) << 53;
/// The time's resolution at t: the gap from |t| to the next larger double (2 at 1e16).
/// A step of at least this advances every time of magnitude <= |t|.
[[nodiscard]] double time_resolution(double t);
/// Throws nbody::Error naming --dt unless a step of dt advances the time everywhere
/// between t_first and t_last (checked at the larger magnitude, where doubles are coarsest).
void check_step_advances(double t_first, double t_last, double dt);
/// The number of steps of size dt (the last one shortened) that take the time from t_start
/// to exactly t_end, as `nbody run --t-end` counts them. Throws nbody::Error naming --dt
/// or --t-end (t_end must be after t_start and finite; every step must advance the time;
/// at most kMaxRunSteps steps). Never overflows: the count is taken in long double and
/// checked before it is converted.
[[nodiscard]] std::uint64_t steps_to_reach(double t_start, double t_end, double dt);
/// The checks of a run until t_end from t_start with the step dt and the integrator `o`
/// (before the run starts): steps_to_reach()'s for steps of a given size; for IAS15, whose
/// steps are its own (dt: the first one's guess), that the guess advances the time; for
/// block steps, also that their smallest step (--dt-min's bin, when set) does. Throws
/// nbody::Error naming the option.
void check_run_until(const IntegratorOptions& o, double t_start, double t_end, double dt);
/// The same for a run of `steps` more steps of dt from t_start (--steps): at most
/// kMaxRunSteps, and every step advances the time up to t_start + steps dt.
void check_run_steps(const IntegratorOptions& o, double t_start, std::uint64_t steps, double dt);
/// Throws nbody::Error when a step of h at time t does not advance it: what a run checks
/// while it goes (a step that shrank below the time's resolution stops the run, rather
/// than repeating without end). `where` names the option ("--integrator ias15"), `remedy`
/// says what to change.
void check_step_during_run(double t, double h, std::string_view where, std::string_view remedy);
/// The next step from `time` toward t_end: dt, or the remaining time when that is within
/// dt (the last step lands on t_end), or 0 once t_end is reached. Decided from the time
/// alone, so a run continued from a checkpoint takes the steps an uninterrupted run takes
/// (nbody run --t-end, Simulation.evolve in Python).
[[nodiscard]] double step_toward(double time, double t_end, double dt);

}  // namespace nbody
