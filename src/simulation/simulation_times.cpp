// What a step adds to a Simulation's books: the phases' times (sampled in few-body runs),
// the time steps' counts (timestep_stats()), the collisions' and the decomposition's totals.
#include <chrono>

#include "nbody/simulation.hpp"
#include "simulation/stepper.hpp"

namespace nbody {

// A step of a few bodies takes ~100 ns and a clock read ~20: such runs time one step in
// kTimedStride (the first of each stride), which stands for the whole stride.
constexpr std::size_t kUntimedBodies = 64;
constexpr std::uint64_t kTimedStride = 64;

double Simulation::phase_weight() const {
  if (stepper_->size() > kUntimedBodies) return 1;
  return steps_done_ % kTimedStride == 0 ? double(kTimedStride) : 0.0;
}

void Simulation::count_step(const StepTimes& t, std::chrono::steady_clock::time_point start,
                            double weight) {
  add_times(t, weight);
  if (weight > 0) {
    const double total =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times_.add("integrate", weight * (total - t.gravity_seconds - t.collision_seconds));
  }
  TimestepStats& s = timestep_stats_;
  if (own_steps()) {
    steps_done_ += t.own_steps;
    s.substeps += t.evaluations;
    s.force_evaluations += t.evaluations * size();
    if (t.own_steps > 0) {
      s.dt_min = s.steps == 0 ? t.dt_min : std::min(s.dt_min, t.dt_min);
      s.dt_max = std::max(s.dt_max, t.dt_max);
      s.dt_last = t.dt_last;
    }
    s.steps += t.own_steps;
    s.rejected += t.rejected;
    s.iterations += t.iterations;
    return;
  }
  ++steps_done_;
  if (has_bins(options_.integrator.timestep)) {
    s.substeps += t.substeps;
    s.force_evaluations += t.active_evaluations;
    s.floored += t.floored;
    s.bins = t.bins;
  } else {
    s.substeps += 1;
    s.force_evaluations += size();
  }
}

void Simulation::add_times(const StepTimes& t, double weight) {
  if (t.decomposition.evaluations > 0) {
    DecompositionStats& d = decomposition_;
    d.evaluations += t.decomposition.evaluations;
    d.recuts += t.decomposition.recuts;
    d.migrated += t.decomposition.migrated;
    d.bytes_sent += t.decomposition.bytes_sent;
    d.imbalance = t.decomposition.imbalance;
    d.owned = t.decomposition.owned;
    d.exchange_seconds += t.decomposition.exchange_seconds;
    d.hidden_seconds += t.decomposition.hidden_seconds;
    for (const auto& [part, seconds] : t.decomposition.beside.entries())
      d.beside.add(part, seconds);
    for (const auto& [part, seconds] : t.decomposition.update.entries())
      d.update.add(part, seconds);
  }
  if (weight > 0) {
    for (const auto& [stage, seconds] : t.stages.entries())
      gravity_stages_.add(stage, weight * seconds);
    times_.add("gravity", weight * t.gravity_seconds);
  }
  if (options_.collisions.model != CollisionModel::None) {
    collisions_.add(t.collisions);
    if (weight > 0) times_.add("collisions", weight * t.collision_seconds);
    // Owned bodies: the merges are every rank's (parallel/domain_collisions.hpp sums them).
    if (decomposed()) total_bodies_ -= std::min<std::size_t>(total_bodies_, t.collisions.merges);
  }
}

}  // namespace nbody
