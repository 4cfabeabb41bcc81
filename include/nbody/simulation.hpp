#pragma once
// A simulation: the particle state, a gravity solver and an integrator, stepped
// together, with the time spent in each phase recorded. The command line, the viewer
// and the Python module all drive this class.
//
// With GravityOptions::device == Gpu the whole simulation lives on the GPU (a private
// DeviceStepper): the bodies are copied in once, stepped, integrated and measured there,
// and copied out only when particles() is asked for after a step. particles() (non-const)
// also marks the host copy as edited, so the next step() or diagnostics() copies it back
// in: call it again after each step rather than keeping the reference across steps.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/distributed.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"
#include "nbody/phase_times.hpp"

namespace nbody {

class DeviceStepper;

class Simulation {
 public:
  /// Throws nbody::Error for invalid options. A dim-2 system is made planar.
  /// With collisions, contacts are resolved right before every force evaluation (so the
  /// stored accelerations match the positions after the collisions; docs/collisions.md).
  /// With a reducer of several parts (an MPI run, distributed.hpp), every process holds
  /// and steps the whole state, computes its share of the forces, and the shares are
  /// summed across the processes each force evaluation.
  Simulation(ParticleSystem particles, const GravityOptions& gravity,
             const IntegratorOptions& integrator, const CollisionOptions& collisions = {},
             std::shared_ptr<ForceReducer> reducer = nullptr);
  ~Simulation();
  Simulation(Simulation&&) noexcept;
  Simulation& operator=(Simulation&&) noexcept;

  /// Advances by one step of size dt.
  void step(double dt);

  /// The state, current after the last step (on the GPU path: downloaded when stale; the
  /// non-const form also schedules an upload before the next step or diagnostics).
  [[nodiscard]] ParticleSystem& particles();
  [[nodiscard]] const ParticleSystem& particles() const;
  /// Simulated time and number of bodies; never copy the state from the GPU.
  [[nodiscard]] double time() const;
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::uint64_t steps_done() const { return steps_done_; }
  [[nodiscard]] const GravityOptions& gravity_options() const { return gravity_options_; }
  /// The CPU solver; throws nbody::Error on the GPU path (use solver_name()).
  [[nodiscard]] const GravitySolver& gravity() const;
  /// The processes sharing the force work (parts() == 1: this one alone).
  [[nodiscard]] int processes() const { return reducer_ ? reducer_->parts() : 1; }
  /// E.g. "direct-simd-double", or "direct-cuda-fast-double-resident" on the GPU path.
  [[nodiscard]] std::string solver_name() const;
  [[nodiscard]] const Integrator& integrator() const { return *integrator_; }
  /// True when the state lives on the GPU (GravityOptions::device == Gpu).
  [[nodiscard]] bool on_device() const { return stepper_ != nullptr; }

  /// The collision model in use (None without collisions).
  [[nodiscard]] CollisionModel collision_model() const { return collision_options_.model; }
  /// Contacts, merges, energy lost and time of every collision stage so far.
  [[nodiscard]] const CollisionTotals& collision_totals() const;

  /// Continues a run written to a checkpoint: the number of steps done and the collision
  /// totals so far. (The state itself, with the time and the accelerations, came in the
  /// ParticleSystem given to the constructor; with valid accelerations the next step uses
  /// them as they are, so the run goes on bit for bit.)
  void resume(std::uint64_t steps_done, const CollisionTotals& collisions);

  /// Energies etc. with the run's G and softening (timed as "diagnostics").
  [[nodiscard]] Diagnostics diagnostics();

  /// Seconds per phase so far: "gravity", "collisions" (with a collision model),
  /// "integrate" (the rest of the step), "diagnostics"; callers add "io".
  [[nodiscard]] PhaseTimes& times() { return times_; }
  /// The "gravity" phase split into the solver's stages, summed over the steps: the GPU
  /// tree's bbox, sort, build, summarise, force (CUDA events); the CPU tree's build and
  /// walk (its last evaluation per step); empty for the direct sum.
  [[nodiscard]] PhaseTimes& gravity_stages() { return gravity_stages_; }

 private:
  class TimedGravity;
  /// GPU path: copies the state from the device when the host copy is stale.
  void sync_from_device() const;
  /// GPU path: copies the host copy to the device when it may have been edited.
  void sync_to_device();

  mutable ParticleSystem particles_;  // GPU path: a cache of the device state
  GravityOptions gravity_options_;
  CollisionOptions collision_options_;
  std::unique_ptr<TimedGravity> gravity_;   // CPU path (runs the collision stage too)
  std::unique_ptr<DeviceStepper> stepper_;  // GPU path
  std::unique_ptr<Integrator> integrator_;
  std::shared_ptr<ForceReducer> reducer_;
  PhaseTimes times_;
  PhaseTimes gravity_stages_;
  CollisionTotals device_collisions_;  // GPU path (the CPU path's are in the solver wrapper)
  std::uint64_t steps_done_ = 0;
  mutable bool host_stale_ = false;  // the device has stepped since the last download
  bool host_edited_ = false;         // particles() handed out a mutable reference
};

}  // namespace nbody
