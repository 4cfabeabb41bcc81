#pragma once
// Locally essential trees (Salmon 1991; Warren & Salmon 1993; GADGET, Bonsai, PKDGRAV):
// the domain decomposition's tree forces without the replicated state.
//
// Every rank builds the tree of its own bodies in the GLOBAL root cube (build_tree with a
// RootCube), so its cells are cells of the one global tree. For every other rank it walks
// that tree from the root with the walk's own opening test, evaluated against the
// receiver's bodies' bounding box instead of a group's box (ReceiverBox), and writes
// what that receiver's groups could need: a cell the box accepts as a multipole record
// without children ("pruned": never opened by the receiver), a cell it opens with its
// children, a leaf it opens with its bodies. The receiver reads each such buffer into a
// Tree (read_essential_tree) and walks its own groups against it (walk_forces with other
// sources); its forces are its own tree's walk plus those of the received trees.
//
// The test is monotone (essential_tree.cpp): a group inside the box opens no cell the
// box accepted, so each group's interaction list from a received tree is the list it would
// get from the sender's whole tree. A global cell that holds bodies of several ranks would
// be seen as one multipole per rank instead of one: the shared top tree
// (parallel/shared_top_tree.hpp) gives every copy the whole cell's moments and marks all but
// one copy silent (Tree::silent, sent as CellRecord::flags), so the forces are one
// process's wherever the cuts leave a walk group whole.
//
// The buffers are nbody::ForceReducer::Bytes: they travel between processes, so the
// reader trusts nothing in them (sizes, counts, indices, the tree's shape, finite values).
#include <vector>

#include "tree/tree.hpp"

namespace nbody::tree {

/// What the sender needs to know of a receiver: its bodies' bounding box and, for the
/// relative criterion, its bodies' smallest |a_old| / G.
struct ReceiverBox {
  int dim = 3;
  /// The bounding box of the receiver's bodies (tree coordinates: z = 0 in 2D); lo > hi
  /// on some axis: no bodies (then nothing is sent).
  double lo[3] = {INFINITY, INFINITY, INFINITY};
  double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  /// The smallest |a_old| / G of the receiver's bodies; negative: the receiver has no old
  /// accelerations (its walk then opens by theta: the geometric criterion, as the
  /// solvers' first evaluation does with the relative one).
  double a_min = -1;
};

/// The receiver box of t's bodies; a_old: |a_old| / G in t's tree order (the walk's
/// WalkOptions::a_old), or null.
[[nodiscard]] ReceiverBox receiver_box(const Tree& t, const double* a_old);

/// A receiver described by up to max_boxes boxes: each the box of a run of whole groups
/// (consecutive in tree order, about N / max_boxes bodies; a group's box range when it has
/// one), so every group lies inside one box. One box of a Plummer domain spans its far
/// outliers and so nearly the whole cube: the sender would send nearly everything
/// (measured: 49977 of 50000 bodies at P = 2); many small boxes send what the groups
/// need.
/// split 2 (parallel::piece_split_from, NBODY_DOMAIN_PIECE_SPLIT): a run of groups whose
/// smallest cell holds or borders the root's centre of mass (edge >= distance) is described by
/// its part in each child of that cell, since one box around it spans the centre (measured:
/// 21-27 % smaller essential trees at 4 domains in 3D, 65 % in 2D, Plummer 20,000; its groups
/// meet the cells all parts accepted pruned, and use them whole). 0 and 1: one box a run.
[[nodiscard]] std::vector<ReceiverBox> receiver_boxes(const Tree& t, std::vector<Group> groups,
                                                      const double* a_old, std::size_t max_boxes,
                                                      int split = 0);

/// Boxes as bytes (for an all-gather) and back; the reader checks the size, the dimension,
/// that the values are numbers and that all boxes agree on a_min's sign (nbody::Error).
[[nodiscard]] std::vector<char> receiver_boxes_bytes(const std::vector<ReceiverBox>& boxes);
[[nodiscard]] std::vector<ReceiverBox> read_receiver_boxes(const std::vector<char>& bytes);

/// The criterion a walk with `options` and this receiver uses: Relative when options.mac
/// is and the receiver has old accelerations (box.a_min >= 0), the geometric one for a
/// relative walk without them, options.mac otherwise.
[[nodiscard]] OpeningCriterion effective_criterion(const WalkOptions& options,
                                                   const ReceiverBox& box);

/// Throws nbody::Error unless walk_forces(targets, ..., sources, options) can use sources:
/// the same dimension, opening values for the walk's criterion, quadrupoles if asked for.
void check_sources(const Tree& targets, const Tree& sources, const WalkOptions& options);

/// The part of `local` (moments computed; quadrupoles when options.quadrupole) that the
/// receiver's groups could open, with options' theta, alpha and criterion
/// (effective_criterion) against `box`. Empty trees and empty boxes give a buffer of no
/// cells. Throws nbody::Error when options want quadrupoles that `local` lacks, or the
/// box's dimension is not local's.
[[nodiscard]] std::vector<char> essential_tree(const Tree& local, const ReceiverBox& box,
                                               const WalkOptions& options);
/// The same for a receiver of several boxes (receiver_boxes): a cell is sent opened when
/// one of the boxes that opened its parent opens it. No boxes: no cells.
[[nodiscard]] std::vector<char> essential_tree(const Tree& local,
                                               const std::vector<ReceiverBox>& boxes,
                                               const WalkOptions& options);

/// The Tree of an essential_tree buffer, for walk_forces as sources: cells (pruned ones
/// with first_child Tree::kPrunedCell and no bodies), moments, quadrupoles when sent, the
/// walk records with the sent criterion's opening values, the opened leaves' bodies (no
/// order, no keys: these are not the receiver's bodies). Throws nbody::Error on any
/// malformed buffer.
[[nodiscard]] Tree read_essential_tree(const std::vector<char>& bytes);

/// How many cells of each kind a buffer holds (for reports and tests; validated as read).
struct EssentialTreeCounts {
  std::size_t cells = 0, pruned = 0, leaves = 0, bodies = 0, bytes = 0;
};
[[nodiscard]] EssentialTreeCounts essential_tree_counts(const Tree& received, std::size_t bytes);

}  // namespace nbody::tree
