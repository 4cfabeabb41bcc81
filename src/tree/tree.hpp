#pragma once
// The Barnes-Hut tree's flat layout (octree in 3D, quadtree in 2D), shared by the build
// (tree_build.cpp), the moments (tree_moments.cpp) and the force walk (tree_walk.cpp).
//
// Flat arrays instead of pointer nodes: cells are indices, every per-cell quantity is
// one array (structure of arrays), the children of a cell are created together and so
// are contiguous (first_child + child_count), and children always come after their parent
// (the build appends them), so a reverse pass over the cells is a bottom-up pass.
// Bodies are stored in tree order (sorted by Morton key), so every cell covers a
// contiguous range [begin, end) of the tree-ordered body arrays.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "core/aligned_vector.hpp"
#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"
#include "nbody/physics/multipole.hpp"

namespace nbody::tree {

using nbody::AlignedVector;

/// Morton key bits per axis: 21 in 3D (63-bit keys), 31 in 2D (62-bit keys). Also the
/// maximum depth: a cell at that level cannot be split, so it is a leaf whatever it holds.
[[nodiscard]] constexpr int key_bits_per_axis(int dim) {
  return dim == 2 ? 31 : 21;
}

// The CPU solvers' tree shape (tree_solver.cpp, the domain decomposition's local trees).
/// Bodies per leaf at most (except at maximum depth).
inline constexpr std::size_t kLeafSize = 8;
/// Bodies per walk group at most. Larger groups share one walk among more bodies but open
/// more cells. Plummer N = 1e5, theta 0.5, 2 threads, float: 64 -> 135-145 ms (3183
/// interactions/body, walk alone 53 ms), 96 -> 130 ms, 128 -> 120-124 ms (3861/body, walk
/// alone 34 ms); double is the same at 64 and 128 (~252 ms, kernel-bound).
inline constexpr std::size_t kMaxGroup = 128;

struct Tree {
  int dim = 3;
  std::size_t leaf_size = 8;

  // Root cube: centre and half edge length.
  double root_x = 0, root_y = 0, root_z = 0, root_half = 0;

  // Bodies in tree order.
  std::vector<double> x, y, z, m;
  std::vector<std::uint32_t> order;  // tree position -> index in the ParticleSystem
  std::vector<std::uint64_t> keys;   // sorted Morton keys

  // Cells (index 0 is the root, when there are bodies).
  std::vector<std::int32_t> first_child;  // -1 for a leaf
  std::vector<std::uint8_t> child_count;  // 0 for a leaf
  std::vector<std::int32_t> parent;       // -1 for the root
  std::vector<std::uint8_t> level;        // root 0
  std::vector<double> cx, cy, cz, half;   // geometric centre, half edge length
  std::vector<std::uint32_t> begin, end;  // body range in tree order
  // Moments (tree_moments.cpp).
  std::vector<double> mass, comx, comy, comz;
  std::vector<Quadrupole<double>> quad;  // about the COM; empty unless asked for
  // Largest distance from the centre of mass to a body of the cell (an upper bound for
  // inner cells: the children's, shifted), for the bmax opening criterion.
  std::vector<double> bmax;
  /// The criterion the walk records' `open` values are for (compute_moments: Geometric,
  /// set_opening: its argument); the walk of received sources checks it (essential_tree.hpp).
  OpeningCriterion opening = OpeningCriterion::Geometric;

  /// What the force walk reads of a cell, packed in one 80-byte record (built by
  /// compute_moments): the walk visits thousands of cells per group, and reading them from
  /// ten separate arrays cost ten cache lines per visit (measured: the walk took 58% of
  /// the evaluation with the arrays above and an explicit stack, against the kernel's 38%).
  /// `next` is the cell to visit after this one and its subtree (the next sibling, else
  /// the parent's next; -1 at the end): a stackless depth-first walk.
  /// `open` is what the opening criterion compares (set_opening()): the squared size
  /// (edge, or b_max) for the geometric and bmax criteria, M s^2 for the relative one.
  /// first_child: the first child, -1 for a leaf, kPrunedCell for a cell of an essential
  /// tree sent without its children (essential_tree.hpp): always used whole.
  struct WalkNode {
    double comx, comy, comz, mass;
    double cx, cy, cz, half;
    std::int32_t first_child, next;  // first_child -1 for a leaf
    std::uint32_t begin, end;
    double open;
  };
  std::vector<WalkNode> walk_nodes;
  static constexpr std::int32_t kPrunedCell = -2;
  /// Cells of the shared top tree (parallel/shared_top_tree.hpp) that another rank's copy
  /// adds: their moments are the whole global cell's, so the walk opens or accepts them as
  /// one process does, but an accepted one adds nothing here (its walk record's mass is 0,
  /// its quadrupole ignored). Empty: none (one process, or no cell shared).
  std::vector<std::uint8_t> silent;

  [[nodiscard]] std::size_t cells() const { return first_child.size(); }
  [[nodiscard]] std::size_t bodies() const { return x.size(); }
  [[nodiscard]] bool is_leaf(std::size_t c) const { return first_child[c] < 0; }
};

struct InsertionPool;  // the insertion build's pointer tree and locks (tree_insertion_build.cpp)

/// Where the insertion build's time went in its last call (seconds): the bounding cube and
/// the bodies' keys, the concurrent insertion, the layout into the flat arrays.
struct InsertionTimes {
  double prepare = 0, insert = 0, layout = 0;
  std::size_t nodes = 0;    // pointer cells made (== the flat tree's cells)
  std::size_t retries = 0;  // insertions redone because the node pool was too small
};

/// Reusable scratch of the builds (kept between evaluations to avoid reallocation).
struct BuildScratch {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed, tmp;
  std::shared_ptr<InsertionPool> insertion;   // made by the first insertion build
  std::vector<std::int32_t> insertion_cells;  // the layout's flat cell -> pool cell
  InsertionTimes insertion_times;
};

/// The root cube: centre and half edge length.
struct RootCube {
  double x = 0, y = 0, z = 0, half = 0;
};

/// The root cube build_tree makes for bodies whose coordinates lie in [lo, hi] per axis
/// (z: [0, 0] when dim == 2): what a domain decomposition gives every rank from the
/// all-reduced bounds, so that each local tree's cells are cells of the one global tree.
[[nodiscard]] RootCube root_cube_from_bounds(const double (&lo)[3], const double (&hi)[3]);

/// Builds the tree of ps's bodies (x, y only when dim == 2): bounding cube, Morton keys,
/// sort, permutation into tree order, top-down split into cells of <= leaf_size bodies.
/// threads: OpenMP threads (0 = default).
void build_tree(const ParticleSystem& ps, int dim, std::size_t leaf_size, int threads, Tree& t,
                BuildScratch& scratch);
/// The same in the given root cube instead of the bodies' own (every body must lie inside
/// it: one outside would get the key of the nearest face's cell). A rank's local tree in
/// the global cube: its cells are the global tree's cells that hold its bodies, restricted
/// to them (whole global cells wherever the rank's key range covers them).
void build_tree(const ParticleSystem& ps, int dim, std::size_t leaf_size, int threads,
                const RootCube& cube, Tree& t, BuildScratch& scratch);

/// The seed documents' build (Burtscher & Pingali 2011; seed 001 section 6.1.3): the same
/// root cube as build_tree, every body inserted from the root by an OpenMP loop into a
/// pointer tree whose cells each have an OpenMP lock (a full leaf split under its lock),
/// then laid out breadth first into t. The result is build_tree's tree, cell for cell and
/// body for body (each leaf's bodies sorted as build_tree sorts them), for any number of
/// threads and any interleaving; scratch.insertion_times says where the time went.
void build_tree_insertion(const ParticleSystem& ps, int dim, std::size_t leaf_size, int threads,
                          Tree& t, BuildScratch& scratch);

// The steps both builds share, so that they make the same cells (tree_build.cpp).
/// Clears t's cells and sizes its body arrays for n bodies.
void reset_tree(Tree& t, std::size_t n, int dim, std::size_t leaf_size);
/// The smallest and largest coordinates of ps's bodies (z: 0 when dim == 2; +-inf when there
/// are none).
void body_bounds(const ParticleSystem& ps, int dim, int threads, double (&lo)[3], double (&hi)[3]);
/// The root cube around ps's bodies into t.root_* (n >= 1).
void bounding_cube(const ParticleSystem& ps, int dim, int threads, Tree& t);
/// Every body's Morton key in t's root cube, as (key, body index) in body order: the
/// integer grid coordinates' bits interleaved, x the lowest of each digit.
void morton_keys(const ParticleSystem& ps, int dim, int threads, const Tree& t,
                 std::vector<std::pair<std::uint64_t, std::uint32_t>>& keyed);
/// Appends the root cell, covering every body.
void append_root(Tree& t);
/// Appends child `digit` of cell c, covering [b, e) (children of one cell are appended
/// together, in digit order).
void append_child(Tree& t, std::size_t c, std::uint32_t digit, std::uint32_t b, std::uint32_t e);

/// Fills mass, centre of mass, b_max and (when quadrupole) the quadrupole tensor of every
/// cell, bottom-up, and the walk's records (with the geometric criterion's `open`).
void compute_moments(Tree& t, bool quadrupole);

/// The walk records' `open` for the criterion `mac` (physics/opening_criterion.hpp).
void set_opening(Tree& t, OpeningCriterion mac);
/// One cell's `open` value for `mac` (what set_opening stores; moments computed).
[[nodiscard]] double opening_value(const Tree& t, std::size_t c, OpeningCriterion mac);

/// The walk records (with the geometric criterion's `open`) from t's cell arrays and
/// moments, and their `next` links; compute_moments' last step, and the essential tree
/// reader's.
void build_walk_nodes(Tree& t);

/// A group of contiguous tree-ordered bodies that share one interaction list.
struct Group {
  std::uint32_t begin, end;
  /// How many of the group's bodies count in walk_forces' interactions; 0: all of them.
  /// (compute_forces_active walks groups shrunk to the range of their active bodies: the
  /// inactive bodies inside the range ride along, their results dropped, uncounted.)
  std::uint32_t counted = 0;
  /// The range whose bounding box decides which cells the walk opens; box_end 0: the
  /// group's own. compute_forces_active gives a shrunk group its whole group's box, so an
  /// active body gets the interaction list (and the accuracy) of a full evaluation,
  /// whatever else is active.
  std::uint32_t box_begin = 0, box_end = 0;
};

/// Splits the bodies into walk groups: the largest cells of <= max_group bodies, with
/// consecutive small siblings merged while they fit (leaves bigger than max_group,
/// possible at maximum depth, are cut into chunks of max_group).
void make_groups(const Tree& t, std::size_t max_group, std::vector<Group>& groups);

/// The groups a walk of the active bodies alone takes (hierarchical time steps): those of
/// `groups` that hold an active body (`positions`: the active bodies' tree positions,
/// ascending), each shrunk to the range from its first to its last active body, starting on
/// the kernel's lane (`lanes` bodies side by side) of the whole group and keeping the whole
/// group's box, so an active body's forces are a full walk's, bit for bit. `keep(g)` false
/// leaves a group out (another process's share); `whole`, when given, gets the unshrunk
/// groups (a domain's receiver boxes: what their walks may open).
void active_groups(const std::vector<Group>& groups, const std::vector<std::uint32_t>& positions,
                   std::uint32_t lanes, std::vector<Group>& out,
                   std::vector<Group>* whole = nullptr,
                   const std::function<bool(const Group&)>& keep = {});

struct WalkOptions {
  double theta = 0.5;
  bool quadrupole = false;
  double softening = 0;
  int threads = 0;
  /// Relative criterion: alpha and every body's |a| / G of the last evaluation, in tree
  /// order (each group takes its smallest); null: the geometric criterion with theta.
  OpeningCriterion mac = OpeningCriterion::Geometric;
  double alpha = 0;
  const double* a_old = nullptr;
  /// Fill WalkOutput::interactions (a domain decomposition balances its ranks by them).
  bool count_interactions = false;
};

/// The walk's results per unit G, in TREE order.
struct WalkOutput {
  std::vector<double> ax, ay, az;
  std::vector<double> phi;  // potentials; filled only when asked for
  /// Per body (tree order), with WalkOptions::count_interactions: the length of its
  /// group's interaction list (pairs + accepted cells); 0 for bodies outside the groups.
  std::vector<std::uint32_t> interactions;
  /// Pruned cells of received sources (essential_tree.hpp) that a group's own test would
  /// have opened: used whole all the same. 0 when the sender's test was monotone, as
  /// essential_tree.cpp argues; a test counts it.
  std::uint64_t forced_accepts = 0;
};

/// Accelerations per unit G of every body, in TREE order, into out.ax, ay, az (resized),
/// and with `potential` in the same pass the potentials into out.phi (monopole terms of
/// the accepted cells and opened bodies, plus the quadrupole terms when asked; each
/// body's own term left out); out.phi is left alone without. Bodies outside `groups`
/// get exact zeros. Real is the kernel's arithmetic (float or double). Returns the
/// number of interactions (pairs + accepted cells) summed over the groups' counted
/// bodies (Group::counted). Deterministic:
/// each group's sum is fixed by the tree, whatever the number of threads.
template <class Real>
std::uint64_t walk_forces(const Tree& t, const std::vector<Group>& groups,
                          const WalkOptions& options, bool potential, WalkOutput& out);

/// The same walk with other sources: the bodies of `targets` (its groups, and options.a_old
/// in its tree order) against the cells and bodies of `sources`, e.g. an essential tree
/// another rank sent (read_essential_tree) in the same root cube. No term is left out of
/// the potentials (no target is a source; coincident bodies give 0 without softening, as
/// in the direct sum). Pruned cells are always used whole (out.forced_accepts). Throws
/// nbody::Error when the sources' dimension, quadrupoles or opening values do not match
/// the options. A domain's forces: this with each received tree, plus walk_forces(targets,
/// groups, ...) with its own, summed.
template <class Real>
std::uint64_t walk_forces(const Tree& targets, const std::vector<Group>& groups,
                          const Tree& sources, const WalkOptions& options, bool potential,
                          WalkOutput& out);

/// The active bodies' results of a walk over active_groups() (per unit G, tree order; body
/// i at tree position position[i]) into ps's accelerations (and potentials), times G; the
/// other bodies' are left alone.
void store_active(const WalkOutput& w, const std::vector<std::uint32_t>& position,
                  const std::vector<std::uint32_t>& active, double G, int dim, bool potential,
                  ParticleSystem& ps);

}  // namespace nbody::tree
