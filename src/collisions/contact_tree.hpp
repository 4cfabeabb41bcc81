#pragma once
// Contact search through a quadtree (2D) / octree (3D) of the bodies, after seed 001 §3:
// a body looks in its leaf cell and the cells sharing an edge or a corner with it, and
// climbs to the parent cell while it is larger than its cell.
//
// The tree is implicit: bodies sorted by Morton key (21 bits per axis in 3D, 31 in 2D), so
// that every cell of every level is one run of the sorted keys, found by binary search.
// A body's leaf is the deepest cell it shares with no sorted neighbour (one body a leaf, as
// in the seed's insertion build). The seed's rules, made exact (the same pairs as the grid):
//   - each pair is searched from its larger body (radius, then sorted position), so the
//     other's reach is never larger and is found within twice the searcher's reach;
//   - parent climbing: from the leaf, up while the cell is narrower than that reach
//     (2 rho, plus one finest cell and a margin against rounding);
//   - the 3^dim cells of that level around it (edge and corner neighbours), descended into
//     children (the seed's "cells whose corner is on the edge") while they hold many bodies,
//     skipping children out of reach.
// Pairs come in sorted-position order of their searcher: the same for any thread count.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "collisions/contact_grid.hpp"
#include "nbody/particles.hpp"
#include "nbody/physics/collision_response.hpp"

namespace nbody::collisions {

class ContactTree {
 public:
  /// Sorts the bodies of ps by Morton key for pairs with distance < (r_a + r_b)(1 + skin).
  /// Throws nbody::Error for more than 2^32 - 1 bodies.
  void build(const ParticleSystem& ps, int dim, double skin, int threads);
  /// The same for bodies already gathered (order() then indexes `bodies`).
  void build(const std::vector<CollisionBody<double>>& bodies, int dim, double skin, int threads);

  /// Index in ps (or in the gathered bodies) of the body at sorted position p.
  [[nodiscard]] const std::vector<std::uint32_t>& order() const { return order_; }

  /// The pairs with |x_a - x_b| < (r_a + r_b)(1 + skin), as sorted positions a < b;
  /// `bodies` in sorted order (bodies[p] is body order()[p]).
  void find_pairs(const CollisionBody<double>* bodies, std::vector<CandidatePair>& pairs);

 private:
  template <class BodyAt>
  void build_from(std::size_t n, const BodyAt& body, int dim, double skin, int threads);
  /// Pairs searched from body p (sorted position).
  void search_body(std::uint32_t p, const CollisionBody<double>* bodies,
                   std::vector<CandidatePair>& out) const;
  /// Bodies of the cell `cell` (coordinates at `shift`) that body p owns a pair with;
  /// [from, to) bounds the cell's run of keys (and holds p's position or lies beside it).
  void visit(std::uint32_t p, const CollisionBody<double>* bodies, const std::uint64_t* cell,
             int shift, std::size_t from, std::size_t to, std::vector<CandidatePair>& out) const;
  /// First sorted position in [from, to) whose key is >= key, galloping out from `near`
  /// (in [from, to)): neighbour cells are mostly close in Morton order.
  [[nodiscard]] std::size_t lower(std::uint64_t key, std::size_t from, std::size_t to,
                                  std::size_t near) const;

  int dim_ = 3;
  int bits_ = 21;  // finest level: cells of width h_
  int threads_ = 0;
  double scale_ = 1.0;  // 1 + skin
  double lo_[3] = {0, 0, 0};
  double h_ = 1, inv_h_ = 1;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint64_t> key_;   // Morton key at each sorted position
  std::vector<std::uint8_t> shift_;  // search level of each body (as a shift of the finest)
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed_, keyed_tmp_;
  std::vector<std::vector<CandidatePair>> chunk_pairs_;
};

}  // namespace nbody::collisions
