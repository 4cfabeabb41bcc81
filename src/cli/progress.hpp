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

  /// Called after every step. energy_drift is asked for only when a line is printed,
  /// and only when recomputing it costs little against the run (it is O(N^2)).
  void update(std::uint64_t step, double sim_time, const std::function<double()>& energy_drift);
  /// Ends the line (newline) if one was shown.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::FILE* out_;
  std::uint64_t total_;
  std::uint64_t first_;
  bool enabled_;
  bool tty_;
  bool shown_ = false;
  Clock::time_point start_;
  Clock::time_point last_print_;
  Clock::time_point last_drift_;
  double drift_cost_ = 0;  // seconds the last drift computation took
  double drift_ = -1;      // last known drift, < 0 when unknown
};

/// Prints "phase  seconds  ms/step  share" for every phase and the total.
void print_timing_table(std::FILE* out, const PhaseTimes& times, std::uint64_t steps);

}  // namespace nbody::cli
