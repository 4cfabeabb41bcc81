#pragma once
// Contact search on a hierarchical uniform grid built by sorting, O(N log N) (the sort;
// the search itself is O(N) for bounded density).
//
// Why hierarchical: a single grid with cells as large as the largest body degenerates to
// O(N^2) when one body is much larger than the rest, and one with small cells misses the
// pairs of a large body. Here a body of reach rho = r (1 + skin) lives at the level l whose
// cells, of edge h0 * 2^l, are at least 2 rho wide (h0 from the median radius, so most
// bodies are at level 0). Two bodies that may touch are then in adjacent cells (or the
// same one) of the coarser of their two levels, so:
//   - same level: each cell looks at itself and its forward neighbours (half shell; rows of
//     consecutive keys, found with pointers that only move forward as the cells go by);
//   - different levels: each cell looks at the 3^dim cells around its parent cell on every
//     coarser level that has bodies (binary search), or, when the coarser level has few cells,
//     each coarse cell looks at the fine cells whose parents are within one cell of it.
// Every pair is found exactly once, in an order fixed by the keys: the same for any number
// of threads. The grid's cells of all levels share one origin and nest exactly (the
// coordinate at level l is the level-0 coordinate shifted right by l), and cells are
// sized with a relative margin of 1e-5 so that rounding in the coordinates can never put
// two touching bodies two cells apart.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nbody/particles.hpp"
#include "nbody/physics/collision_response.hpp"

namespace nbody::collisions {

/// Grid positions of a candidate pair, a < b.
struct CandidatePair {
  std::uint32_t a, b;
};

/// The bodies of ps in grid order (out[p] is body order[p]); OpenMP for large N.
void gather_bodies(const ParticleSystem& ps, const std::vector<std::uint32_t>& order, int threads,
                   std::vector<CollisionBody<double>>& out);

class ContactGrid {
 public:
  /// Sorts the bodies of ps into cells for pairs with distance < (r_a + r_b) (1 + skin).
  /// Throws nbody::Error for more than 2^32 - 1 bodies.
  void build(const ParticleSystem& ps, int dim, double skin, int threads);
  /// The same for bodies already gathered (order() then indexes `bodies`).
  void build(const std::vector<CollisionBody<double>>& bodies, int dim, double skin, int threads);

  /// Index in ps (or in the gathered bodies) of the body at grid position p.
  [[nodiscard]] const std::vector<std::uint32_t>& order() const { return order_; }

  /// The pairs with |x_a - x_b| < (r_a + r_b) (1 + skin), as grid positions; `bodies` are
  /// the bodies build() saw, in grid order (bodies[p] is ps body order()[p]).
  void find_pairs(const CollisionBody<double>* bodies, std::vector<CandidatePair>& pairs);

 private:
  struct Level {
    std::size_t first_cell = 0, end_cell = 0;  // range in cell_key_
  };
  /// build() for any source: body(i) returns the CollisionBody of body i.
  template <class BodyAt>
  void build_from(std::size_t n, const BodyAt& body, int dim, double skin, int threads);
  void build_cells();
  void search_chunk(std::size_t first, std::size_t end, const CollisionBody<double>* bodies,
                    std::vector<CandidatePair>& out) const;
  /// Pairs of cell `cell` (on levels_[level]) with bodies on the other levels, for the level
  /// pairs searched from this side (from_coarse_).
  void search_other_levels(std::size_t cell, std::size_t level, const CollisionBody<double>* bodies,
                           std::vector<CandidatePair>& out) const;

  int dim_ = 3;
  int threads_ = 0;
  double scale_ = 1.0;  // 1 + skin
  // Mixed-radix keys: key = ((level * n0 + c0) * n1 + c1) * n2 + c2 (3D; 2D drops c2),
  // with cell coordinates offset by 1 so that neighbours at -1 and +1 stay in range.
  std::uint64_t extent_[3] = {1, 1, 1};  // n_axis: cells per axis including the padding
  std::uint64_t stride_[3] = {0, 0, 0};  // key step of one cell along each axis
  std::uint64_t level_stride_ = 0;       // key step of one level
  double origin_[3] = {0, 0, 0};         // lower corner of the level-0 cell (0, 0, 0)
  double h0_ = 1;                        // level-0 cell width
  double inv_h0_ = 1;
  double max_cells_ = 0;  // largest level-0 cell coordinate
  std::vector<std::uint32_t> order_;
  std::vector<std::uint64_t> body_key_;  // key of the body at each grid position
  std::vector<std::uint64_t> cell_key_;
  std::vector<std::uint32_t> cell_begin_;    // grid positions; cell c is [begin[c], begin[c+1])
  std::vector<Level> levels_;                // non-empty levels, coarser last
  std::vector<std::uint32_t> level_number_;  // level number of each entry of levels_
  // from_coarse_[fine * levels + coarse]: 1 when the pairs of these two levels are found by
  // the coarse level's cells scanning the fine cells below their neighbourhood, 0 when the
  // fine cells look up the coarse cells around their parent.
  std::vector<char> from_coarse_;
  // scratch
  std::vector<double> radii_;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed_, keyed_tmp_;
  std::vector<std::vector<CandidatePair>> chunk_pairs_;
};

}  // namespace nbody::collisions
