#pragma once
// A simulation: the particle state, a gravity solver and an integrator, stepped
// together, with the time spent in each phase recorded. The command line, the viewer
// and the Python module all drive this class.
#include <cstdint>
#include <memory>

#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"
#include "nbody/phase_times.hpp"

namespace nbody {

class Simulation {
 public:
  /// Throws nbody::Error for invalid options. A dim-2 system is made planar.
  Simulation(ParticleSystem particles, const GravityOptions& gravity,
             const IntegratorOptions& integrator);
  ~Simulation();
  Simulation(Simulation&&) noexcept;
  Simulation& operator=(Simulation&&) noexcept;

  /// Advances by one step of size dt.
  void step(double dt);

  [[nodiscard]] ParticleSystem& particles() { return particles_; }
  [[nodiscard]] const ParticleSystem& particles() const { return particles_; }
  [[nodiscard]] std::uint64_t steps_done() const { return steps_done_; }
  [[nodiscard]] const GravityOptions& gravity_options() const { return gravity_options_; }
  [[nodiscard]] const GravitySolver& gravity() const;
  [[nodiscard]] const Integrator& integrator() const { return *integrator_; }

  /// Energies etc. with the run's G and softening (timed as "diagnostics").
  [[nodiscard]] Diagnostics diagnostics();

  /// Seconds per phase so far: "gravity", "integrate" (the step minus gravity),
  /// "diagnostics"; callers add "io".
  [[nodiscard]] PhaseTimes& times() { return times_; }

 private:
  class TimedGravity;
  ParticleSystem particles_;
  GravityOptions gravity_options_;
  std::unique_ptr<TimedGravity> gravity_;
  std::unique_ptr<Integrator> integrator_;
  PhaseTimes times_;
  std::uint64_t steps_done_ = 0;
};

}  // namespace nbody
