#pragma once
// Ownership of bodies in the domain decomposition (issue 35, docs/distributed.md part 2):
// every rank owns the bodies whose keys (Hilbert or Morton: DomainCurve) lie in its piece
// [first[r], first[r+1]) of the key line, cut so that the last step's force work is balanced;
// bodies that leave a piece migrate to its owner. A library layer: the stepping driver calls these
// every step.
//
// The keys come from the CPU tree's grid (tree::morton_keys in tree::bounding_cube's cube of
// all bodies of all ranks), and every cut is a boundary of the tree's cells of some level, so
// each rank's piece is a union of the global tree's cells: the locally essential trees rely
// on it, and a rank's local tree has the global tree's cells below that level.
//
// Every function taking a ForceReducer is collective: every rank calls it, in the same
// order, and (for the decisions) gets the same result, computed from all-reduced data.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nbody/distributed.hpp"
#include "nbody/particles.hpp"

namespace nbody::parallel {

/// The root cube of the keys: centre and half edge length, tree::Tree's root_x/y/z/half.
struct KeyCube {
  double cx = 0, cy = 0, cz = 0, half = 1;
};

/// Collective: the union of every rank's box [lo, hi] (a rank with `has` false adds nothing),
/// into lo/hi on every rank; false when no rank has one. Min and max are exact, so the
/// union's extremes are those of all bodies. One all-gather of 56 bytes per rank.
bool union_of_boxes(ForceReducer& comm, bool has, double (&lo)[3], double (&hi)[3]);

/// The cube around every rank's bodies, identical on every rank and bit for bit the cube
/// tree::bounding_cube computes for the union of all ranks' bodies (min and max are exact,
/// so the union's extremes are the extremes of the ranks' extremes, and the cube is then
/// computed by the tree's own code). A rank with no bodies contributes nothing; with no
/// bodies anywhere the cube is {0, 0, 0, 1}. dim 2: z ignored (the tree's convention).
KeyCube global_cube(const ParticleSystem& local, int dim, ForceReducer& comm, int threads);

/// The curve along which the key line orders the bodies. Both visit every tree cell of every
/// level as one aligned range of keys of width cell_width(dim, level) (core/hilbert.hpp), so
/// the cuts and the essential trees are the same code for both; the Hilbert curve's pieces
/// are more compact (consecutive cells are face neighbours, the Z curve jumps), so the
/// essential trees sent are smaller (DISABLED_MeasureBytes in test_domain_curve.cpp).
enum class DomainCurve { Morton, Hilbert };
/// What a run uses unless told otherwise. Measured both ways: one evaluation after a
/// rebalance (Plummer, N = 200000, theta 0.5, 8 seeds) sent 31 % fewer essential-tree bytes
/// with Hilbert at P = 4, 8 and 16; but `nbody bench scaling-mpi` on 16 ranks (N = 524288,
/// its one seed, steps after the first) sent 13 % and 8 % more at P = 4 and 8, the same at
/// 16, in the same time within the spread of calls, and migrated 3x the bodies a step. So
/// Morton stays the default until a longer study settles it (docs/distributed.md).
inline constexpr DomainCurve kDefaultCurve = DomainCurve::Morton;

/// Each local body's key in `cube` along `curve`, in body order. Morton: tree::morton_keys'
/// keys; Hilbert: the same grid point's Hilbert key (hilbert_from_morton). One run must use
/// one curve everywhere (cut, imbalance, migration, census of ownership).
std::vector<std::uint64_t> domain_keys(const ParticleSystem& local, int dim, const KeyCube& cube,
                                       int threads, DomainCurve curve = kDefaultCurve);

/// Bits of a key: dim * tree::key_bits_per_axis(dim) (63 in 3D, 62 in 2D); keys < 2^bits.
[[nodiscard]] int key_bits(int dim);
/// Levels of the key (the tree's maximum depth): 21 in 3D, 31 in 2D.
[[nodiscard]] int key_levels(int dim);
/// The key width of a tree cell at `level` (0 = root): 2^(dim * (key_levels - level)).
[[nodiscard]] std::uint64_t cell_width(int dim, int level);

/// Past every key (keys use at most 63 bits): the end of the last rank's piece.
inline constexpr std::uint64_t kKeyEnd = ~std::uint64_t(0);

/// Rank r owns the keys [first[r], first[r+1]): first.size() == P + 1, first[0] == 0,
/// first[P] == kKeyEnd, non-decreasing (a piece may be empty). Every interior cut is a
/// multiple of cell_width(dim, level).
struct DomainCuts {
  std::vector<std::uint64_t> first;
  /// The finest tree level whose cell boundaries hold every cut (0 for P == 1).
  int level = 0;
  /// Histogram rounds (small all-reduces) balance() took.
  int rounds = 0;
  /// False when some cut could not reach the tolerance: bodies sharing one key (coincident
  /// bodies cannot be split), one body costlier than the tolerance allows, or the memory cap.
  bool tolerance_met = true;

  [[nodiscard]] int parts() const { return static_cast<int>(first.size()) - 1; }
  /// The rank whose piece holds `key` (binary search).
  [[nodiscard]] int owner(std::uint64_t key) const;
};

/// One piece: every key on rank 0 (a run of one process, or before the first balance).
[[nodiscard]] DomainCuts whole_line(int parts);

struct BalanceOptions {
  /// Target: every rank's cost within (1 +- tolerance) of the mean where the data allows
  /// (each cut within tolerance / 2 of the mean of its ideal place).
  double tolerance = 0.05;
  /// 0: no cap; else a rank takes at most this many bodies (the memory cap). balance()
  /// throws nbody::Error when P * cap < N, or when bodies sharing one key make it impossible.
  std::size_t max_bodies_per_rank = 0;
};

/// Collective. Cuts the key line into P contiguous pieces of about equal total cost
/// (cost[i] > 0 and finite per local body, e.g. its interactions of the last step; an
/// empty `cost` counts 1 per body). A global histogram of cost and count over the top
/// levels of the key (4096 buckets, one all-reduce), cut by prefix sums; then only the
/// cells that hold an unfinished cut are histogrammed a few levels deeper (another small
/// all-reduce per round) until every cut is within the tolerance or the key bits run out.
/// No rank ever gathers keys: a round sums (cuts x 512) buckets in 3D.
DomainCuts balance(const std::vector<std::uint64_t>& keys, const std::vector<double>& cost, int dim,
                   ForceReducer& comm, const BalanceOptions& options = {});

/// This rank's part of one histogram round of balance(), wherever its keys are (host arrays,
/// or a GPU rank's device arrays: parallel/cuda/device_domain.cu).
class KeyHistogram {
 public:
  virtual ~KeyHistogram() = default;
  /// For every local key k in a cell [cells[c], cells[c] + width) (cells sorted, disjoint),
  /// adds the body's cost to h[2 b] and 1 to h[2 b + 1], b = c * buckets + ((k - cells[c]) >>
  /// shift).
  virtual void add(const std::vector<std::uint64_t>& cells, std::uint64_t width, int shift,
                   std::size_t buckets, double* h) const = 0;
  /// Whether some local cost is not positive and finite (balance() then throws on every rank).
  [[nodiscard]] virtual bool bad_cost() const = 0;
};
/// balance() of the keys and costs a KeyHistogram sums.
DomainCuts balance(const KeyHistogram& local, int dim, ForceReducer& comm,
                   const BalanceOptions& options = {});

/// Collective: the total cost each rank would own under `cuts` (every rank's bodies, keys
/// and costs, wherever they are now; an empty cost counts 1 per body), in rank order.
std::vector<double> rank_costs(const std::vector<std::uint64_t>& keys,
                               const std::vector<double>& cost, const DomainCuts& cuts,
                               ForceReducer& comm);
/// Collective: max over ranks of rank_costs / their mean (1 = perfect; 1 with no cost).
double imbalance(const std::vector<std::uint64_t>& keys, const std::vector<double>& cost,
                 const DomainCuts& cuts, ForceReducer& comm);

struct MigrationStats {
  std::size_t sent = 0, received = 0, bytes_sent = 0;
};

/// Collective. Every local body whose key another rank owns goes there (one exchange()),
/// with all its ParticleSystem fields: position, velocity, acceleration, potential (when
/// present), mass, radius, id. The bodies that stay keep their order; arrivals are appended
/// in sender-rank order (each sender's in its order). `keys` (and `cost`, when given) are
/// compacted and appended the same way. After it, the accelerations (potentials) are valid
/// when they were on every rank that contributed bodies; potentials stay present only when
/// every contributor had them. Throws nbody::Error for sizes that do not match local.size(),
/// and for a malformed buffer (size, header, dim, cost flag, or a key this rank does not
/// own): the rank that throws is the one that received it (a driver aborts the run). A rank
/// whose own input is bad still takes part in the exchange (so the others do not hang) and
/// its receivers throw too. Ids: arrivals keep their ids; ParticleSystem::add's next free id
/// is local, so new bodies in a distributed run need ids assigned globally.
MigrationStats migrate(ParticleSystem& local, std::vector<std::uint64_t>& keys,
                       std::vector<double>* cost, const DomainCuts& cuts, ForceReducer& comm);

/// Ownership census: cheap sums over every rank's ids that change when a body is lost or
/// doubled (the count, the sum and xor of the ids, and the sum of a 64-bit hash of each id,
/// which no lost-and-doubled pair can keep by accident).
struct Census {
  std::uint64_t count = 0, id_sum = 0, id_xor = 0, id_hash = 0;
};
/// Collective (one all_gather of 32 bytes per rank); identical on every rank.
Census census(const ParticleSystem& local, ForceReducer& comm);
/// Throws nbody::Error "WHERE: ownership census changed: ..." naming what differs.
void check_census(const Census& before, const Census& after, const char* where);

}  // namespace nbody::parallel
