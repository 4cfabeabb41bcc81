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
#include <cstdint>
#include <vector>

#include "nbody/distributed.hpp"
#include "nbody/physics/multipole.hpp"
#include "parallel/domain.hpp"

namespace nbody::tree {
struct Tree;
}

namespace nbody::parallel {

/// One rank's part of a cell of the global tree: where the cell is and the moments of the
/// bodies the rank holds in it (share_top_cells all-gathers these; GPU ranks fill them from
/// their device trees, tree/cuda/tree_gpu_shared_top.cu).
struct TopCell {
  std::uint64_t prefix;  // the cell's keys >> (dim * (key bits per axis - level))
  std::uint64_t count;   // its bodies on this rank (> 0)
  std::uint32_t level, rank, leaf, unused;
  double mass, comx, comy, comz, bmax;  // b_max 0 where the tree keeps none
  Quadrupole<double> quad;              // about the centre of mass; zeros without quadrupoles
};

/// The most candidate cells a rank may have for the shared top tree to be made. After a
/// migration a rank's candidates are the cells around the cuts, a few hundred; before one
/// (bodies dealt out by index, every rank's keys spanning the whole line) every cell is a
/// candidate, and gathering them all would cost more than the split cells do (at 2^26
/// bodies on 2 GPUs, 2.7 GB). Then no cell is shared for that evaluation (every rank's
/// copies add their own parts, as without a shared top tree: correct, with the split
/// cells' larger error).
inline constexpr std::size_t kMaxTopCells = std::size_t(1) << 16;

/// A rank's span of Morton keys: its smallest and largest (has 0: no bodies).
struct KeySpan {
  std::uint64_t has, lo, hi;
};
/// Collective: every rank's span, in rank order.
std::vector<KeySpan> gather_key_spans(const KeySpan& mine, ForceReducer& comm);
/// Collective: every rank's records (rank set to the sender), checked (nbody::Error for a
/// malformed one), sorted by level, prefix, then rank.
std::vector<TopCell> gather_top_cells(const std::vector<TopCell>& mine, int dim,
                                      ForceReducer& comm);

/// The global cell of the record `own` from every rank's records `all` (gather_top_cells):
/// mass and centre of mass summed in rank order, b_max bounded as for an inner cell (each
/// part's b_max plus its distance to the common centre), the quadrupoles shifted to the
/// common centre. `centre`: the cell's geometric centre (the centre of mass of a massless
/// cell). copies: how many ranks hold part of it (1: own is the whole cell); adder: the
/// lowest of them, whose copy adds it.
struct GlobalCell {
  double mass, comx, comy, comz, bmax;
  Quadrupole<double> quad;
  std::size_t copies;
  std::uint32_t adder;
};
GlobalCell global_cell(const std::vector<TopCell>& all, const TopCell& own,
                       const double (&centre)[3], int dim);

/// Collective. t: this rank's local tree in the cube of all ranks' bodies, moments computed
/// (compute_moments; quadrupoles when asked for), keys kept (build_tree). Finds the cells of
/// t whose key range meets another rank's span of keys (the only cells that another rank's
/// bodies can share), all-gathers their moments, and gives each such cell the moments of the
/// global cell: mass and centre of mass summed, b_max bounded as for an inner cell, the
/// quadrupoles shifted to the common centre (physics/multipole.hpp). Marks t.silent where a
/// lower rank's copy adds the cell, and rebuilds the walk records (call set_opening after).
/// Every rank combines the records in rank order, so every copy of a cell gets the same bits.
/// Returns the number of t's cells that other ranks share (none when some rank has more than
/// max_cells candidates). Throws nbody::Error for a malformed record (another rank's
/// bytes).
/// `curve`: the order of the domain's keys (a rank owns a piece of that line): the spans and
/// the cells' ranges are taken along it.
std::size_t share_top_cells(tree::Tree& t, ForceReducer& comm, DomainCurve curve = kDefaultCurve,
                            std::size_t max_cells = kMaxTopCells);

}  // namespace nbody::parallel
