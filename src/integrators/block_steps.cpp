#include "integrators/block_steps.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "integrators/scheme_step.hpp"
#include "nbody/physics/collision_response.hpp"
#include "nbody/physics/integration.hpp"
#include "nbody/physics/pair_force.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody {

namespace {

// The per-body loops are memory-bound; threads pay off only for large N (and below, no
// OpenMP region at all: for_bodies, scheme_step.hpp).
using detail::for_bodies;
using detail::kParallelThreshold;

double phi_of(const ParticleSystem& ps, std::size_t i) {
  return ps.potential.size() == ps.size() ? ps.potential[i] : 0.0;
}

void kick_body(ParticleSystem& ps, std::size_t i, double h) {
  BodyMotion b = load_motion(ps, i);
  kick(b, ps.ax[i], ps.ay[i], ps.az[i], h);
  store_motion(ps, i, b);
}

}  // namespace

BlockSteps::BlockSteps(const IntegratorOptions& options, const GravityOptions& gravity)
    : eta_(options.eta),
      dt_min_(options.dt_min),
      softening_(gravity.softening),
      criterion_(options.timestep_criterion),
      G_(gravity.G),
      dim_(gravity.dim) {}

double BlockSteps::wanted(const ParticleSystem& ps, std::size_t i) const {
  if (criterion_ == TimestepCriterion::Dynamical)
    return wanted_step_dynamical(eta_, omega2_[i], ps.ax[i], ps.ay[i], ps.az[i], phi_of(ps, i));
  if (criterion_ == TimestepCriterion::Jerk)
    return wanted_step_jerk(eta_, ps.ax[i], ps.ay[i], ps.az[i], jerk_[i], 0, 0);
  return wanted_step(eta_, softening_, ps.ax[i], ps.ay[i], ps.az[i], phi_of(ps, i));
}

void BlockSteps::update_density(const ParticleSystem& ps) {
  if (criterion_ == TimestepCriterion::Dynamical)
    density_.compute(ps, dim_, G_, softening_, omega2_);
}

void BlockSteps::update_jerk(const ParticleSystem& ps, const std::vector<std::uint32_t>* list) {
  if (criterion_ != TimestepCriterion::Jerk) return;
  const std::size_t n = ps.size();
  jerk_.resize(n);
  const std::size_t targets = list ? list->size() : n;
  const double eps2 = softening_ * softening_;
  auto one = [&](std::size_t k) {
    const std::size_t i = list ? (*list)[k] : k;
    double jx = 0, jy = 0, jz = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      accumulate_pair_jerk(ps.x[j] - ps.x[i], ps.y[j] - ps.y[i], ps.z[j] - ps.z[i],
                           ps.vx[j] - ps.vx[i], ps.vy[j] - ps.vy[i], ps.vz[j] - ps.vz[i],
                           ps.mass[j], eps2, jx, jy, jz);
    }
    jerk_[i] = std::abs(G_) * std::sqrt(jx * jx + jy * jy + jz * jz);
  };
  // Each target sums every body: threads from a few thousand pair terms a thread.
  if (targets * n > 1u << 16) {
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t k = 0; k < targets; ++k) one(k);
  } else {
    for (std::size_t k = 0; k < targets; ++k) one(k);
  }
}

void BlockSteps::sync_bins(BlockStepCounts& counts) {
  if (group_ == nullptr) {
    global_ = histogram_;
  } else {
    // Counts below 2^53: exact as doubles, and every rank gets the same sums.
    std::vector<double> v(histogram_.begin(), histogram_.end());
    v.push_back(double(pending_active_));
    v.push_back(double(pending_floored_));
    group_->sum(v.data(), v.size());
    global_.assign(v.begin(), v.end() - 2);
    pending_active_ = std::uint64_t(v[v.size() - 2]);
    pending_floored_ = std::uint64_t(v.back());
  }
  counts.active_evaluations += std::exchange(pending_active_, 0);
  counts.floored += std::exchange(pending_floored_, 0);
}

std::uint64_t BlockSteps::next_tick(std::uint64_t tick) const {
  std::uint64_t next = kTicksPerStep;
  for (int k = 0; k <= kMaxTimestepBin; ++k) {
    if (global_[std::size_t(k)] == 0) continue;
    const std::uint64_t len = bin_ticks(k);
    next = std::min(next, (tick / len + 1) * len);
  }
  return next;
}

int BlockSteps::deepest_bin() const {
  int deepest = 0;
  for (int k = 0; k <= kMaxTimestepBin; ++k) {
    if (global_[std::size_t(k)] > 0) deepest = k;
  }
  return deepest;
}

void BlockSteps::collide(ParticleSystem& ps, const BlockStepStages& stages, double dt,
                         std::uint64_t tick, std::uint64_t next, int deepest) {
  ids_ = ps.id;
  if (stages.merges) {
    move_velocities(ps, dt, tick, next, 1.0);
    kept_[0] = ps.ax, kept_[1] = ps.ay, kept_[2] = ps.az, kept_[3] = ps.mass;
  }
  const CollisionStats stats = stages.collide(ps, ContactGate{bin_.data(), deepest});
  if (ps.size() != ids_.size()) {
    // Merges removed bodies; the others kept their order, so their ids are a subsequence.
    std::size_t j = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      while (ids_[j] != ps.id[i]) --histogram_[bin_of(bin_[j++])];
      bin_[i] = bin_[j++];
    }
    for (; j < ids_.size(); ++j) --histogram_[bin_of(bin_[j])];
    bin_.resize(ps.size());
  }
  if (stages.merges) {
    if (!stats.merged.empty()) merged_accelerations(ps, stats.merged);
    move_velocities(ps, dt, tick, next, -1.0);
  }
}

void BlockSteps::move_velocities(ParticleSystem& ps, double dt, std::uint64_t tick,
                                 std::uint64_t next, double sign) const {
  const std::size_t n = ps.size();
  for_bodies(n, [&](std::size_t i) {
    const double offset = stage_offset(bin_of(bin_[i]), tick, next, dt);
    if (offset != 0) kick_body(ps, i, exact_mul(sign, offset));  // 0: the deepest bin
  });
}

void BlockSteps::merged_accelerations(ParticleSystem& ps, const std::vector<MergeEvent>& merged) {
  nbody::merged_accelerations(ids_, kept_, merged, ps);
}

void merged_accelerations(const std::vector<std::uint64_t>& ids, std::vector<double> (&kept)[4],
                          const std::vector<MergeEvent>& merged, ParticleSystem& after) {
  std::unordered_map<std::uint64_t, std::size_t> before;  // id -> index before the stage
  for (std::size_t j = 0; j < ids.size(); ++j) before.emplace(ids[j], j);
  std::vector<double>& mass = kept[3];
  std::vector<char> changed(ids.size(), 0);
  for (const MergeEvent& e : merged) {  // in order: a body may merge again
    const std::size_t k = before.at(e.kept), g = before.at(e.absorbed);
    for (int c = 0; c < 3; ++c)
      kept[c][k] = merged_acceleration(kept[c][k], kept[c][g], mass[k], mass[g]);
    mass[k] += mass[g];
    changed[k] = 1;
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    const std::size_t j = before.at(after.id[i]);
    if (!changed[j]) continue;
    after.ax[i] = kept[0][j];
    after.ay[i] = kept[1][j];
    after.az[i] = kept[2][j];
  }
}

void BlockSteps::kick_active(ParticleSystem& ps, double dt, std::uint64_t tick, int k_limit,
                             int deepest) {
  const bool last = tick == kTicksPerStep;
  std::uint64_t floored = 0;
  // The jerk criterion reads the velocities: every closing kick first (the others' are
  // independent of the order), then the active bodies' jerks.
  const bool closed_first = criterion_ == TimestepCriterion::Jerk && !last;
  if (closed_first) {
    for (const std::uint32_t i : active_) kick_body(ps, i, bin_half_step(dt, bin_of(bin_[i])));
    update_jerk(ps, &active_);
  }
  for (const std::uint32_t i : active_) {
    const std::uint8_t byte = bin_[i];
    const int old_bin = bin_of(byte);
    if (!closed_first) kick_body(ps, i, bin_half_step(dt, old_bin));  // closing, the old step
    if (last) continue;  // synchronised: the next step assigns bins
    bool fl = false;
    const int k = contact_bin(
        next_bin(timestep_bin(wanted(ps, i), dt, k_limit, &fl), old_bin, tick), byte, deepest);
    floored += fl ? 1 : 0;
    --histogram_[std::size_t(old_bin)];
    ++histogram_[std::size_t(k)];
    bin_[i] = std::uint8_t(k);
    kick_body(ps, i, bin_half_step(dt, k));  // the opening kick of its next step
  }
  pending_floored_ += floored;
}

namespace {
/// x += v h for every body.
void drift_all(ParticleSystem& ps, double h) {
  const std::size_t m = ps.size();
  for_bodies(m, [&ps, h](std::size_t i) {
    BodyMotion b = load_motion(ps, i);
    drift(b, h);
    store_motion(ps, i, b);
  });
}
}  // namespace

void BlockSteps::step(ParticleSystem& ps, double dt, bool potential, const BlockStepStages& stages,
                      BlockStepCounts& counts) {
  // The acceleration rule without softening, and the dynamical one, use phi.
  const bool needs_phi = criterion_ == TimestepCriterion::Dynamical ||
                         (criterion_ == TimestepCriterion::Acceleration && !(softening_ > 0));
  if (!ps.accelerations_valid()) {
    stages.all_forces(ps, needs_phi);  // gravity alone: contacts wait for the first drift
  } else {
    if (stages.redistribute) stages.redistribute(ps);
    if (needs_phi && !ps.potentials_valid()) stages.potentials(ps);
  }
  const std::size_t n = ps.size();
  const int k_limit = bin_limit(dt, dt_min_);
  update_density(ps);
  update_jerk(ps, nullptr);

  // Synchronised: every body takes the bin its acceleration asks for, and its opening kick.
  bin_.resize(n);
  histogram_.assign(kMaxTimestepBin + 1, 0);
  std::uint64_t floored = 0;
  auto assign = [&](std::size_t i) {
    bool fl = false;
    const int k = timestep_bin(wanted(ps, i), dt, k_limit, &fl);
    bin_[i] = std::uint8_t(k);
    kick_body(ps, i, bin_half_step(dt, k));
    return fl ? 1 : 0;
  };
  if (n > kParallelThreshold) {  // no OpenMP region below: its entry costs a small step
#pragma omp parallel for schedule(static) reduction(+ : floored)
    for (std::size_t i = 0; i < n; ++i) floored += assign(i);
  } else {
    for (std::size_t i = 0; i < n; ++i) floored += assign(i);
  }
  pending_floored_ += floored;
  for (std::size_t i = 0; i < n; ++i) ++histogram_[bin_[i]];

  std::uint64_t tick = 0;
  while (tick < kTicksPerStep) {
    sync_bins(counts);  // every rank's bins (collective in a decomposed run)
    const std::uint64_t next = next_tick(tick);
    const double h = exact_mul(dt, std::ldexp(double(next - tick), -kMaxTimestepBin));
    // The substep is the step of the deepest bin: the collision stage in the middle of the
    // drift is the middle of those bodies' steps (time-symmetric, as in the fixed leapfrog:
    // scheme_step.hpp), and only their contacts are resolved there. Without collisions one
    // drift (the same bits as before).
    const int deepest = deepest_bin();
    // A body whose step shrank below the time's resolution (at the step's end, where the
    // doubles are coarsest) stops the run: its substeps would not be times at all.
    check_step_during_run(ps.time + dt, std::ldexp(dt, -deepest), "--timestep adaptive",
                          "a --dt-min of at least that resolution keeps the steps above it");
    if (stages.collide) {
      drift_all(ps, 0.5 * h);
      collide(ps, stages, dt, tick, next, deepest);
      drift_all(ps, 0.5 * h);
    } else {
      drift_all(ps, h);
    }
    tick = next;
    ps.invalidate_potentials();  // the bodies moved
    active_.clear();
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (bin_active_at(bin_of(bin_[i]), tick)) active_.push_back(std::uint32_t(i));
    }
    const bool last = tick == kTicksPerStep;
    stages.active_forces(ps, needs_phi || (last && potential), active_);
    if (!last) update_density(ps);  // at the last tick the next step's start does it
    kick_active(ps, dt, tick, k_limit, deepest);
    ++counts.substeps;
    pending_active_ += active_.size();
  }
  sync_bins(counts);  // the last substep's counts, and the bins the step ends with
  // Every body was active at the last tick: the accelerations (and the potentials when
  // computed) are current for all.
  ps.set_force_flags(true, needs_phi || potential);
  ps.time += dt;
  counts.bins.assign(global_.begin(), global_.begin() + std::ptrdiff_t(deepest_bin() + 1));
}

}  // namespace nbody
