#pragma once
// The tree forces of the domain decomposition (domain_gravity.hpp, step 4): the local
// bodies' forces from every rank's bodies through locally essential trees.
#include <cstdint>
#include <memory>
#include <vector>

#include "nbody/distributed.hpp"
#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"
#include "parallel/domain.hpp"

namespace nbody::parallel {

struct DomainTreeResult {
  std::uint64_t bytes_sent = 0;  // the essential trees this rank sent
  SolverStats solver;            // interactions per local body, build and walk seconds
};

class DomainTreeForces {
 public:
  virtual ~DomainTreeForces() = default;
  /// Collective. The accelerations (and with `potential` the potentials) of ps's bodies,
  /// which must all lie in `cube` (the cube of all ranks' bodies), G included; cost gets
  /// each body's interactions (pairs + accepted cells, its own tree's and the received
  /// ones'), the measure of work the next cut balances.
  /// `active` (hierarchical time steps): the forces of those bodies alone, each the same as
  /// in a full evaluation (the walk's groups shrunk to them, tree::active_groups), the others'
  /// accelerations and costs left as they were; the rank still sends what the others' active
  /// bodies need, so every rank calls it at every substep, active bodies or not.
  virtual DomainTreeResult compute_forces(ParticleSystem& ps, bool potential, const KeyCube& cube,
                                          ForceReducer& comm, std::vector<double>& cost,
                                          const std::vector<std::uint32_t>* active = nullptr) = 0;
};

/// curve: the order of the domain's keys, for the shared top tree (shared_top_tree.hpp).
[[nodiscard]] std::unique_ptr<DomainTreeForces> make_domain_tree_forces(
    const GravityOptions& options, DomainCurve curve = kDefaultCurve);

}  // namespace nbody::parallel
