#pragma once
// The live progress line of long runs and the closing per-phase timing table.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "nbody/phase_times.hpp"

namespace nbody::cli {

class ProgressLine {
 public:
  /// out: where the line goes (stderr when stdout carries JSON). Nothing is shown for
  /// runs shorter than about two seconds, or when enabled is false.
  /// first_step: the step the run starts from (a restart), for the rate and the ETA.
  ProgressLine(std::FILE* out, std::uint64_t total_steps, bool enabled,
               std::uint64_t first_step = 0);

  /// Measures the progress by simulated time from t_start to t_end instead (for
  /// integrators that choose their own steps: their count is not known ahead).
  void by_time(double t_start, double t_end) {
    t_start_ = t_start;
    t_end_ = t_end;
  }
  /// Called after every step. energy_drift is asked for only when a line is printed,
  /// and only when recomputing it costs little against the run (the exact energy is
  /// O(N^2)); an empty function keeps the last drift shown.
  void update(std::uint64_t step, double sim_time, const std::function<double()>& energy_drift);
  /// Whether an update() now would print a line with a new drift: the run loop asks for
  /// the solver's potentials on the step before, so the drift then costs O(N).
  [[nodiscard]] bool wants_energy();
  /// What one energy costs (seconds: the run's start energy), so that even the first one
  /// on the line waits until it is a small share of the time.
  void set_energy_cost(double seconds) { drift_cost_ = seconds; }
  /// Ends the line (newline) if one was shown.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  /// Whether a line is due at `now`, and whether its drift should be recomputed.
  [[nodiscard]] bool line_due(Clock::time_point now) const;
  [[nodiscard]] bool drift_due(Clock::time_point now) const;
  /// Whether this call should read the clock: one call in stride_, the stride doubling
  /// while the reads come less than a millisecond apart (a few-body step takes ~100 ns, a
  /// clock read ~20 ns), halving when they come more than 20 ms apart.
  [[nodiscard]] bool clock_due();
  std::FILE* out_;
  std::uint64_t total_;
  std::uint64_t first_;
  bool enabled_;
  bool tty_;
  bool shown_ = false;
  Clock::time_point start_;
  Clock::time_point last_print_;
  Clock::time_point last_drift_;
  double drift_cost_ = 0;           // seconds the last drift computation took
  double drift_ = -1;               // last known drift, < 0 when unknown
  double t_start_ = 0, t_end_ = 0;  // by_time(): the span of simulated time
  std::uint64_t calls_ = 0, stride_ = 1;
  Clock::time_point last_read_;
};

/// Prints "phase  seconds  ms/step  share" for every phase and the total.
void print_timing_table(std::FILE* out, const PhaseTimes& times, std::uint64_t steps);

}  // namespace nbody::cli
