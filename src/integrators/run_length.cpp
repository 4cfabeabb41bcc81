// The length of a run (integrator.hpp): every step advances the time, and a run takes at
// most 2^53 steps, checked before it starts; a step that shrinks below the time's
// resolution while it goes stops it. Messages give the smallest workable step.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "nbody/input_error.hpp"
#include "nbody/integrator.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody {

namespace {

/// Of two times, the one of larger magnitude: where doubles are coarsest.
double coarsest(double a, double b) {
  return std::abs(a) >= std::abs(b) ? a : b;
}

/// The smallest step of the block steps (--dt-min's bin) must advance the time at t.
void check_smallest_block_step(const IntegratorOptions& o, double t, double dt) {
  if (!has_bins(o.timestep) || !(o.dt_min > 0)) return;
  const int k = bin_limit(dt, o.dt_min);
  const double h = std::ldexp(dt, -k);
  if (t + h != t) return;
  throw input_error("--dt-min",
                    fmt::format("at t = {} the smallest block step, --dt / 2^{} = {}, does not "
                                "advance the time; a --dt-min of {} or more does",
                                printable(t), k, printable(h), printable(time_resolution(t))),
                    o.dt_min);
}

/// --t-end must lie after the start, both finite.
void check_end_time(double t_start, double t_end) {
  if (!(t_end > t_start) || !std::isfinite(t_end)) {
    throw input_error("--t-end", "must be after the start time " + printable(t_start), t_end);
  }
}

}  // namespace

double time_resolution(double t) {
  const double a = std::abs(t);
  return std::nextafter(a, std::numeric_limits<double>::infinity()) - a;
}

void check_step_advances(double t_first, double t_last, double dt) {
  check_time_step(dt);
  if (!std::isfinite(t_first)) throw input_error("the start time", "must be finite", t_first);
  const double t = coarsest(t_first, t_last);
  if (!std::isfinite(t)) throw input_error("the end time", "must be finite", t);
  // |t| + dt: where the time moves away from 0, doubles are no finer than where it moves
  // toward it, so a step that advances |t| advances every time of the run.
  const double m = std::abs(t);
  if (m + dt != m) return;
  throw input_error("--dt",
                    fmt::format("at t = {} a step of {} does not advance the time; the smallest "
                                "step that does is {}",
                                printable(t), printable(dt), printable(time_resolution(t))),
                    dt);
}

std::uint64_t steps_to_reach(double t_start, double t_end, double dt) {
  check_time_step(dt);
  check_end_time(t_start, t_end);
  check_step_advances(t_start, t_end, dt);
  // The 1e-12 keeps a rounding error in (t_end - t_start) / dt from adding a tiny last step.
  // Checked as a double (inf and huge counts included) before it becomes an integer.
  const double span = t_end - t_start;
  const double count = std::ceil(span / dt * (1 - 1e-12));
  if (!(count <= double(kMaxRunSteps))) {
    const double workable = std::max(
        std::nextafter(span / double(kMaxRunSteps), std::numeric_limits<double>::infinity()),
        time_resolution(coarsest(t_start, t_end)));
    throw input_error("--dt",
                      fmt::format("from t = {} to {} a step of {} takes {} steps, more than a run "
                                  "may take (2^53); the smallest workable step is {}",
                                  printable(t_start), printable(t_end), printable(dt),
                                  printable(count), printable(workable)),
                      dt);
  }
  return std::uint64_t(count);
}

void check_run_until(const IntegratorOptions& o, double t_start, double t_end, double dt) {
  // IAS15 with --ias15-epsilon 0 takes steps of dt, counted as the others'.
  if (o.scheme == IntegratorScheme::Ias15 && o.ias15_epsilon > 0) {
    // Its own steps: how many is not known ahead; the first (dt) must advance the time,
    // and a later one that shrinks below the resolution stops the run (Ias15::step).
    check_time_step(dt);
    check_end_time(t_start, t_end);
    check_step_advances(t_start, t_end, dt);
    return;
  }
  (void)steps_to_reach(t_start, t_end, dt);
  check_smallest_block_step(o, coarsest(t_start, t_end), dt);
}

void check_run_steps(const IntegratorOptions& o, double t_start, std::uint64_t steps, double dt) {
  check_time_step(dt);
  if (steps > kMaxRunSteps) {
    throw input_error("--steps", "more than a run may take (2^53 = 9007199254740992)", steps);
  }
  if (o.scheme == IntegratorScheme::Ias15 && o.ias15_epsilon > 0) {  // the first must advance
    check_step_advances(t_start, t_start, dt);
    return;
  }
  // In long double: steps * dt stays exact enough, and inf says the run leaves the doubles.
  const double t_last = double(static_cast<long double>(t_start) +
                               static_cast<long double>(steps) * static_cast<long double>(dt));
  if (std::isfinite(t_start) && !std::isfinite(t_last)) {
    throw input_error("--steps",
                      fmt::format("{} steps of {} from t = {} go past the largest time a double "
                                  "holds",
                                  steps, printable(dt), printable(t_start)),
                      steps);
  }
  check_step_advances(t_start, t_last, dt);
  check_smallest_block_step(o, coarsest(t_start, t_last), dt);
}

void check_step_during_run(double t, double h, std::string_view where, std::string_view remedy) {
  if (t + h != t) return;
  throw Error(
      fmt::format("{}: at t = {} the step shrank to {}, below the time's resolution "
                  "there ({}); the run stops ({})",
                  where, printable(t), printable(h), printable(time_resolution(t)), remedy));
}

}  // namespace nbody
