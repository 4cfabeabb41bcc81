#pragma once
// A simulation: the particle state and a Stepper that advances it (on the CPU, or with
// GravityOptions::device == Gpu resident in GPU memory), with the time spent in each phase
// recorded. The command line, the viewer and the Python module all drive this class.
//
// The host copy. particles() reads the state: on the GPU it is copied out only when the
// device has stepped since the last copy. Reading never marks it changed. To change the
// bodies, edit_particles() hands out the host copy and says "the bodies changed": it is
// copied in again (uploaded) before the next step or diagnostics. Take it again after each
// step rather than keeping the reference across steps.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/distributed.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"
#include "nbody/phase_times.hpp"

namespace nbody {

/// Everything that chooses how a simulation is stepped.
struct SimulationOptions {
  GravityOptions gravity;
  IntegratorOptions integrator;
  CollisionOptions collisions;
  EnergyMethod energy = EnergyMethod::Auto;  // how diagnostics() gets the potential energy
  /// Set by Simulation from its bodies (ParticleSystem::has_test_particles()): the domain
  /// decomposition does not take test particles, so such a run replicates the state.
  bool test_particles = false;
};

/// What the time steps so far did (the JSON `timestep` object, --timings).
struct TimestepStats {
  std::uint64_t substeps = 0;           // force evaluations (fixed steps: one per step)
  std::uint64_t force_evaluations = 0;  // the bodies given new forces, summed over them
  std::uint64_t floored = 0;            // adaptive: body steps that wanted less than --dt-min's bin
  std::vector<std::uint64_t> bins;      // adaptive: bodies per bin k (step dt / 2^k) at the end
  // IAS15 (an integrator with its own steps; the JSON's steps, rejected_steps, dt_*):
  std::uint64_t steps = 0;                     // accepted steps
  std::uint64_t rejected = 0;                  // proposals too large, taken again smaller
  std::uint64_t iterations = 0;                // predictor-corrector iterations
  double dt_last = 0, dt_min = 0, dt_max = 0;  // of the accepted steps
};

/// What the domain decomposition did over the steps so far (a decomposed run:
/// Simulation::decomposed(); zeros otherwise), on this process.
struct DecompositionStats {
  std::uint64_t evaluations = 0;  // force evaluations (each one keys, maybe cuts, migrates)
  std::uint64_t recuts = 0;       // of them, those that cut the key line anew
  std::uint64_t migrated = 0;     // bodies that arrived here
  std::uint64_t bytes_sent = 0;   // essential trees or ring blocks sent from here
  std::uint64_t owned = 0;        // bodies this process owns after the last migration
  double imbalance = 1;  // the last evaluation's: the slowest rank's measured work / the mean
  // GPU tree ranks, the essential trees' work beside the local walk: its parts (gather,
  // count, announce, write, send: DomainTimer::beside), its span (from the pieces described
  // to the trees received), and what of that the walk hid.
  PhaseTimes beside;
  double exchange_seconds = 0, hidden_seconds = 0;
  PhaseTimes update;  // GPU ranks, the domain's update before the forces: bounds, keys, migrate
};

class Stepper;
struct StepTimes;

class Simulation {
 public:
  /// Throws nbody::Error for invalid options. A dim-2 system is made planar.
  /// With collisions, contacts are resolved right before every force evaluation (so the
  /// stored accelerations match the positions after the collisions; docs/collisions.md).
  /// With a reducer of several parts (an MPI run, distributed.hpp), every process holds
  /// and steps the whole state, computes its share of the forces, and the shares are
  /// summed across the processes each force evaluation.
  Simulation(ParticleSystem particles, const SimulationOptions& options,
             std::shared_ptr<ForceReducer> reducer = nullptr);
  Simulation(ParticleSystem particles, const GravityOptions& gravity,
             const IntegratorOptions& integrator, const CollisionOptions& collisions = {},
             std::shared_ptr<ForceReducer> reducer = nullptr);
  /// Whether these options over `reducer` make a decomposed run (decomposed(): each process
  /// owns only its bodies), for a system of dimension dim.
  [[nodiscard]] static bool decomposes(const SimulationOptions& options, int dim,
                                       const ForceReducer* reducer);
  /// A decomposed run (decomposes() true) started from this process's bodies alone: the
  /// share of share_range(total, part, parts) (gravity.hpp) of bodies whose ids are one of
  /// each over all processes (generate_window gives them), so that no process ever holds
  /// all `total`. Collective; throws nbody::Error when the run would not be decomposed or
  /// the shares do not add up to total.
  [[nodiscard]] static Simulation from_share(ParticleSystem share, std::size_t total,
                                             const SimulationOptions& options,
                                             std::shared_ptr<ForceReducer> reducer);
  ~Simulation();
  Simulation(Simulation&&) noexcept;
  Simulation& operator=(Simulation&&) noexcept;

  /// Advances by one step of size dt. With IAS15, by as many of its own steps as take the
  /// time to exactly time() + dt (REBOUND's integrate() with an exact finish time).
  void step(double dt);
  /// Whether the integrator chooses its own step sizes (IAS15): then own_step() takes one.
  [[nodiscard]] bool own_steps() const {
    return options_.integrator.scheme == IntegratorScheme::Ias15;
  }
  /// One step of such an integrator, of the size it proposes (`first_dt` for the very
  /// first), shortened to land exactly on t_limit when it would pass it (an output time,
  /// --t-end). Counts as one step in steps_done().
  void own_step(double first_dt, double t_limit);
  /// With the Solver energy method: the next step's force evaluation also computes the
  /// potentials (in the same pass), so diagnostics() right after it costs O(N) instead of
  /// a force evaluation. Call it before the steps whose energy will be read (the run loop
  /// does for --every, --stats-every, snapshots and the last step). No effect otherwise.
  void request_potentials();
  /// Makes the accelerations current at the current positions now, by gravity alone
  /// (nothing when they are current; the bodies are not moved: contacts are resolved by
  /// the next step), with the potentials when `potentials`: what a first snapshot needs.
  void evaluate_forces(bool potentials);

  /// The state, current after the last step (on the GPU: downloaded when stale).
  [[nodiscard]] const ParticleSystem& particles() const;
  /// The state, to change: uploaded again before the next step or diagnostics.
  [[nodiscard]] ParticleSystem& edit_particles();
  /// Whether each process owns only its bodies: a run on several CPU ranks whose options
  /// the domain decomposition takes (docs/distributed.md). particles() is then this
  /// process's bodies, size() the number over all processes, diagnostics() collective, and
  /// the bodies cannot be edited.
  [[nodiscard]] bool decomposed() const;
  /// The whole state: particles(), or in a decomposed run every process's bodies gathered
  /// on every process in id order. Then collective: every process calls it at the same point.
  [[nodiscard]] const ParticleSystem& all_particles() const;
  /// What the decomposition did so far (zeros unless decomposed()).
  [[nodiscard]] const DecompositionStats& decomposition() const { return decomposition_; }
  /// Positions only, x y z interleaved as float (12 bytes a body: what drawing needs; on
  /// the GPU only they cross the bus).
  void positions(std::vector<float>& xyz) const;
  /// Simulated time and number of bodies; never copy the state from the GPU.
  [[nodiscard]] double time() const;
  [[nodiscard]] std::size_t size() const;
  /// Test particles (particles.hpp), without copying the state: the active bodies (size()
  /// when none is a test particle: always in a decomposed run) and the type.
  [[nodiscard]] std::size_t active_count() const;
  [[nodiscard]] int test_particle_type() const { return particles_->test_particle_type; }
  [[nodiscard]] std::uint64_t steps_done() const { return steps_done_; }
  /// The CPU threads the forces take: --threads, or with 0 default_threads() for the run's
  /// bodies (1 where an evaluation is too small to share; 0: all of OpenMP's).
  [[nodiscard]] int run_threads() const { return run_threads_; }
  /// Substeps, force evaluations per body and bins of the steps so far.
  [[nodiscard]] const TimestepStats& timestep_stats() const { return timestep_stats_; }

  [[nodiscard]] const SimulationOptions& options() const { return options_; }
  [[nodiscard]] const GravityOptions& gravity_options() const { return options_.gravity; }
  /// Changes the options (solver, device, integrator, collisions, G, softening, ...): the
  /// state moves to the new stepper; the time, the ids, the step count and the collision
  /// totals are kept. Changed gravity (G, softening, solver, device, ...) makes the
  /// accelerations stale, so the next step evaluates them first. Throws nbody::Error for
  /// invalid options and then leaves the simulation as it was.
  void reconfigure(const SimulationOptions& options);

  /// The processes sharing the force work (parts() == 1: this one alone).
  [[nodiscard]] int processes() const { return reducer_ ? reducer_->parts() : 1; }
  /// E.g. "direct-simd-double", or "direct-cuda-fast-double-resident" on the GPU.
  [[nodiscard]] std::string solver_name() const;
  /// E.g. "leapfrog".
  [[nodiscard]] std::string integrator_name() const;
  /// True when the state lives on the GPU (GravityOptions::device == Gpu).
  [[nodiscard]] bool on_device() const { return options_.gravity.device == Device::Gpu; }

  /// The collision model in use (None without collisions).
  [[nodiscard]] CollisionModel collision_model() const { return options_.collisions.model; }
  /// Contacts, merges, energy lost and time of every collision stage so far.
  [[nodiscard]] const CollisionTotals& collision_totals() const { return collisions_; }

  /// Continues a run written to a checkpoint: the number of steps done and the collision
  /// totals so far. (The state itself, with the time and the accelerations, came in the
  /// ParticleSystem given to the constructor; with valid accelerations the next step uses
  /// them as they are, so the run goes on bit for bit.)
  /// The integrator's state (IAS15's polynomial and compensations) goes back too, so its
  /// next step is the uninterrupted run's.
  void resume(std::uint64_t steps_done, const CollisionTotals& collisions,
              const IntegratorState& integrator = {});
  /// What the integrator carries between steps (empty but for IAS15): for checkpoints.
  [[nodiscard]] IntegratorState integrator_state() const;
  /// A decomposed run on CPU ranks: its cuts and this rank's bodies' costs, in the order of
  /// particles() (empty elsewhere), for checkpoints; and a restart's, taken back, so that a
  /// restart on the same number of ranks owns the same bodies and cuts again as the
  /// uninterrupted run: byte for byte the same run (docs/restart.md).
  [[nodiscard]] DecompositionState decomposition_state() const;
  void resume_decomposition(const DecompositionState& state);

  /// Energies etc. with the run's G and softening and its energy method (timed as
  /// "diagnostics").
  [[nodiscard]] Diagnostics diagnostics();
  /// The same with another method (Auto: the run's own).
  [[nodiscard]] Diagnostics diagnostics(EnergyMethod method);
  /// The run's energy method, Auto resolved when the simulation was built (or
  /// reconfigured) from its solver and N, so it stays one method for the whole run.
  [[nodiscard]] EnergyMethod energy_method() const { return energy_method_; }
  /// Replaces the run's energy method (nbody run: Auto chosen by the run's plan,
  /// choose_energy_method()); Auto keeps the one resolved from the solver and N.
  void set_energy_method(EnergyMethod method) {
    if (method != EnergyMethod::Auto) energy_method_ = method;
  }

  /// Seconds per phase so far: "gravity", "collisions" (with a collision model),
  /// "integrate" (the rest of the step), "diagnostics"; callers add "io".
  [[nodiscard]] PhaseTimes& times() { return times_; }
  /// The "gravity" phase split into the solver's stages, summed over the steps: the GPU
  /// tree's bbox, sort, build, summarise, force (CUDA events); the CPU tree's build and
  /// walk (its last evaluation per step); empty for the direct sum.
  [[nodiscard]] PhaseTimes& gravity_stages() { return gravity_stages_; }

 private:
  /// A decomposed run: the number of bodies over all processes (none merge) and the
  /// bodies last gathered by all_particles().
  std::size_t total_bodies_ = 0;
  /// The constructors' work; shared_total > 0: particles is this process's share of them.
  Simulation(ParticleSystem particles, const SimulationOptions& options,
             std::shared_ptr<ForceReducer> reducer, std::size_t shared_total);
  DecompositionStats decomposition_;
  mutable std::unique_ptr<ParticleSystem> gathered_;
  /// Copies the state from the stepper when the host copy is stale.
  void download_if_stale() const;
  /// Copies the host copy to the stepper when it was edited.
  void upload_if_edited();
  /// Adds a stepper's times (force stages, gravity, collisions) to the phases, each
  /// `weight` times (0: the counts alone; a sampled step stands for `weight` steps).
  void add_times(const StepTimes& t, double weight = 1);
  /// Adds a step's times and counts (the phases, timestep_stats()); `start` is when it
  /// began, and the step stands for `weight` steps' times (0: it was not timed).
  void count_step(const StepTimes& t, std::chrono::steady_clock::time_point start,
                  double weight = 1);
  /// Whether the next step is timed, and for how many steps it stands (phase_weight()).
  [[nodiscard]] double phase_weight() const;

  int run_threads_ = 0;
  // The host copy, on the heap: the host stepper keeps its address across moves.
  std::unique_ptr<ParticleSystem> particles_;
  SimulationOptions options_;
  std::shared_ptr<ForceReducer> reducer_;
  std::unique_ptr<Stepper> stepper_;
  PhaseTimes times_;
  PhaseTimes gravity_stages_;
  CollisionTotals collisions_;
  std::uint64_t steps_done_ = 0;
  TimestepStats timestep_stats_;
  EnergyMethod energy_method_ = EnergyMethod::Exact;
  bool potentials_requested_ = false;  // request_potentials() before the next step
  mutable bool host_stale_ = false;    // the stepper has stepped since the last download
  bool host_edited_ = false;           // edit_particles() handed out the host copy
};

}  // namespace nbody
