#include "integrators/block_steps.hpp"

#include <algorithm>
#include <cmath>

#include "nbody/physics/integration.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody {

namespace {

// The per-body loops are memory-bound; threads pay off only for large N.
constexpr std::size_t kParallelThreshold = 100000;

double phi_of(const ParticleSystem& ps, std::size_t i) {
  return ps.potential.size() == ps.size() ? ps.potential[i] : 0.0;
}

void kick_body(ParticleSystem& ps, std::size_t i, double h) {
  BodyMotion b = load_motion(ps, i);
  kick(b, ps.ax[i], ps.ay[i], ps.az[i], h);
  store_motion(ps, i, b);
}

}  // namespace

BlockSteps::BlockSteps(const IntegratorOptions& options, double softening)
    : eta_(options.eta), dt_min_(options.dt_min), softening_(softening) {}

std::uint64_t BlockSteps::next_tick(std::uint64_t tick) const {
  std::uint64_t next = kTicksPerStep;
  for (int k = 0; k <= kMaxTimestepBin; ++k) {
    if (histogram_[std::size_t(k)] == 0) continue;
    const std::uint64_t len = bin_ticks(k);
    next = std::min(next, (tick / len + 1) * len);
  }
  return next;
}

void BlockSteps::collide(ParticleSystem& ps, const BlockStepStages& stages) {
  if (!stages.collide) return;
  ids_ = ps.id;
  stages.collide(ps);
  if (ps.size() == ids_.size()) return;
  // Merges removed bodies; the others kept their order, so their ids are a subsequence.
  std::size_t j = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    while (ids_[j] != ps.id[i]) --histogram_[bin_[j++]];
    bin_[i] = bin_[j++];
  }
  for (; j < ids_.size(); ++j) --histogram_[bin_[j]];
  bin_.resize(ps.size());
}

void BlockSteps::kick_active(ParticleSystem& ps, double dt, std::uint64_t tick, int k_limit,
                             BlockStepCounts& counts) {
  const bool last = tick == kTicksPerStep;
  std::uint64_t floored = 0;
  for (const std::uint32_t i : active_) {
    const int old_bin = bin_[i];
    kick_body(ps, i, bin_half_step(dt, old_bin));  // the closing kick, with the old step
    if (last) continue;                            // synchronised: the next step assigns bins
    bool fl = false;
    const double wanted =
        wanted_step(eta_, softening_, ps.ax[i], ps.ay[i], ps.az[i], phi_of(ps, i));
    const int k = next_bin(timestep_bin(wanted, dt, k_limit, &fl), old_bin, tick);
    floored += fl ? 1 : 0;
    --histogram_[std::size_t(old_bin)];
    ++histogram_[std::size_t(k)];
    bin_[i] = std::uint8_t(k);
    kick_body(ps, i, bin_half_step(dt, k));  // the opening kick of its next step
  }
  counts.floored += floored;
}

namespace {
/// x += v h for every body.
void drift_all(ParticleSystem& ps, double h) {
  const std::size_t m = ps.size();
#pragma omp parallel for schedule(static) if (m > kParallelThreshold)
  for (std::size_t i = 0; i < m; ++i) {
    BodyMotion b = load_motion(ps, i);
    drift(b, h);
    store_motion(ps, i, b);
  }
}
}  // namespace

void BlockSteps::step(ParticleSystem& ps, double dt, bool potential, const BlockStepStages& stages,
                      BlockStepCounts& counts) {
  const bool needs_phi = !(softening_ > 0);  // the rule without softening uses phi
  if (!ps.accelerations_valid()) {
    stages.all_forces(ps, needs_phi);  // gravity alone: contacts wait for the first drift
  } else if (needs_phi && !ps.potentials_valid()) {
    stages.potentials(ps);
  }
  const std::size_t n = ps.size();
  const int k_limit = bin_limit(dt, dt_min_);

  // Synchronised: every body takes the bin its acceleration asks for, and its opening kick.
  bin_.resize(n);
  histogram_.assign(kMaxTimestepBin + 1, 0);
  std::uint64_t floored = 0;
#pragma omp parallel for schedule(static) reduction(+ : floored) if (n > kParallelThreshold)
  for (std::size_t i = 0; i < n; ++i) {
    bool fl = false;
    const double wanted =
        wanted_step(eta_, softening_, ps.ax[i], ps.ay[i], ps.az[i], phi_of(ps, i));
    const int k = timestep_bin(wanted, dt, k_limit, &fl);
    floored += fl ? 1 : 0;
    bin_[i] = std::uint8_t(k);
    kick_body(ps, i, bin_half_step(dt, k));
  }
  counts.floored += floored;
  for (std::size_t i = 0; i < n; ++i) ++histogram_[bin_[i]];

  std::uint64_t tick = 0;
  while (tick < kTicksPerStep) {
    const std::uint64_t next = next_tick(tick);
    const double h = exact_mul(dt, std::ldexp(double(next - tick), -kMaxTimestepBin));
    // With collisions the drift is split around them (time-symmetric, as the fixed
    // leapfrog's: scheme_step.hpp); without, one drift (the same bits as before).
    if (stages.collide) {
      drift_all(ps, 0.5 * h);
      collide(ps, stages);
      drift_all(ps, 0.5 * h);
    } else {
      drift_all(ps, h);
    }
    tick = next;
    ps.invalidate_potentials();  // the bodies moved
    active_.clear();
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (bin_active_at(bin_[i], tick)) active_.push_back(std::uint32_t(i));
    }
    const bool last = tick == kTicksPerStep;
    stages.active_forces(ps, needs_phi || (last && potential), active_);
    kick_active(ps, dt, tick, k_limit, counts);
    ++counts.substeps;
    counts.active_evaluations += active_.size();
  }
  // Every body was active at the last tick: the accelerations (and the potentials when
  // computed) are current for all.
  ps.set_accelerations_valid();
  if (needs_phi || potential) {
    ps.set_potentials_valid();
  } else {
    ps.invalidate_potentials();
  }
  ps.time += dt;
  std::size_t deepest = 0;
  for (std::size_t k = 0; k < histogram_.size(); ++k) {
    if (histogram_[k] > 0) deepest = k;
  }
  counts.bins.assign(histogram_.begin(), histogram_.begin() + std::ptrdiff_t(deepest + 1));
}

}  // namespace nbody
