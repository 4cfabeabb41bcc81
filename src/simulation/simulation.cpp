#include "nbody/simulation.hpp"
#include "nbody/input_error.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "nbody/error.hpp"
#include "parallel/domain_gravity.hpp"
#include "parallel/domain_state.hpp"
#include "simulation/stepper.hpp"

namespace nbody {

namespace {

/// Bodies need radii to collide.
void check_radii(const SimulationOptions& o, const ParticleSystem& ps) {
  validate(o.collisions);
  if (o.collisions.model != CollisionModel::None && !ps.empty() && !ps.has_radii()) {
    throw input_error("--collisions",
                      "every body has radius 0 (give radii in the 8th column of the "
                      "input file, or --radius R)",
                      to_string(o.collisions.model));
  }
}

/// IAS15 needs what its machine-precision steps rest on: exact float64 forces on the CPU.
void check_integrator_options(const SimulationOptions& o) {
  validate(o.integrator);
  if (o.integrator.timestep == TimestepMode::Hierarchical) {
    if (o.gravity.device == Device::Gpu)
      throw input_error("--timestep", "runs on the CPU (--device cpu) for now", "hierarchical");
    if (o.collisions.model != CollisionModel::None)
      throw input_error("--collisions", "not with --timestep hierarchical (adaptive takes them)",
                        to_string(o.collisions.model));
  }
  if (has_bins(o.integrator.timestep) &&
      o.integrator.timestep_criterion == TimestepCriterion::Jerk) {
    // The jerk is summed over every pair, beside the forces (block_steps.cpp).
    if (o.gravity.device == Device::Gpu)
      throw input_error("--timestep-criterion", "runs on the CPU (--device cpu) for now", "jerk");
    if (o.gravity.algorithm != GravityAlgorithm::Direct)
      throw input_error("--timestep-criterion",
                        "needs --gravity direct (the jerk is summed over every pair)", "jerk");
  }
  if (o.integrator.scheme != IntegratorScheme::Ias15) return;
  const GravityOptions& g = o.gravity;
  if (g.device == Device::Gpu) {
    throw input_error("--integrator",
                      "runs on the CPU (--device cpu): its steps are few-body float64 "
                      "force evaluations, 15 to 25 a step, too small to fill a GPU",
                      "ias15");
  }
  if (g.algorithm == GravityAlgorithm::Tree) {
    throw input_error("--integrator",
                      "needs --gravity direct (the tree's force errors, 1e-3 to 1e-7, "
                      "would swamp steps accurate to machine precision)",
                      "ias15");
  }
  if (g.algorithm == GravityAlgorithm::Direct &&
      resolve_precision(g.precision, g.algorithm) == Precision::Float) {
    throw input_error("--integrator", "needs --precision double (float64 forces)", "ias15");
  }
}

/// Whether two sets of gravity options give the same accelerations (the thread count aside).
bool same_forces(const GravityOptions& a, const GravityOptions& b) {
  return a.algorithm == b.algorithm && a.kernel == b.kernel && a.device == b.device &&
         a.precision == b.precision && a.G == b.G && a.softening == b.softening &&
         a.theta == b.theta && a.quadrupole == b.quadrupole && a.mac == b.mac &&
         a.alpha == b.alpha && a.dim == b.dim && a.block_size == b.block_size &&
         a.deterministic == b.deterministic;
}

/// The method Auto stands for in this run; without gravity (none, or G = 0) the
/// potential is 0, which the solver gives at no cost.
EnergyMethod run_energy_method(const SimulationOptions& o, std::size_t n) {
  if (o.energy == EnergyMethod::Auto && o.gravity.G == 0) return EnergyMethod::Solver;
  return resolve_energy_method(o.energy, o.gravity.algorithm, n);
}

/// The stepper's options: --threads 0 resolved for n bodies a process (default_threads());
/// options_ keeps the 0 the user gave.
SimulationOptions with_run_threads(SimulationOptions o, std::size_t n) {
  o.gravity.threads = default_threads(o.gravity, n);
  if (o.collisions.threads == 0) o.collisions.threads = o.gravity.threads;
  return o;
}

/// The bodies whose direct sum costs what a step of ps costs: with test particles the forces
/// are ~ n_active N pairs, so sqrt(n_active N) (10^5 test particles around five planets are
/// serial work: two threads took 2x longer on the 2-core machine, nbody bench
/// test-particles; docs/test-particles.md).
std::size_t work_bodies(const ParticleSystem& ps, std::size_t n) {
  if (!ps.has_test_particles()) return n;
  const double pairs = double(std::max<std::size_t>(ps.active_count(), 1)) * double(n);
  return std::size_t(std::sqrt(pairs));
}

}  // namespace

/// The solver builds a quadtree or an octree to match the system. Collisions run where
/// the forces do, in the system's dimension, with the run's threads, and count the pair
/// potential with the run's G and softening.
SimulationOptions complete_options(SimulationOptions o, int dim) {
  o.gravity.dim = dim;
  o.collisions.dim = dim;
  o.collisions.device = o.gravity.device;
  if (o.collisions.threads == 0) o.collisions.threads = o.gravity.threads;
  o.collisions.G = o.gravity.G;
  o.collisions.softening = o.gravity.softening;
  return o;
}

void Stepper::own_step(double, double, bool) {
  throw input_error("--integrator", "runs on the CPU only (--device cpu)", "ias15");
}

void Stepper::set_integrator_state(const IntegratorState& state) {
  if (!state.empty()) throw Error("--restart: the checkpoint's integrator state needs the CPU");
}

Simulation::Simulation(ParticleSystem particles, const SimulationOptions& options,
                       std::shared_ptr<ForceReducer> reducer)
    : Simulation(std::move(particles), options, std::move(reducer), 0) {}

bool Simulation::decomposes(const SimulationOptions& options, int dim,
                            const ForceReducer* reducer) {
  return reducer != nullptr && reducer->parts() > 1 &&
         parallel::runs_decomposed(complete_options(options, dim));
}

Simulation Simulation::from_share(ParticleSystem share, std::size_t total,
                                  const SimulationOptions& options,
                                  std::shared_ptr<ForceReducer> reducer) {
  if (!decomposes(options, share.dim, reducer.get()))
    throw Error("a run started from each process's share of the bodies must be decomposed");
  double held = double(share.size());
  reducer->sum(&held, 1);
  if (held != double(total))
    throw Error(fmt::format("the processes' shares hold {} bodies, not {}", held, total));
  return Simulation(std::move(share), options, std::move(reducer), total);
}

Simulation::Simulation(ParticleSystem particles, const SimulationOptions& options,
                       std::shared_ptr<ForceReducer> reducer, std::size_t shared_total)
    : particles_(std::make_unique<ParticleSystem>(std::move(particles))),
      reducer_(std::move(reducer)) {
  if (particles_->dim == 2) particles_->make_planar();
  options_ = complete_options(options, particles_->dim);
  options_.test_particles = particles_->has_test_particles();
  if (options_.test_particles && shared_total > 0)
    throw Error("test particles: the run must hold every body on every rank (not decomposed)");
  check_integrator_options(options_);
  check_radii(options_, *particles_);
  const std::size_t processes = reducer_ ? std::size_t(std::max(1, reducer_->parts())) : 1;
  const std::size_t per_process =
      (shared_total > 0 ? shared_total : particles_->size()) / processes;
  const SimulationOptions run = with_run_threads(options_, work_bodies(*particles_, per_process));
  run_threads_ = run.gravity.threads;
  stepper_ = make_stepper(run, reducer_);
  // Every process holds the whole start (or, from_share, its share of it): in a decomposed
  // run each keeps its share, and the first force evaluation sends every body to its owner.
  total_bodies_ = shared_total > 0 ? shared_total : particles_->size();
  if (decomposed()) {
    // The memory cap per rank, checked where it is given rather than at the first cut.
    const std::size_t cap = options_.gravity.max_bodies_per_rank;
    const auto parts = std::size_t(reducer_->parts());
    if (cap > 0 && cap * parts < total_bodies_)
      throw input_error("--max-bodies-per-rank",
                        fmt::format("{} bodies do not fit {} ranks of at most that many each",
                                    total_bodies_, parts),
                        cap);
    if (shared_total == 0)
      *particles_ = parallel::keep_share(*particles_, reducer_->part(), reducer_->parts());
  }
  stepper_->upload(*particles_);  // the one copy in
  energy_method_ = run_energy_method(options_, total_bodies_);
}

Simulation::Simulation(ParticleSystem particles, const GravityOptions& gravity,
                       const IntegratorOptions& integrator, const CollisionOptions& collisions,
                       std::shared_ptr<ForceReducer> reducer)
    : Simulation(std::move(particles),
                 SimulationOptions{gravity, integrator, collisions, EnergyMethod::Auto},
                 std::move(reducer)) {}

Simulation::~Simulation() = default;
Simulation::Simulation(Simulation&&) noexcept = default;
Simulation& Simulation::operator=(Simulation&&) noexcept = default;

void Simulation::download_if_stale() const {
  if (host_stale_) {
    stepper_->download(*particles_);
    host_stale_ = false;
  }
}

void Simulation::upload_if_edited() {
  if (host_edited_) {
    // A decomposed run's solvers take every body as active: an edit may not make test
    // particles (the start refuses them, options_.test_particles).
    if (decomposed() && particles_->has_test_particles())
      throw input_error("n_active", "test particles are not decomposed yet", particles_->n_active);
    stepper_->upload(*particles_);
    host_edited_ = false;
  }
}

const ParticleSystem& Simulation::particles() const {
  download_if_stale();
  return *particles_;
}

bool Simulation::decomposed() const {
  return stepper_->owns_bodies();
}

const ParticleSystem& Simulation::all_particles() const {
  if (!decomposed()) return particles();
  gathered_ = std::make_unique<ParticleSystem>(parallel::gather_bodies(particles(), *reducer_));
  return *gathered_;
}

ParticleSystem& Simulation::edit_particles() {
  if (decomposed())
    throw Error("the bodies of a run decomposed over several processes cannot be edited");
  download_if_stale();
  host_edited_ = true;
  particles_->invalidate_potentials();  // the bodies may move
  return *particles_;
}

void Simulation::positions(std::vector<float>& xyz) const {
  if (host_edited_ || !host_stale_) {  // the host copy is the newest
    positions_as_float(*particles_, xyz);
    return;
  }
  stepper_->download_positions(xyz);
}

double Simulation::time() const {
  return host_stale_ ? stepper_->time() : particles_->time;
}

std::size_t Simulation::size() const {
  if (decomposed()) return total_bodies_;  // less the merges on every rank
  return host_stale_ ? stepper_->size() : particles_->size();
}

std::size_t Simulation::active_count() const {
  if (decomposed()) return size();  // a decomposed run has no test particles
  return host_stale_ ? stepper_->active_count() : particles_->active_count();
}

void Simulation::step(double dt) {
  // A step that does not advance the time would be repeated without end by a loop until a
  // time (integrator.hpp, the length of a run): refused, whoever drives the simulation.
  check_step_advances(time(), time(), dt);
  const double weight = phase_weight();
  const auto start =
      weight > 0 ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  upload_if_edited();
  stepper_->set_phase_timing(weight > 0);
  stepper_->step(dt, std::exchange(potentials_requested_, false));
  host_stale_ = true;
  count_step(stepper_->step_times(), start, weight);
  stepper_->clear_times();
}

void Simulation::own_step(double first_dt, double t_limit) {
  // Timed as step() is: a run of few bodies reads the clock at one step in kTimedStride (on
  // the Pythagorean problem the reads, one per force evaluation, were 15 % of IAS15's time).
  const double weight = phase_weight();
  const auto start =
      weight > 0 ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  upload_if_edited();
  stepper_->set_phase_timing(weight > 0);
  stepper_->own_step(first_dt, t_limit, std::exchange(potentials_requested_, false));
  host_stale_ = true;
  count_step(stepper_->step_times(), start, weight);
  stepper_->clear_times();
}

void Simulation::request_potentials() {
  potentials_requested_ = energy_method_ == EnergyMethod::Solver;
}

void Simulation::evaluate_forces(bool potentials) {
  upload_if_edited();
  stepper_->evaluate(potentials);
  host_stale_ = true;
  add_times(stepper_->take_times());
}

void Simulation::reconfigure(const SimulationOptions& options) {
  if (decomposed())
    throw Error("a run decomposed over several processes cannot change its options");
  download_if_stale();
  SimulationOptions next = complete_options(options, particles_->dim);
  next.test_particles = particles_->has_test_particles();
  check_integrator_options(next);
  check_radii(next, *particles_);
  const SimulationOptions run = with_run_threads(next, work_bodies(*particles_, size()));
  std::unique_ptr<Stepper> stepper = make_stepper(run, reducer_);  // throws before any change
  if (!same_forces(next.gravity, options_.gravity)) particles_->invalidate_accelerations();
  // IAS15 goes on with its polynomial (when the bodies were not edited meanwhile).
  IntegratorState carried;
  if (own_steps() && next.integrator.scheme == IntegratorScheme::Ias15 && !host_edited_)
    carried = stepper_->integrator_state();
  stepper_ = std::move(stepper);
  options_ = next;
  run_threads_ = run.gravity.threads;
  stepper_->upload(*particles_);
  if (!carried.empty()) stepper_->set_integrator_state(carried);
  host_edited_ = false;
  energy_method_ = run_energy_method(options_, particles_->size());
}

std::string Simulation::solver_name() const {
  return stepper_->solver_name();
}

std::string Simulation::integrator_name() const {
  return std::string(to_string(options_.integrator.scheme));
}

void Simulation::resume(std::uint64_t steps_done, const CollisionTotals& collisions,
                        const IntegratorState& integrator) {
  upload_if_edited();  // an upload later would restart the integrator
  stepper_->set_integrator_state(integrator);
  steps_done_ = steps_done;
  collisions_ = collisions;
}

IntegratorState Simulation::integrator_state() const {
  return stepper_->integrator_state();
}

DecompositionState Simulation::decomposition_state() const {
  return stepper_->decomposition_state();
}

void Simulation::resume_decomposition(const DecompositionState& state) {
  upload_if_edited();  // an upload later would give the stepper other bodies
  stepper_->resume_decomposition(state);
}

Diagnostics Simulation::diagnostics() {
  return diagnostics(energy_method_);
}

Diagnostics Simulation::diagnostics(EnergyMethod method) {
  ScopedPhase phase(times_, "diagnostics");
  upload_if_edited();
  if (method == EnergyMethod::Auto) method = energy_method_;
  // A Solver evaluation of the potentials leaves them on the stepper's side (the host
  // copy gets them with the next download).
  if (method == EnergyMethod::Solver) host_stale_ = true;
  if (method == EnergyMethod::Tree && !stepper_->tree_energy_here()) {
    // The CPU tree of the energy (a stepper without a tree of its own: the moments are
    // still summed where the bodies are).
    download_if_stale();
    const Diagnostics moments = stepper_->diagnostics(EnergyMethod::Off);
    return with_potential(
        moments,
        tree_potential_energy(all_particles(), options_.gravity.G, options_.gravity.softening,
                              options_.gravity.threads),
        EnergyMethod::Tree);
  }
  return stepper_->diagnostics(method);
}

}  // namespace nbody
