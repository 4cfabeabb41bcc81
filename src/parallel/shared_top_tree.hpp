#pragma once
// The shared top tree of the domain decomposition (GADGET-2: Springel 2005, section 5;
// GADGET-4: Springel et al. 2021; docs/distributed.md part 2).
//
// Every rank builds the tree of its own bodies in the cube of all bodies, so its cells are
// cells of the one global tree. A cell that holds bodies of several ranks (around the cuts
// of the key line) would otherwise be seen as one multipole per rank, each with part of the
// mass and a lopsided centre of mass: a far group accepts each part where one process
// accepts the whole, with a larger error, and the relative criterion (M s^2) accepts each
// part nearer than the whole. Here each such cell gets the moments of the whole global
// cell, summed over the ranks that hold part of it: every rank's copy then opens or accepts
// exactly as one process's cell does, and the copy of the lowest such rank adds the whole
// cell's multipole when accepted while the others add nothing (tree::Tree::silent). A body's
// interaction list is then one process's for every group the cuts leave whole.
#include <cstddef>

#include "nbody/distributed.hpp"
#include "tree/tree.hpp"

namespace nbody::parallel {

/// Collective. t: this rank's local tree in the cube of all ranks' bodies, moments computed
/// (compute_moments; quadrupoles when asked for), keys kept (build_tree). Finds the cells of
/// t whose key range meets another rank's span of keys (the only cells that another rank's
/// bodies can share), all-gathers their moments, and gives each such cell the moments of the
/// global cell: mass and centre of mass summed, b_max bounded as for an inner cell, the
/// quadrupoles shifted to the common centre (physics/multipole.hpp). Marks t.silent where a
/// lower rank's copy adds the cell, and rebuilds the walk records (call set_opening after).
/// Every rank combines the records in rank order, so every copy of a cell gets the same bits.
/// Returns the number of t's cells that other ranks share. Throws nbody::Error for a
/// malformed record (another rank's bytes).
std::size_t share_top_cells(tree::Tree& t, ForceReducer& comm);

}  // namespace nbody::parallel
