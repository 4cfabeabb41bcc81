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

/// Leapfrog (kick-drift-kick), Euler (semi-implicit) or Kinematic (x += (v + a dt/2) dt, v += a
/// dt).
enum class IntegratorScheme { Leapfrog, Euler, Kinematic };

/// "leapfrog", "euler" or "kinematic" (src/core/option_names.cpp).
[[nodiscard]] std::string_view to_string(IntegratorScheme s);
/// Throws nbody::Error naming --integrator for an unknown name.
[[nodiscard]] IntegratorScheme parse_integrator_scheme(std::string_view name);

/// Fixed: every body takes the step of size dt. Adaptive: hierarchical (block) steps, each
/// body in a power-of-two bin dt / 2^k chosen from its acceleration (physics/timestep.hpp),
/// kick-drift-kick as in GADGET-2 (docs/timesteps.md).
enum class TimestepMode { Fixed, Adaptive };

/// "fixed" or "adaptive" (src/core/option_names.cpp).
[[nodiscard]] std::string_view to_string(TimestepMode m);
/// Throws nbody::Error naming --timestep for an unknown name.
[[nodiscard]] TimestepMode parse_timestep_mode(std::string_view name);

struct IntegratorOptions {
  IntegratorScheme scheme = IntegratorScheme::Leapfrog;
  double damping = 1.0;  // velocities *= damping after each step's velocity update
  TimestepMode timestep = TimestepMode::Fixed;
  double eta = 0.025;  // adaptive: dt_i = sqrt(2 eta eps / |a_i|) (GADGET's ErrTolIntAccuracy)
  double dt_min = 0;   // adaptive: no bin below this step (0: down to dt / 2^30)
};

/// What an integrator calls for new accelerations at the current positions: the
/// stepper's force stages (collisions, gravity, the sum of the processes' shares).
using ForceEvaluation = std::function<void(ParticleSystem&)>;

class Integrator {
 public:
  virtual ~Integrator() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Advances ps by dt; evaluates forces first if ps has none valid.
  virtual void step(ParticleSystem& ps, const ForceEvaluation& forces, double dt) = 0;
  /// The same with a gravity solver alone as the force evaluation.
  void step(ParticleSystem& ps, GravitySolver& gravity, double dt) {
    step(
        ps, [&gravity](ParticleSystem& p) { gravity.compute_accelerations(p); }, dt);
  }
};

/// Damping in (0, 1]; eta positive and finite, dt_min >= 0 and finite; adaptive steps
/// with the leapfrog and no damping. Throws nbody::Error naming the option (--damping,
/// --eta, --dt-min, --timestep: the messages of `nbody run`). make_integrator() calls it
/// first.
void validate(const IntegratorOptions& options);
[[nodiscard]] std::unique_ptr<Integrator> make_integrator(const IntegratorOptions& options);
[[nodiscard]] std::vector<std::string> integrator_names();

/// Throws nbody::Error naming --dt unless dt is positive and finite.
void check_time_step(double dt);
/// The number of steps of size dt (the last one shortened) that take the time from t_start
/// to exactly t_end, as `nbody run --t-end` counts them. Throws nbody::Error naming --dt
/// or --t-end (t_end must be after t_start).
[[nodiscard]] std::uint64_t steps_to_reach(double t_start, double t_end, double dt);
/// The next step from `time` toward t_end: dt, or the remaining time when that is within
/// dt (the last step lands on t_end), or 0 once t_end is reached. Decided from the time
/// alone, so a run continued from a checkpoint takes the steps an uninterrupted run takes
/// (nbody run --t-end, Simulation.evolve in Python).
[[nodiscard]] double step_toward(double time, double t_end, double dt);

}  // namespace nbody
