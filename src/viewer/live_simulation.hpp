#pragma once
// The simulation behind the window: a Simulation stepped a few steps per frame, rebuilt
// from the current bodies when a solver setting changes, with what the Performance panel
// shows (steps per second, ms per stage, the energy drift over time).
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

/// Everything Simulation is built from (what the Settings panel edits).
struct SolverSettings {
  GravityOptions gravity;
  IntegratorOptions integrator;
  CollisionOptions collisions;
};

/// One row of the Performance panel: a stage's milliseconds per step and share of the step.
struct StageTime {
  std::string name;
  double ms = 0;
  double share = 0;  // of the whole step, in [0, 1]
};

class LiveSimulation {
 public:
  /// Throws nbody::Error for settings Simulation rejects.
  LiveSimulation(ParticleSystem initial, const SolverSettings& settings);

  /// Rebuilds the Simulation from the current bodies with new settings. On nbody::Error the
  /// old one stays and the message is returned (shown in the Settings panel); "" on success.
  std::string apply(const SolverSettings& settings);
  /// Back to the initial bodies, with the current settings.
  std::string restart();
  [[nodiscard]] const SolverSettings& settings() const { return settings_; }

  /// Runs `steps` steps of size dt and updates the rates and stage times.
  void step(int steps, double dt);
  [[nodiscard]] std::uint64_t steps_done() const { return total_steps_; }

  /// The bodies, for drawing (never marks the GPU copy stale).
  [[nodiscard]] const ParticleSystem& particles() const;
  /// The bodies, to edit (spawning): the GPU path uploads them before the next step; the
  /// energy baseline restarts since the system changed.
  [[nodiscard]] ParticleSystem& edit_particles();
  [[nodiscard]] Simulation& simulation() { return sim_; }
  [[nodiscard]] std::size_t size() const { return sim_.size(); }

  /// Recomputes the energy when due: it costs O(N^2) on the CPU, so it runs at most about
  /// 10% of the wall time, and only while tracking is on.
  void update_energy();
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
  SolverSettings settings_;
  Simulation sim_;
  std::uint64_t total_steps_ = 0;

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
