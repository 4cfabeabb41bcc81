#pragma once
// The simulation behind the window: a Simulation stepped a few steps per frame, given new
// options (Simulation::reconfigure) when a solver setting changes, with what the
// Performance panel shows (steps per second, ms per stage, the energy drift over time).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"
#include "nbody/simulation.hpp"

namespace nbody::viewer {

/// One row of the Performance panel: a stage's milliseconds per step and share of the step.
struct StageTime {
  std::string name;
  double ms = 0;
  double share = 0;  // of the whole step, in [0, 1]
};

class LiveSimulation {
 public:
  /// Throws nbody::Error for options Simulation rejects.
  LiveSimulation(ParticleSystem initial, const SimulationOptions& options);

  /// New options (what the Settings panel edits) for the running Simulation, through
  /// Simulation::reconfigure(): the bodies, time, step count and collision totals are kept.
  /// On nbody::Error nothing changes and the message is returned (shown in the Settings
  /// panel); "" on success.
  std::string apply(const SimulationOptions& options);
  /// Back to the initial bodies (a new Simulation), with the current options.
  std::string restart();
  /// The options as given (Simulation::options() holds them completed for the system).
  [[nodiscard]] const SimulationOptions& options() const { return options_; }

  /// Runs `steps` steps of size dt and updates the rates and stage times.
  void step(int steps, double dt);
  [[nodiscard]] std::uint64_t steps_done() const { return total_steps_; }

  /// The whole state (never marks it edited; on the GPU path a download of every array
  /// when the device has stepped since: the drawing reads DrawnBodies instead).
  [[nodiscard]] const ParticleSystem& particles() const;
  /// The bodies, to edit (spawning): the GPU path uploads them before the next step; the
  /// energy baseline restarts since the system changed.
  [[nodiscard]] ParticleSystem& edit_particles();
  [[nodiscard]] Simulation& simulation() { return sim_; }
  [[nodiscard]] std::size_t size() const { return sim_.size(); }
  /// 3, or 2 for a planar system (never copies the state).
  [[nodiscard]] int dim() const { return sim_.options().gravity.dim; }
  /// Changes whenever the bodies may have changed other than by moving: an edit, a step in
  /// which bodies merged (N changed), new options, a restart. What drawing keeps of the
  /// bodies besides their positions (masses, radii, ids) is read again then.
  [[nodiscard]] std::uint64_t bodies_version() const { return bodies_version_; }

  /// Recomputes the energy when due: it costs O(N^2) on the CPU, so it runs at most about
  /// 10% of the wall time, and only while tracking is on.
  void update_energy();
  /// "track energy (exact, O(N^2))" or "track energy (solver)": the run's energy method.
  [[nodiscard]] std::string energy_label() const;
  bool track_energy = true;
  /// (E + energy lost in collisions - E0) / |E0| per measurement, oldest first.
  [[nodiscard]] const std::vector<float>& drift_history() const { return drift_history_; }
  [[nodiscard]] double last_drift() const { return last_drift_; }

  [[nodiscard]] double steps_per_second() const { return steps_per_second_; }
  /// Per-stage ms per step over the last half second, in pipeline order, the whole step last.
  [[nodiscard]] const std::vector<StageTime>& stage_times() const { return stage_times_; }

 private:
  using Clock = std::chrono::steady_clock;
  void reset_measurements();
  void publish_stage_times();

  ParticleSystem initial_;
  SimulationOptions options_;
  Simulation sim_;
  std::uint64_t total_steps_ = 0;  // over restarts too
  std::uint64_t bodies_version_ = 0;

  // Energy: baseline, history, and when the next measurement is due.
  bool have_baseline_ = false;
  double e0_ = 0, lost0_ = 0;
  double last_drift_ = 0;
  std::vector<float> drift_history_;
  Clock::time_point next_energy_ = Clock::now();

  // Rates: sums of per-phase seconds over a window of about half a second.
  Clock::time_point window_start_ = Clock::now();
  std::uint64_t window_steps_ = 0;
  std::vector<std::pair<std::string, double>> window_seconds_;  // stage -> seconds
  std::vector<std::pair<std::string, double>> last_totals_;     // cumulative at last step
  double steps_per_second_ = 0;
  std::vector<StageTime> stage_times_;
};

}  // namespace nbody::viewer
