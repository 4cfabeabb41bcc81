#pragma once
// The candidate search a handler uses, chosen by CollisionOptions::search: the sorted
// hierarchical grid (contact_grid.hpp) or seed 001's quadtree/octree (contact_tree.hpp).
// Both give the same pairs (every pair within reach, exactly once) as positions in their
// own body order; the resolution passes take either.
#include <vector>

#include "collisions/contact_grid.hpp"
#include "collisions/contact_tree.hpp"
#include "nbody/collisions.hpp"

namespace nbody::collisions {

// Pairs within this fraction of (r_a + r_b) of touching are candidates too, so that the
// resolution passes (which move bodies) see the contacts they create: a pair that was
// further apart can only touch after a body moved (or, merging, grew) by more than
// kCandidateSkin times its radius, and then the search is run again (as molecular dynamics
// codes do with Verlet lists). Each pass therefore sees every overlapping pair, exactly as a
// brute-force pass would. Costs ~2x the candidates of a skin of 0 (1e5 bodies, 3D). A
// decomposed run's clusters of contacts are found with the same skin
// (parallel/domain_collisions.cpp).
inline constexpr double kCandidateSkin = 0.25;

class ContactSearch {
 public:
  explicit ContactSearch(CollisionSearch kind) : kind_(kind) {}

  [[nodiscard]] CollisionSearch kind() const { return kind_; }

  template <class Bodies>
  void build(const Bodies& bodies, int dim, double skin, int threads) {
    if (kind_ == CollisionSearch::Tree) {
      tree_.build(bodies, dim, skin, threads);
    } else {
      grid_.build(bodies, dim, skin, threads);
    }
  }

  /// Index in the built bodies of the body at search position p.
  [[nodiscard]] const std::vector<std::uint32_t>& order() const {
    return kind_ == CollisionSearch::Tree ? tree_.order() : grid_.order();
  }

  /// The pairs within reach, as search positions; bodies in search order.
  void find_pairs(const CollisionBody<double>* bodies, std::vector<CandidatePair>& pairs) {
    if (kind_ == CollisionSearch::Tree) {
      tree_.find_pairs(bodies, pairs);
    } else {
      grid_.find_pairs(bodies, pairs);
    }
  }

 private:
  CollisionSearch kind_;
  ContactGrid grid_;
  ContactTree tree_;
};

}  // namespace nbody::collisions
