#pragma once
// Gravity when every rank owns its bodies (issue 35, docs/distributed.md part 2): a
// GravitySolver whose compute_forces() is collective and first moves the bodies. Each call:
//   1. the keys of the local bodies in the cube of all ranks' bodies (domain.hpp);
//   2. a new cut of the key line when the last evaluation's measured work (interactions
//      per body) is out of balance by more than DomainOptions::recut_imbalance, or at the
//      first call;
//   3. migration: every body to the rank that owns its key (ids conserved: the census is
//      checked in debug builds);
//   4. the forces of the local bodies from all bodies: the tree by locally essential trees
//      (tree/essential_tree.hpp), the direct sum by the ring of travelling blocks
//      (direct_ring.hpp).
// So ps changes under the call: its bodies, their order and their number. The leapfrog and
// the other one-evaluation schemes read every body's state after the evaluation, so they
// step owned bodies as they step all of them.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nbody/distributed.hpp"
#include "nbody/gravity.hpp"
#include "nbody/simulation.hpp"
#include "parallel/domain.hpp"

namespace nbody::parallel {

struct DomainOptions {
  /// A new cut when the slowest rank's measured work over the mean passes this.
  double recut_imbalance = 1.1;
  /// GPU ranks: the first cuts' tolerance instead (0: recut_imbalance).
  double settling_imbalance = 0;
  /// The cut's own tolerance and the memory cap per rank (domain.hpp).
  BalanceOptions balance;
  /// The curve of the key line (domain.hpp): who owns which body; the trees are the same.
  DomainCurve curve = kDefaultCurve;
  /// GPU ranks: the most bodies a rank sends in one round of a migration (0: the default,
  /// parallel/cuda/device_domain.cuh's kMigrationRound).
  std::size_t migration_round = 0;
};

/// What the last evaluation did on this rank.
struct DomainStats {
  double imbalance = 1;          // of the last evaluation's work under the cut it met
  bool recut = false;            // this evaluation cut the key line again
  MigrationStats migration;      // the bodies that left and arrived
  std::uint64_t bytes_sent = 0;  // essential trees or ring blocks sent
  std::size_t bodies = 0;        // owned after the migration
};

class DomainGravity : public GravitySolver {
 public:
  /// compute_forces() without the cut and the migration: the bodies stay where they are
  /// (the forces do not depend on who owns which body, only their accuracy, a little), for
  /// an evaluation that must not reorder them (the potentials of bodies whose
  /// accelerations are kept). Collective.
  virtual void compute_forces_in_place(ParticleSystem& ps, bool potential) = 0;
  /// compute_forces()'s first half: the cut (when out of balance) and the migration, every
  /// body moving with its accelerations and potentials; no forces. Hierarchical time steps
  /// call it at the start of each step, where every body is synchronised. Collective.
  virtual void redistribute(ParticleSystem& ps) = 0;
  /// The bodies at these indices of ps (sorted, before their removal) are about to go
  /// (merged away): their costs go with them, so the next cut still weighs the others'.
  virtual void bodies_removed(const std::vector<std::size_t>& indices) = 0;
  [[nodiscard]] virtual DomainStats domain_stats() const = 0;
  [[nodiscard]] virtual const DomainCuts& cuts() const = 0;
  /// The cuts and the costs of the bodies of ps (in its order), for a checkpoint.
  [[nodiscard]] virtual DecompositionState state() const = 0;
  /// A restart's: the next evaluation starts from these cuts and costs (of the bodies it
  /// will be given, in their order) instead of cutting anew; without cuts, its first cut
  /// balances these costs. nbody::Error when the cuts are not P + 1 keys from 0 to the end,
  /// non-decreasing.
  virtual void resume(const DecompositionState& state) = 0;
};

/// Whether a run with these options steps owned bodies when it has several ranks: the CPU
/// direct sum (fast kernel) and tree, the GPU tree and direct sum (simulation/cuda's
/// DomainForces), fixed steps of the schemes of one evaluation a step (leapfrog, Euler,
/// kinematic, with or without damping) and, on CPU ranks, hierarchical steps and collisions
/// (domain_collisions.hpp). The rest (collisions and hierarchical steps on GPU ranks, IAS15)
/// still runs with the state replicated on every rank (docs/distributed.md).
[[nodiscard]] bool runs_decomposed(const SimulationOptions& options);
/// Why these options replicate the state instead ("" where they decompose): what a run
/// under mpirun says in its header.
[[nodiscard]] std::string replicated_because(const SimulationOptions& options);

/// The solver for `options` (CPU direct sum or tree; dim 2 or 3) over the ranks of `comm`.
/// Throws nbody::Error naming the option for what the decomposition does not do yet.
[[nodiscard]] std::unique_ptr<DomainGravity> make_domain_gravity(const GravityOptions& options,
                                                                 std::shared_ptr<ForceReducer> comm,
                                                                 DomainOptions domain = {});

/// DomainOptions::settling_imbalance from the environment variable
/// NBODY_DOMAIN_SETTLING_IMBALANCE, given its text (null: unset, 0): a number of at least 1;
/// throws the input error that names the variable otherwise.
double settling_imbalance_from(const char* text);

/// DomainOptions::migration_round from NBODY_DOMAIN_MIGRATION_ROUND, given its text (null:
/// unset, 0): a whole number of bodies, at least 1; throws the input error that names the
/// variable otherwise.
std::size_t migration_round_from(const char* text);

/// The pieces a GPU rank describes its bodies by (about n / this many bodies each; 0: the
/// default) from NBODY_DOMAIN_PIECES, given its text (null: unset): a whole number from 1
/// to 16384; throws the input error that names the variable otherwise.
std::size_t pieces_per_rank_from(const char* text);

/// How a rank's description to the others treats the cells at or next to the centre of mass
/// (docs/distributed.md, "Three cures tried"), from NBODY_DOMAIN_PIECE_SPLIT, given its text
/// (null: unset, 0): 0 as before; 1 (GPU ranks) such cells split down to their walk groups;
/// 2 also no runs of their small children (a walk group may then span two boxes, and uses
/// the cells both accepted whole). Throws the input error that names the variable otherwise.
/// Where a rank has few bodies near the centre, such a cell has small children whose runs
/// span the centre, and every sender ships what such a box opens: with fixed cuts (2M
/// Plummer, 4 domains, GpuReceiverPieces.WideCellsSplitSendLess, one H200) the GPU ranks'
/// essential trees held 1,510,671 bodies in all with modes 0 and 1, 10,729 with mode 2
/// (geometric; 1,502,593 and 2,620 relative). Mode 2 is not the default: on 2 and 4 H200s it
/// changed neither the bytes sent (273.0 against 246.3 MB at 2^26 on 4) nor the step, and
/// on 3 thread ranks its p99 force error passed the test's bound.
int piece_split_from(const char* text);

/// Whether a GPU rank walks the essential trees it received as one tree (1: joined under a
/// root of their own, TreeForces::walk_received) or one by one (0, unset: the default), from
/// NBODY_DOMAIN_MERGE, given its text. Throws the input error that names the variable
/// otherwise. An experiment of issues 35/39, to measure on 4 GPUs.
bool merge_received_from(const char* text);

}  // namespace nbody::parallel
