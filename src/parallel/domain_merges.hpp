#pragma once
// The bookkeeping of merges in a decomposed collision stage (domain_collisions.cpp): the
// energy a merge changes against the bodies outside the clusters a rank resolved (the merged
// bodies' accelerations: block_steps.hpp's merged_accelerations, as one process sets them).
#include <cstddef>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"

namespace nbody::parallel {

/// Collective. A merge's energy lost counts the change of the merged bodies' potential
/// against every other body (resolution_passes.cpp's third-body change); over a stage those
/// changes add up to W after it less W before, in any order. The handler counts them within
/// the clusters it was given (W_r: B_r before, A_r after); the rest is W_r against the bodies
/// no rank resolved (U: summed by their owners) and the ranks' clusters against each other
/// (rank 0's): sum over r of W(A_r, U) - W(B_r, U), plus over r < q of W(A_r, A_q) -
/// W(B_r, B_q). `all`: this rank's bodies (its first `owned`) and ghosts as before the stage;
/// `from`: the indices in `all` of the bodies of the clusters this rank resolved, `after`
/// those clusters' bodies after it; `merged`: whether they merged. Returns this rank's share.
[[nodiscard]] double merges_against_the_rest(const ParticleSystem& all, std::size_t owned,
                                             const std::vector<std::size_t>& from,
                                             const ParticleSystem& after, bool merged,
                                             const CollisionOptions& options, ForceReducer& comm);

}  // namespace nbody::parallel
