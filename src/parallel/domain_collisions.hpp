#pragma once
// The collision stage of a run whose ranks own their bodies (issue 36; docs/distributed.md,
// part 2): contacts across the borders of the domains, each resolved once, as one process
// resolves it.
//
// Bodies in contact are within reach of each other (the candidate pairs of the one-process
// handler, collisions/contact_search.hpp's kCandidateSkin), so a cluster of contacts (the
// bodies the candidate pairs connect) lies near the bodies it starts from. Each stage:
//   1. every rank's box of bodies and the largest radius are all-gathered, and each rank
//      sends every other the bodies within `depth` of that rank's box (its ghosts; at first
//      two reaches, a reach being the farthest a candidate pair can be apart) and, while the
//      depth is a few cells of a coarse grid, of a cell holding one of its bodies
//      (occupied_cells.hpp: a box can span the system where the bodies do not);
//   2. each rank finds the candidate pairs among its bodies and its ghosts, and their
//      clusters. A cluster that holds one of its bodies is complete when every ghost in it
//      lies a reach inside the ghost layer (within depth - reach of the box, and of an
//      occupied cell: that ghost's partners are then all there too);
//      while some rank has one that is not, every rank doubles the depth and goes again;
//   3. a cluster is resolved by the rank that owns its body of smallest id, with the
//      one-process handler on the cluster's bodies alone, so each cluster is resolved once;
//   4. the new states of other ranks' bodies, and which of them merged away, go back to
//      their owners.
// Bodies whose new places belong to another rank move there at the force evaluation's
// migration. The stage's figures are summed over the ranks (the largest overlap and the
// passes: their maxima), so every rank reports the whole run's. `merged` is left empty: a
// merged body's acceleration (its parts' mass-weighted, which hierarchical steps keep until
// its next evaluation) is set by the rank that resolved it and sent with its state.
// Hierarchical steps' gate: the bodies' bin bytes go with the ghosts, and the contact flags
// the stage sets go back to the owners.
//
// Where it differs from one process: a cluster of more than one pair may take its pairs in
// another order (the handler's search order over the cluster alone), and bodies pushed
// beyond the search's skin (deeply overlapping starts) meet the bodies outside their
// cluster at the next stage.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/distributed.hpp"

namespace nbody::parallel {

/// The indices (sorted) of a rank's bodies that a stage is about to remove (merged away).
using RemovedBodies = std::function<void(const std::vector<std::size_t>&)>;

/// The decomposed stage around `local`, the one-process handler of `options` (which
/// resolves each cluster). Its resolve() is collective; `removed` (may be empty) hears of
/// every removal first (DomainGravity::bodies_removed: the bodies' costs).
[[nodiscard]] std::unique_ptr<CollisionHandler> make_domain_collisions(
    std::unique_ptr<CollisionHandler> local, const CollisionOptions& options,
    std::shared_ptr<ForceReducer> comm, RemovedBodies removed = {});

}  // namespace nbody::parallel
