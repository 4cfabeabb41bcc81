#pragma once
// Hierarchical (block) time steps on the CPU: one step of dt made of the bins' substeps
// (the bin arithmetic is physics/timestep.hpp's, shared with the CUDA stepper, which does
// the same operations in the same order). The scheme is GADGET-2's kick-drift-kick with
// power-of-two steps (Springel 2005, "The cosmological simulation code GADGET-2", sec. 4):
//
//   at the start (all bodies synchronised): bins from the accelerations; every body's
//     opening half kick v += a dt_i/2;
//   each substep: every body drifts to the next tick at which some bin ends a step, with
//     the collision stage in the middle of the drift (only for bodies of the deepest bin,
//     whose step the substep is: physics/timestep.hpp, the contacts); the bodies whose steps end
//     there (the active set) get new forces from all bodies; they take their closing half kick with
//     the old step, choose a new bin (a smaller step at once, a larger one only where its steps are
//     synchronised) and, unless the step of dt is over, take the opening half kick of their next
//     step;
//   at the end of dt every bin ends a step, so all bodies are active and synchronised.
//
// With every body in bin 0 this is the fixed-step leapfrog, bit for bit. Between bodies
// of different bins the kicks are not pairwise equal and opposite (a body in a short step
// feels a long-step body at its drifted position, not vice versa), so momentum is
// conserved only to the integration error, and energy to second order in each bin's step,
// as in GADGET-2; docs/timesteps.md.
#include <cstdint>
#include <functional>
#include <vector>

#include "integrators/cell_density.hpp"
#include "nbody/collisions.hpp"
#include "nbody/distributed.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"

namespace nbody {

/// What the steps of BlockSteps did (summed), and the bins at the end of the last one.
struct BlockStepCounts {
  std::uint64_t substeps = 0;
  std::uint64_t active_evaluations = 0;
  std::uint64_t floored = 0;
  std::vector<std::uint64_t> bins;
};

/// The stepper's stages, called by BlockSteps::step().
struct BlockStepStages {
  /// The collision stage at the current positions, through the gate (may remove bodies;
  /// may be empty).
  std::function<CollisionStats(ParticleSystem&, const ContactGate&)> collide;
  /// The stage merges: velocities are moved to the stage's time around it
  /// (physics/timestep.hpp, the contacts).
  bool merges = false;
  /// Forces of every body (the collision stage has run), with the potentials if asked.
  std::function<void(ParticleSystem&, bool potential)> all_forces;
  /// Forces of the listed bodies alone (GravitySolver::compute_forces_active).
  std::function<void(ParticleSystem&, bool potential, const std::vector<std::uint32_t>&)>
      active_forces;
  /// The potentials at the current positions, the accelerations kept as they were.
  std::function<void(ParticleSystem&)> potentials;
  /// A decomposed run: every body to the rank that owns it, with its accelerations, at the
  /// start of a step (all synchronised; may be empty). Collective.
  std::function<void(ParticleSystem&)> redistribute;
};

class BlockSteps {
 public:
  /// The options' eta, dt_min and criterion; the gravity's softening (which chooses the
  /// acceleration rule's form), G and dimension (the dynamical criterion's cells).
  BlockSteps(const IntegratorOptions& options, const GravityOptions& gravity);
  /// A decomposed run (every rank steps its own bodies): the bins' histogram, and with it
  /// the substeps, is summed over `group`, so every rank takes the same substeps and calls
  /// the collective stages together, whatever bins its own bodies are in; the counts are
  /// the sums over the ranks. Null: this process alone.
  void share_bins(ForceReducer* group) { group_ = group; }
  /// Advances ps by dt (all bodies synchronised at the end), adding to `counts`.
  /// `potential`: the last evaluation (every body active) computes the potentials.
  void step(ParticleSystem& ps, double dt, bool potential, const BlockStepStages& stages,
            BlockStepCounts& counts);

 private:
  /// The bins' histogram and the next tick after `tick` at which some bin ends a step.
  [[nodiscard]] std::uint64_t next_tick(std::uint64_t tick) const;
  /// global_ from histogram_ (summed over group_), and the counts of the substeps since the
  /// last call (active bodies, floored steps) added to `counts`, summed likewise.
  void sync_bins(BlockStepCounts& counts);
  /// The deepest populated bin.
  [[nodiscard]] int deepest_bin() const;
  /// The collision stage in the middle of the substep [tick, next]: bounces only between
  /// bodies of the deepest bin, merges with the velocities at the stage's time.
  void collide(ParticleSystem& ps, const BlockStepStages& stages, double dt, std::uint64_t tick,
               std::uint64_t next, int deepest);
  /// v += sign a stage_offset() for every body (merges: to the stage's time and back).
  void move_velocities(ParticleSystem& ps, double dt, std::uint64_t tick, std::uint64_t next,
                       double sign) const;
  /// The accelerations of the bodies that merged (merged_acceleration()), from the
  /// accelerations and masses before the stage (kept_, ids_).
  void merged_accelerations(ParticleSystem& ps, const std::vector<MergeEvent>& merged);
  /// `deepest`: the deepest bin of the substep, where bodies marked in contact go.
  void kick_active(ParticleSystem& ps, double dt, std::uint64_t tick, int k_limit, int deepest);
  /// The step body i wants, by the criterion (omega2_ current for the dynamical one).
  [[nodiscard]] double wanted(const ParticleSystem& ps, std::size_t i) const;
  /// The dynamical criterion: omega2_ from the current positions (all bodies).
  void update_density(const ParticleSystem& ps);
  /// The jerk criterion: jerk_[i] = |da_i/dt| of the listed bodies (null: all), summed over
  /// every body at the current positions and velocities.
  void update_jerk(const ParticleSystem& ps, const std::vector<std::uint32_t>* list);

  double eta_;
  double dt_min_;
  double softening_;
  TimestepCriterion criterion_;
  double G_;
  int dim_;
  CellDensity density_;
  std::vector<double> omega2_;            // the dynamical criterion: each body's cell omega^2
  std::vector<double> jerk_;              // the jerk criterion: each body's |da/dt|
  std::vector<std::uint8_t> bin_;         // with kContactFlag (physics/timestep.hpp)
  std::vector<std::uint64_t> histogram_;  // this process's bodies per bin
  std::vector<std::uint64_t> global_;     // every rank's (histogram_ without a group)
  std::uint64_t pending_active_ = 0, pending_floored_ = 0;  // since the last sync_bins
  ForceReducer* group_ = nullptr;
  std::vector<std::uint32_t> active_;
  std::vector<std::uint64_t> ids_;  // before a collision stage, to follow merges
  std::vector<double> kept_[4];     // merges: ax, ay, az and mass before the stage
};

/// After a stage's merges (in their order: a body may merge again), each body that took
/// others in gets its parts' mass-weighted acceleration (merged_acceleration()), which
/// hierarchical steps keep until the body's next evaluation: `ids` and `kept` (ax, ay, az
/// and mass; used as scratch) are the bodies' before the stage, `after` the survivors.
void merged_accelerations(const std::vector<std::uint64_t>& ids, std::vector<double> (&kept)[4],
                          const std::vector<MergeEvent>& merged, ParticleSystem& after);

}  // namespace nbody
