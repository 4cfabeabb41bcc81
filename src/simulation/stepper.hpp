#pragma once
// A Stepper advances the state of a Simulation: one interface, a host implementation
// (host_stepper.cpp: the CPU solvers, integrators and collision handler) and a device one
// (cuda/device_stepper.cu: everything resident in GPU memory). Simulation holds one and
// never asks which (private to the library; plain C++, no CUDA types).
//
// The host copy. Simulation keeps a ParticleSystem that callers read and edit. upload()
// makes the stepper's state equal to it and download() makes it equal to the stepper's
// state: the device stepper copies across the bus; the host stepper steps that very
// ParticleSystem, so for it both are free.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/distributed.hpp"
#include "nbody/phase_times.hpp"
#include "nbody/simulation.hpp"

namespace nbody {

/// What the steps since the last clear_times() cost and did.
struct StepTimes {
  double gravity_seconds = 0;    // force evaluations (the sum of the processes' shares included)
  double collision_seconds = 0;  // collision stages (wall time on the host, kernels on the GPU)
  CollisionTotals collisions;    // every collision stage; empty without collisions
  DecompositionStats decomposition;  // a decomposed run's evaluations (Simulation sums them)
  PhaseTimes stages;  // the force evaluation's stages (tree: build, walk / bbox ... force)
  // Hierarchical time steps (left 0 by fixed steps; Simulation counts those itself):
  std::uint64_t substeps = 0;            // force evaluations of active sets
  std::uint64_t active_evaluations = 0;  // the sum of the active bodies over them
  std::uint64_t floored = 0;             // body steps that wanted less than the deepest bin allowed
  std::vector<std::uint64_t> bins;  // bodies per bin k at the end of the last step (empty: none)
  // An integrator with its own steps (IAS15; left 0 by the others):
  std::uint64_t own_steps = 0;                 // accepted steps
  std::uint64_t rejected = 0;                  // proposals too large, taken again smaller
  std::uint64_t iterations = 0;                // predictor-corrector iterations
  std::uint64_t evaluations = 0;               // force evaluations of all the bodies
  double dt_last = 0, dt_min = 0, dt_max = 0;  // of the accepted steps

  /// Back to the start, the lists emptied but keeping their room (no allocation, and
  /// little to write, after each of a few-body run's steps).
  void clear() {
    auto stages_kept = std::move(stages);
    auto bins_kept = std::move(bins);
    *this = StepTimes{};
    stages = std::move(stages_kept);
    stages.clear();
    bins = std::move(bins_kept);
    bins.clear();
  }
};

class Stepper {
 public:
  virtual ~Stepper() = default;
  /// E.g. "direct-simd-double", "tree-cuda-octree-float-resident".
  [[nodiscard]] virtual std::string solver_name() const = 0;
  /// Takes `host` as the state to step (positions, velocities, masses, radii, ids, the time,
  /// and the accelerations when valid); N may change. `host` must outlive the stepper.
  virtual void upload(ParticleSystem& host) = 0;
  /// One step of the integrator (with adaptive time steps, IntegratorOptions::timestep,
  /// one step of dt made of the bins' substeps, synchronised at its end: block_steps.hpp):
  /// the position update, the collision stage, the force
  /// evaluation (with the processes' shares summed), the velocity update. Evaluates forces
  /// first when the state has none valid. With `potential` the step's force evaluation
  /// also computes the potentials (same pass), so that diagnostics(Solver) after it costs
  /// O(N); without, the potentials are stale after the step.
  virtual void step(double dt, bool potential) = 0;
  /// One step of an integrator that chooses its own step sizes (IAS15): the size it
  /// proposes (`first_dt` for the first), shortened to land exactly on t_limit; then the
  /// collision stage (contacts restart the integrator's polynomial) and the forces at the
  /// new positions, with the potentials when asked. (step(dt) with such an integrator is
  /// these steps up to exactly time + dt.) Only the host stepper takes such steps; the
  /// default throws (Simulation refuses IAS15 elsewhere first).
  virtual void own_step(double first_dt, double t_limit, bool potential);
  /// What the integrator carries between steps (for checkpoints; by default none), and
  /// taking it back (throws nbody::Error for a state this stepper cannot take).
  [[nodiscard]] virtual IntegratorState integrator_state() const { return {}; }
  virtual void set_integrator_state(const IntegratorState& state);
  /// A decomposed CPU run's cuts and its bodies' costs (DomainGravity::state; empty
  /// elsewhere), for checkpoints; and a restart's, taken back (DomainGravity::resume; ignored
  /// where no DomainGravity runs).
  [[nodiscard]] virtual DecompositionState decomposition_state() const { return {}; }
  virtual void resume_decomposition(const DecompositionState& /*state*/) {}
  /// Makes the forces current at the current positions, by gravity alone (no collision
  /// stage: the bodies stay as they are, and the contacts are resolved by the next step's
  /// evaluation, so an energy measured now is that of the bodies as given): when the
  /// accelerations are not valid, the accelerations, with the potentials if asked; when
  /// they are valid but the potentials asked for are not, the potentials, the
  /// accelerations left as they were (so a run's trajectory never depends on when its
  /// energies were asked for).
  virtual void evaluate(bool potential) = 0;
  /// Makes the host copy given to upload() equal to the state (merges may have shrunk N),
  /// the potentials included when they are current.
  virtual void download(ParticleSystem& host) = 0;
  /// Positions only, x y z interleaved as float: what drawing needs (12 bytes a body).
  virtual void download_positions(std::vector<float>& xyz) = 0;
  /// Energies, momenta, centre of mass of the state, the potential energy by `method`
  /// (Exact, Solver: from the potentials, evaluated first when stale, or Off); only
  /// scalars cross the bus.
  [[nodiscard]] virtual Diagnostics diagnostics(EnergyMethod method) = 0;
  /// Whether diagnostics() takes EnergyMethod::Tree itself (the GPU's device tree); else
  /// Simulation evaluates it with the CPU tree on the host copy.
  [[nodiscard]] virtual bool tree_energy_here() const { return false; }
  /// Whether this process steps only the bodies it owns (a decomposed run on several CPU
  /// ranks, parallel/domain_gravity.hpp): upload() then takes this process's share, the
  /// bodies migrate between processes at every force evaluation, and diagnostics() is
  /// collective (the ranks' sums all-reduced).
  [[nodiscard]] virtual bool owns_bodies() const { return false; }
  /// The times and collision totals of the steps since the last clear_times().
  [[nodiscard]] const StepTimes& step_times() const { return times_; }
  void clear_times() { times_.clear(); }
  /// step_times(), then clear_times().
  [[nodiscard]] StepTimes take_times() {
    StepTimes t = times_;
    clear_times();
    return t;
  }
  /// The simulated time and the number of bodies, without copying the state.
  [[nodiscard]] virtual double time() const = 0;
  [[nodiscard]] virtual std::size_t size() const = 0;
  /// The active bodies (ParticleSystem::active_count(): merges may remove some).
  [[nodiscard]] virtual std::size_t active_count() const = 0;
  /// Whether the next step times its phases (reads the clock): Simulation times one step
  /// in kTimedStride of a few-body run, where a clock read costs a fifth of a step.
  void set_phase_timing(bool on) { phase_timing_ = on; }

 protected:
  bool phase_timing_ = true;
  StepTimes times_;  // since the last clear_times()
};

/// The options as a Simulation of a dim-dimensional system completes them: the solver
/// builds a quadtree or an octree to match, and the collisions run where the forces do, in
/// that dimension, with the run's threads, G and softening. (Tests that drive steppers
/// themselves use it too.)
[[nodiscard]] SimulationOptions complete_options(SimulationOptions o, int dim);

/// The stepper for options.gravity.device: throws nbody::Error naming the option for bad
/// options, a build without CUDA or no usable GPU. Options come complete (Simulation has
/// given the collisions the run's dimension, device, G and softening).
[[nodiscard]] std::unique_ptr<Stepper> make_stepper(const SimulationOptions& options,
                                                    std::shared_ptr<ForceReducer> reducer);
[[nodiscard]] std::unique_ptr<Stepper> make_host_stepper(const SimulationOptions& options,
                                                         std::shared_ptr<ForceReducer> reducer);
/// cuda/device_stepper.cu; without CUDA device_stepper_none.cpp, which throws the
/// gravity factory's "built without CUDA" error.
[[nodiscard]] std::unique_ptr<Stepper> make_device_stepper(const SimulationOptions& options,
                                                           std::shared_ptr<ForceReducer> reducer);

}  // namespace nbody
