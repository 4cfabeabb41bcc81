#pragma once
// The resolution passes of the CPU handler: the candidate pairs in their fixed (key)
// order, one after the other (Gauss-Seidel: each contact sees the bodies as the previous
// ones left them, as in seed 001's loops). Sequential on purpose: the result is the same
// for any number of threads, and a pass over 1e5 contacts takes about a millisecond.
#include <cstdint>
#include <vector>

#include "collisions/contact_grid.hpp"
#include "nbody/collisions.hpp"
#include "nbody/physics/collision_response.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody::collisions {

/// A pair's own potential energy -G m_a m_b / sqrt(d^2 + eps^2), with the diagnostics'
/// convention of 0 for coincident bodies without softening; always 0 when G = 0.
struct PairPotential {
  double G = 0;
  double eps2 = 0;
  [[nodiscard]] double operator()(const CollisionBody<double>& a,
                                  const CollisionBody<double>& b) const {
    return pair_potential_energy(a, b, G, eps2);
  }
};

/// Pairs among `pairs` that overlap now by more than rounding (1e-9 of r_a + r_b: what a
/// push-apart leaves behind), i.e. the contacts a pass resolves.
[[nodiscard]] std::uint64_t count_overlapping(const std::vector<CollisionBody<double>>& bodies,
                                              const std::vector<CandidatePair>& pairs);

struct PassResult {
  bool changed = false;    // some pair overlapped (and was resolved)
  double energy_lost = 0;  // kinetic + the pairs' own potential change
};

/// One pass of impulse + push-apart over the pairs. `moved[p]` is 1 + the last pass that
/// moved body p (0: none since the search); pass `pass` (0-based) skips the pairs neither of
/// whose bodies moved in the previous pass or in this one: they were apart when last
/// checked and still are. `check_all` turns the skipping off (first pass after a search).
PassResult bounce_pass(std::vector<CollisionBody<double>>& bodies,
                       const std::vector<CandidatePair>& pairs, double restitution,
                       const PairPotential& potential, std::vector<std::uint32_t>& moved,
                       std::uint32_t pass, bool check_all);

/// One pass of merges over the pairs. A merged pair lives on in the slot of the smaller
/// id, except that an active body absorbs a test particle (slot p holds a test particle
/// when index[p] >= n_active: the bodies stay in their order and n_active counts them);
/// alias[p] leads from an absorbed body to the body it became part of. The energy
/// lost is the kinetic loss plus the pair potential that disappears with each merge.
PassResult merge_pass(std::vector<CollisionBody<double>>& bodies,
                      const std::vector<std::uint64_t>& ids,
                      const std::vector<CandidatePair>& pairs, int dim,
                      const PairPotential& potential, std::vector<std::uint32_t>& alias,
                      std::vector<MergeEvent>& merged, const std::vector<std::uint32_t>& index,
                      std::size_t n_active);

/// The body p has become part of (p itself while not merged); halves the paths it walks.
std::uint32_t surviving(std::vector<std::uint32_t>& alias, std::uint32_t p);

/// Largest overlap among the candidate pairs as a fraction of the smaller radius;
/// alias (may be null) maps merged bodies to their survivors.
[[nodiscard]] double max_overlap_fraction(const std::vector<CollisionBody<double>>& bodies,
                                          const std::vector<CandidatePair>& pairs,
                                          std::vector<std::uint32_t>* alias);

}  // namespace nbody::collisions
