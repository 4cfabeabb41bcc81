// The momentum-conserving hierarchical scheme (hold_steps.hpp).
#include "integrators/hold_steps.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "nbody/input_error.hpp"
#include "nbody/physics/integration.hpp"
#include "nbody/physics/timestep.hpp"

namespace nbody {

namespace {
// Loops over more bodies than this share them among threads (a team costs more than a
// few hundred bodies' kicks).
constexpr std::size_t kParallelBodies = 4096;
}  // namespace

HoldSteps::HoldSteps(const IntegratorOptions& options, const GravityOptions& gravity)
    : eta_(options.eta), dt_min_(options.dt_min), softening_(gravity.softening) {}

void HoldSteps::step(ParticleSystem& ps, double dt, bool potential, GravitySolver& solver,
                     BlockStepCounts& counts) {
  if (ps.has_test_particles())
    throw input_error("--timestep", "not with test particles (--timestep adaptive takes them)",
                      "hierarchical");
  const std::size_t n = ps.size();
  const bool unsoftened = !(softening_ > 0);  // the bins' rule reads |phi|
  potential_ = potential || unsoftened;
  if (!ps.accelerations_valid() || (unsoftened && !ps.potentials_valid())) {
    solver.compute_forces(ps, unsoftened);
    counts.substeps += 1;
    counts.active_evaluations += n;
  }
  assign_bins(ps, dt, counts);
  level_.resize(std::size_t(deepest_) + 1);
  member_.resize(level_.size());
  slow_.resize(level_.size());
  for (int k = 0; k <= deepest_; ++k) {  // S_k (bin k) first, then F_k (deeper bins)
    std::vector<std::uint32_t>& m = member_[std::size_t(k)];
    m.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (bin_[i] == k) m.push_back(std::uint32_t(i));
    slow_[std::size_t(k)] = m.size();
    for (std::size_t i = 0; i < n; ++i)
      if (bin_[i] > k) m.push_back(std::uint32_t(i));
  }
  // Every level's opening forces at the step's start (the bins are new).
  for (int k = 0; k <= deepest_; ++k) evaluate(ps, k, false, solver, counts);
  evolve(ps, 0, dt, true, solver, counts);
  // The levels' last forces, all at the step's end: their sum is every body's acceleration
  // (and potential) from all bodies (bin order: the same sum on every run).
  for (auto* v : {&ps.ax, &ps.ay, &ps.az}) std::fill(v->begin(), v->end(), 0.0);
  if (potential_) ps.potential.assign(n, 0.0);
  for (int k = 0; k <= deepest_; ++k) {
    if (slow_[std::size_t(k)] == 0) continue;
    const ParticleSystem& l = level_[std::size_t(k)];
    const std::vector<std::uint32_t>& m = member_[std::size_t(k)];
    for (std::size_t j = 0; j < m.size(); ++j) {
      ps.ax[m[j]] = exact_add(ps.ax[m[j]], l.ax[j]);
      ps.ay[m[j]] = exact_add(ps.ay[m[j]], l.ay[j]);
      ps.az[m[j]] = exact_add(ps.az[m[j]], l.az[j]);
      if (potential_) ps.potential[m[j]] = exact_add(ps.potential[m[j]], l.potential[j]);
    }
  }
  ps.time += dt;
  ps.set_force_flags(true, potential_);
}

void HoldSteps::assign_bins(const ParticleSystem& ps, double dt, BlockStepCounts& counts) {
  const std::size_t n = ps.size();
  const int k_limit = bin_limit(dt, dt_min_);
  const bool with_phi = !(softening_ > 0);
  bin_.resize(n);
  deepest_ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double wanted = wanted_step(eta_, softening_, ps.ax[i], ps.ay[i], ps.az[i],
                                      with_phi ? ps.potential[i] : 0.0);
    bool floored = false;
    bin_[i] = timestep_bin(wanted, dt, k_limit, &floored);
    counts.floored += floored ? 1 : 0;
    deepest_ = std::max(deepest_, bin_[i]);
  }
  counts.bins.assign(std::size_t(deepest_) + 1, 0);
  for (const int k : bin_) ++counts.bins[std::size_t(k)];
}

void HoldSteps::evaluate(const ParticleSystem& ps, int k, bool potential, GravitySolver& solver,
                         BlockStepCounts& counts) {
  const std::size_t slow = slow_[std::size_t(k)];
  if (slow == 0) return;  // no pair of this level has a slow body: no kick
  ParticleSystem& l = level_[std::size_t(k)];
  const std::vector<std::uint32_t>& m = member_[std::size_t(k)];
  l.dim = ps.dim;
  l.time = ps.time;
  l.resize(m.size());
  for (std::size_t j = 0; j < m.size(); ++j) {
    l.x[j] = ps.x[m[j]];
    l.y[j] = ps.y[m[j]];
    l.z[j] = ps.z[m[j]];
    l.mass[j] = ps.mass[m[j]];
  }
  // The slow bodies active; the fast ones type-1 test particles: every pair with a slow
  // body, none of two fast ones (those are the deeper levels'). No fast body: the solver
  // on the level's bodies as a whole, as the fixed step's.
  l.n_active = slow < m.size() ? slow : ParticleSystem::kAllActive;
  l.test_particle_type = 1;
  solver.compute_forces(l, potential);
  counts.substeps += 1;
  counts.active_evaluations += m.size();
}

void HoldSteps::kick(ParticleSystem& ps, int k, double h) const {
  if (slow_[std::size_t(k)] == 0) return;
  const ParticleSystem& l = level_[std::size_t(k)];
  const std::vector<std::uint32_t>& m = member_[std::size_t(k)];
  const auto count = static_cast<std::ptrdiff_t>(m.size());
#pragma omp parallel for schedule(static) if (m.size() > kParallelBodies)
  for (std::ptrdiff_t j = 0; j < count; ++j) {
    const std::size_t i = m[std::size_t(j)];
    BodyMotion b = load_motion(ps, i);
    nbody::kick(b, l.ax[std::size_t(j)], l.ay[std::size_t(j)], l.az[std::size_t(j)], h);
    store_motion(ps, i, b);
  }
}

void HoldSteps::evolve(ParticleSystem& ps, int k, double h, bool at_end, GravitySolver& solver,
                       BlockStepCounts& counts) {
  const double half = 0.5 * h;
  kick(ps, k, half);  // level k's forces at these positions: the opening or the last closing's
  const std::vector<std::uint32_t>& m = member_[std::size_t(k)];
  const auto slow = static_cast<std::ptrdiff_t>(slow_[std::size_t(k)]);
#pragma omp parallel for schedule(static) if (slow_[std::size_t(k)] > kParallelBodies)
  for (std::ptrdiff_t j = 0; j < slow; ++j) {
    BodyMotion b = load_motion(ps, m[std::size_t(j)]);
    drift(b, h);
    store_motion(ps, m[std::size_t(j)], b);
  }
  if (k < deepest_) {  // H_{k+1} for h: two steps of h/2 (it commutes with the slow drift)
    evolve(ps, k + 1, half, false, solver, counts);
    evolve(ps, k + 1, half, at_end, solver, counts);
  }
  evaluate(ps, k, at_end && potential_, solver, counts);
  kick(ps, k, half);
}

}  // namespace nbody
