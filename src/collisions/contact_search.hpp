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
