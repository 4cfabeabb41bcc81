// The host Stepper: the CPU gravity solver (direct sum or tree, SIMD + OpenMP), the CPU
// integrators and the collision handler, stepping the host copy of the state in place.
//
// A step is the integrator's: its position update, then one force evaluation, then its
// velocity update, with this stepper's stages:
//   1. collisions: contacts resolved where the integrator asks (the leapfrog: in the middle
//      of its drift, where positions and velocities are synchronised; the others after the
//      position update, seed 001's order); merged bodies leave the state;
//   2. gravity: the solver's accelerations at the positions after the drift, so they
//      stay valid for the diagnostics and the next step at no extra evaluation; on a step
//      asked for them, the potentials too (in the same pass: energies at the solver's cost);
//   3. several processes: each computed its share, one all-reduce sums them.
//
// IAS15 (integrators/ias15.hpp) takes its own steps instead: its force evaluations inside
// a step are gravity alone (15 to 25 of them a step, at positions of its polynomial), and
// after each accepted step come the collision stage and the forces at the new positions,
// as above. Contacts restart its polynomial: the velocities jumped.
#include <algorithm>
#include <array>
#include <chrono>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "collisions/contact_time.hpp"
#include "integrators/block_steps.hpp"
#include "integrators/hold_steps.hpp"
#include "integrators/ias15.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "parallel/domain_collisions.hpp"
#include "parallel/domain_gravity.hpp"
#include "parallel/domain_state.hpp"
#include "simulation/stepper.hpp"

namespace nbody {

namespace {

/// Up to this many bodies IAS15 evaluates forces with the scalar kernel (see HostStepper()).
constexpr std::size_t kFewBodies = 16;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class HostStepper final : public Stepper {
 public:
  HostStepper(const SimulationOptions& options, std::shared_ptr<ForceReducer> reducer)
      : options_(options),
        gravity_(make_gravity_solver(options.gravity)),
        collisions_(make_collision_handler(options.collisions)),
        integrator_(make_integrator(options.integrator)),
        ias15_(
            {.epsilon = options.integrator.ias15_epsilon, .rule = options.integrator.ias15_rule}),
        block_steps_(options.integrator, options.gravity),
        hold_steps_(options.integrator, options.gravity),
        reducer_(std::move(reducer)) {
    // Several processes: each owns its bodies where the decomposition runs (the forces by
    // the ring or the essential trees, the bodies migrating); else every one holds them all,
    // computes its share of the forces, and the shares are summed (a solver that cannot
    // split computes everything everywhere, with nothing to sum).
    if (reducer_ && reducer_->parts() > 1 && options.gravity.device == Device::Cpu &&
        parallel::runs_decomposed(options)) {
      auto domain = parallel::make_domain_gravity(options.gravity, reducer_);
      domain_ = domain.get();
      gravity_ = std::move(domain);
      block_steps_.share_bins(reducer_.get());  // the same substeps on every rank
      // Contacts across the domains' borders: ghosts, each cluster resolved by one rank.
      if (collisions_)
        collisions_ = parallel::make_domain_collisions(
            std::move(collisions_), options.collisions, reducer_,
            [this](const std::vector<std::size_t>& gone) { domain_->bodies_removed(gone); });
    }
    sharing_ = !domain_ && reducer_ && reducer_->parts() > 1 &&
               gravity_->set_share(reducer_->part(), reducer_->parts());
    // Few bodies (up to kFewBodies): the scalar float64 reference instead of the SIMD
    // kernel, which pads each evaluation to blocks of 64 targets (3 bodies cost as much as
    // 64): faster up to ~16 bodies, slower from ~30 (nbody bench small: leapfrog 0.09
    // against 0.35 us a step at N = 3, 4.1 against 2.0 at N = 30; IAS15 alike).
    const GravityOptions& g = options.gravity;
    if (g.algorithm == GravityAlgorithm::Direct && g.kernel == ForceKernel::Fast &&
        resolve_precision(g.precision, g.algorithm) == Precision::Double && !domain_) {
      GravityOptions scalar = g;
      scalar.kernel = ForceKernel::Scalar;
      few_bodies_ = make_gravity_solver(scalar);
      if (sharing_) few_bodies_->set_share(reducer_->part(), reducer_->parts());
    }
  }

  [[nodiscard]] std::string solver_name() const override {
    return state_ ? solver_for(*state_).name() : gravity_->name();
  }

  void upload(ParticleSystem& host) override {
    state_ = &host;
    ias15_.reset();  // the bodies may have been edited
  }

  void step(double dt, bool potential) override {
    if (options_.integrator.timestep == TimestepMode::Adaptive) {
      block_step(dt, potential);
      return;
    }
    if (options_.integrator.timestep == TimestepMode::Hierarchical) {
      hold_step(dt, potential);
      return;
    }
    if (options_.integrator.scheme == IntegratorScheme::Ias15) {
      check_time_step(dt);
      const double t_end = state_->time + dt;
      while (state_->time < t_end) own_step(dt, t_end, potential);
      return;
    }
    state_->invalidate_potentials();  // the bodies move
    potential_wanted_ = potential;
    integrator_->step(
        *state_, [this](ParticleSystem& ps) { timed_gravity(ps, potential_wanted_); }, dt,
        collisions_ ? CollisionStage([this](ParticleSystem& ps) { collide(ps); }) : nullptr);
    potential_wanted_ = false;
    add_stage_times();
  }

  void own_step(double first_dt, double t_limit, bool potential) override {
    if (options_.integrator.scheme != IntegratorScheme::Ias15)
      throw Error("own_step: the integrator takes steps of a given size");
    state_->invalidate_potentials();  // the bodies move
    const Ias15Stats before = ias15_.stats();
    // With collisions, the step ends where the nearest approaching pair could first overlap
    // by 1 % of the smaller radius (it lands there: IAS15's next proposal is kept), so no
    // contact is stepped over.
    constexpr double kContactOvershoot = 0.01;
    if (collisions_)
      t_limit = std::min(
          t_limit, state_->time + collisions::time_to_nearest_contact(*state_, kContactOvershoot));
    const double dt = ias15_.step(
        *state_, [this](ParticleSystem& ps) { timed_gravity(ps, false); }, first_dt, t_limit);
    if (collisions_) {
      const std::size_t n = state_->size();
      const std::uint64_t contacts = times_.collisions.contacts;
      collide(*state_);
      if (times_.collisions.contacts != contacts || state_->size() != n) ias15_.reset();
    }
    timed_gravity(*state_, potential);  // the next step's start, and the diagnostics'
    const Ias15Stats& after = ias15_.stats();
    times_.own_steps += after.steps - before.steps;
    times_.rejected += after.rejected - before.rejected;
    times_.iterations += after.iterations - before.iterations;
    times_.evaluations += after.evaluations - before.evaluations + 1;
    times_.dt_min = times_.dt_last == 0 ? dt : std::min(times_.dt_min, dt);
    times_.dt_max = std::max(times_.dt_max, dt);
    times_.dt_last = dt;
    add_stage_times();
  }

  [[nodiscard]] IntegratorState integrator_state() const override {
    return options_.integrator.scheme == IntegratorScheme::Ias15 ? ias15_.state()
                                                                 : IntegratorState{};
  }

  void set_integrator_state(const IntegratorState& s) override {
    if (s.empty()) return;
    if (options_.integrator.scheme != IntegratorScheme::Ias15 ||
        s.values.size() != 48 * state_->size()) {
      throw Error(fmt::format(
          "--restart: the checkpoint's integrator state ({} values) is not IAS15's for {} bodies",
          s.values.size(), state_->size()));
    }
    ias15_.set_state(s);
  }

  void evaluate(bool potential) override {
    if (!state_->accelerations_valid()) {
      // Gravity alone: the bodies as they are (contacts are resolved by the first step).
      timed_gravity(*state_, potential);
      add_stage_times();
    } else if (potential && !state_->potentials_valid()) {
      evaluate_potentials(*state_);
    }
  }

  void download(ParticleSystem&) override {}  // the host copy is the state

  void download_positions(std::vector<float>& xyz) override { positions_as_float(*state_, xyz); }

  [[nodiscard]] Diagnostics diagnostics(EnergyMethod method) override {
    if (domain_) return owned_diagnostics(method);
    switch (method) {
      case EnergyMethod::Exact:
        return compute_diagnostics(*state_, options_.gravity.G, options_.gravity.softening);
      case EnergyMethod::Solver:
        evaluate(true);
        return diagnostics_from_potentials(*state_);
      default:
        return compute_moments(*state_);
    }
  }

  [[nodiscard]] bool owns_bodies() const override { return domain_ != nullptr; }
  [[nodiscard]] DecompositionState decomposition_state() const override {
    return domain_ ? domain_->state() : DecompositionState{};
  }
  void resume_decomposition(const DecompositionState& state) override {
    if (domain_ && (!state.cuts.empty() || !state.cost.empty())) domain_->resume(state);
  }

  [[nodiscard]] double time() const override { return state_->time; }
  [[nodiscard]] std::size_t size() const override { return state_->size(); }
  [[nodiscard]] std::size_t active_count() const override { return state_->active_count(); }

 private:
  /// diagnostics() of owned bodies (collective): the exact pair sum by the ring (no rank
  /// gathers all N), else each rank's sums all-reduced.
  Diagnostics owned_diagnostics(EnergyMethod method) {
    switch (method) {
      case EnergyMethod::Exact:
        return parallel::exact_diagnostics(*state_, *reducer_, options_.gravity.G,
                                           options_.gravity.softening);
      case EnergyMethod::Solver:
        evaluate(true);
        return parallel::summed_diagnostics(*state_, *reducer_, true);
      default:
        return parallel::summed_diagnostics(*state_, *reducer_, false);
    }
  }

  /// One step of dt in the bins' substeps (block_steps.hpp) with this stepper's stages.
  void block_step(double dt, bool potential) {
    const BlockStepStages stages{
        .collide = collisions_ ? std::function<CollisionStats(ParticleSystem&, const ContactGate&)>(
                                     [this](ParticleSystem& ps, const ContactGate& gate) {
                                       return collide(ps, gate);
                                     })
                               : nullptr,
        .merges = options_.collisions.model == CollisionModel::Merge,
        .all_forces = [this](ParticleSystem& ps, bool phi) { timed_gravity(ps, phi); },
        .active_forces =
            [this](ParticleSystem& ps, bool phi, const std::vector<std::uint32_t>& active) {
              const auto start = phase_timing_ ? std::chrono::steady_clock::now()
                                               : std::chrono::steady_clock::time_point{};
              solver_for(ps).compute_forces_active(ps, phi, active);
              if (sharing_) sum_shares(ps, phi, &active);
              if (phase_timing_) times_.gravity_seconds += seconds_since(start);
            },
        .potentials = [this](ParticleSystem& ps) { evaluate_potentials(ps); },
        .redistribute = domain_ ? std::function<void(ParticleSystem&)>(
                                      [this](ParticleSystem& ps) { domain_->redistribute(ps); })
                                : nullptr};
    block_steps_.step(*state_, dt, potential, stages, fresh_counts());
    add_step_counts();
  }

  /// block_counts_ (kept: its bins' room is reused every step) zeroed for a step.
  BlockStepCounts& fresh_counts() {
    block_counts_.substeps = block_counts_.active_evaluations = block_counts_.floored = 0;
    return block_counts_;
  }
  /// A step with bins: its counts and stage times to the books.
  void add_step_counts() {
    times_.substeps += block_counts_.substeps;
    times_.active_evaluations += block_counts_.active_evaluations;
    times_.floored += block_counts_.floored;
    times_.bins.assign(block_counts_.bins.begin(), block_counts_.bins.end());
    add_stage_times();
  }

  /// One step of dt of the momentum-conserving hierarchical scheme (hold_steps.hpp).
  void hold_step(double dt, bool potential) {
    if (sharing_ || domain_)
      throw input_error("--timestep", "runs in one process for now (not under mpirun)",
                        "hierarchical");
    const auto start =
        phase_timing_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    hold_steps_.step(*state_, dt, potential, solver_for(*state_), fresh_counts());
    if (phase_timing_) times_.gravity_seconds += seconds_since(start);
    add_step_counts();
  }

  CollisionStats collide(ParticleSystem& ps, const ContactGate& gate = {}) {
    const auto start =
        phase_timing_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    CollisionStats stats = collisions_->resolve(ps, gate);
    times_.collisions.add(stats);
    if (phase_timing_) times_.collision_seconds += seconds_since(start);
    return stats;
  }

  /// The solver for ps: the run's, or with few bodies the scalar one.
  [[nodiscard]] GravitySolver& solver_for(const ParticleSystem& ps) const {
    // With test particles: the active bodies' sum (the test particles' is the SIMD kernel's).
    return few_bodies_ && ps.active_count() <= kFewBodies ? *few_bodies_ : *gravity_;
  }

  /// The solver's forces (and potentials), the processes' shares summed.
  void gravity(ParticleSystem& ps, bool potential) {
    solver_for(ps).compute_forces(ps, potential);
    if (sharing_) sum_shares(ps, potential);
  }

  /// gravity(), timed as the step's gravity.
  void timed_gravity(ParticleSystem& ps, bool potential) {
    if (phase_timing_) {
      const auto start = std::chrono::steady_clock::now();
      gravity(ps, potential);
      times_.gravity_seconds += seconds_since(start);
    } else {
      gravity(ps, potential);
    }
    if (domain_) {
      const parallel::DomainStats d = domain_->domain_stats();
      DecompositionStats& sum = times_.decomposition;
      sum.evaluations += 1;
      sum.recuts += d.recut ? 1 : 0;
      sum.migrated += d.migration.received;
      sum.bytes_sent += d.bytes_sent;
      sum.imbalance = d.imbalance;
      sum.owned = d.bodies;
    }
  }

  /// The potentials at the current positions, by gravity alone (the bodies have had their
  /// collision stage); the accelerations are kept as they were, bit for bit. Timed by the
  /// caller (Simulation's "diagnostics" phase), not as a step's gravity.
  void evaluate_potentials(ParticleSystem& ps) {
    for (int k = 0; k < 3; ++k) kept_[k] = *axes(ps)[k];
    if (domain_) {
      domain_->compute_forces_in_place(ps, true);  // no migration: the kept order holds
    } else {
      gravity(ps, true);
    }
    for (int k = 0; k < 3; ++k) axes(ps)[k]->swap(kept_[k]);
    ps.set_accelerations_valid();
  }

  static std::array<std::vector<double>*, 3> axes(ParticleSystem& ps) {
    return {&ps.ax, &ps.ay, &ps.az};
  }

  /// One all-reduce of ax, ay, az (and the potentials), packed: every process gets every
  /// body's result (with `active`, those bodies' only: the others are not computed).
  void sum_shares(ParticleSystem& ps, bool potential,
                  const std::vector<std::uint32_t>* active = nullptr) {
    std::vector<std::vector<double>*> parts{&ps.ax, &ps.ay, &ps.az};
    if (potential) parts.push_back(&ps.potential);
    const std::size_t n = active ? active->size() : ps.size();
    auto body = [active](std::size_t k) { return active ? std::size_t((*active)[k]) : k; };
    packed_.resize(parts.size() * n);
    for (std::size_t p = 0; p < parts.size(); ++p) {
      for (std::size_t k = 0; k < n; ++k) packed_[p * n + k] = (*parts[p])[body(k)];
    }
    reducer_->sum(packed_.data(), packed_.size());
    for (std::size_t p = 0; p < parts.size(); ++p) {
      for (std::size_t k = 0; k < n; ++k) (*parts[p])[body(k)] = packed_[p * n + k];
    }
  }

  /// The last evaluation's split (tree solvers: build and walk).
  void add_stage_times() {
    if (options_.gravity.algorithm != GravityAlgorithm::Tree || options_.gravity.G == 0) return;
    const SolverStats st = gravity_->stats();
    if (st.build_stages.empty()) times_.stages.add("build", st.build_seconds);
    for (const auto& [stage, seconds] : st.build_stages) times_.stages.add(stage, seconds);
    times_.stages.add("walk", st.walk_seconds);
  }

  SimulationOptions options_;
  std::unique_ptr<GravitySolver> gravity_;
  BlockStepCounts block_counts_;               // adaptive and hierarchical steps
  std::unique_ptr<GravitySolver> few_bodies_;  // kernel fast, float64: up to kFewBodies bodies
  std::unique_ptr<CollisionHandler> collisions_;
  std::unique_ptr<Integrator> integrator_;
  Ias15 ias15_;             // --integrator ias15: its own steps (own_step)
  BlockSteps block_steps_;  // adaptive time steps
  HoldSteps hold_steps_;    // hierarchical time steps
  std::shared_ptr<ForceReducer> reducer_;
  parallel::DomainGravity* domain_ = nullptr;  // gravity_, when this process owns its bodies
  bool sharing_ = false;
  bool potential_wanted_ = false;  // the evaluations of this step compute the potentials
  ParticleSystem* state_ = nullptr;
  std::vector<double> packed_;
  std::array<std::vector<double>, 3>
      kept_;  // the accelerations, kept across a potential-only evaluation
};

}  // namespace

std::unique_ptr<Stepper> make_host_stepper(const SimulationOptions& options,
                                           std::shared_ptr<ForceReducer> reducer) {
  return std::make_unique<HostStepper>(options, std::move(reducer));
}

std::unique_ptr<Stepper> make_stepper(const SimulationOptions& options,
                                      std::shared_ptr<ForceReducer> reducer) {
  if (options.gravity.device == Device::Gpu)
    return make_device_stepper(options, std::move(reducer));
  return make_host_stepper(options, std::move(reducer));
}

}  // namespace nbody
