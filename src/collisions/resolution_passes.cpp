#include "collisions/resolution_passes.hpp"

#include <algorithm>

namespace nbody::collisions {

std::uint64_t count_overlapping(const std::vector<CollisionBody<double>>& bodies,
                                const std::vector<CandidatePair>& pairs) {
  std::uint64_t count = 0;
  for (const CandidatePair& pr : pairs) {
    const CollisionBody<double>& a = bodies[pr.a];
    const CollisionBody<double>& b = bodies[pr.b];
    count += within_reach(a, b, 1.0) && resolvable_overlap(contact_between(a, b), a, b) ? 1 : 0;
  }
  return count;
}

PassResult bounce_pass(std::vector<CollisionBody<double>>& bodies,
                       const std::vector<CandidatePair>& pairs, double restitution,
                       const PairPotential& potential, std::vector<std::uint32_t>& moved,
                       std::uint32_t pass, bool check_all) {
  PassResult result;
  for (const CandidatePair& pr : pairs) {
    if (!check_all && moved[pr.a] < pass && moved[pr.b] < pass) continue;
    CollisionBody<double>& a = bodies[pr.a];
    CollisionBody<double>& b = bodies[pr.b];
    if (!within_reach(a, b, 1.0)) continue;
    const Contact<double> c = contact_between(a, b);
    if (!resolvable_overlap(c, a, b)) continue;
    result.changed = true;
    moved[pr.a] = moved[pr.b] = pass + 1;
    // The impulse, the push-apart, and its rise of the pair's potential taken out of the
    // pair's separating motion: the energy lost is the impulse's (0 when elastic) less what
    // the motion could not pay.
    result.energy_lost +=
        resolve_bounce_under_gravity(a, b, c, restitution, potential.G, potential.eps2);
  }
  return result;
}

std::uint32_t surviving(std::vector<std::uint32_t>& alias, std::uint32_t p) {
  while (alias[p] != p) {
    alias[p] = alias[alias[p]];
    p = alias[p];
  }
  return p;
}

namespace {
/// W_after - W_before of a merge against every other body (alive: alias[c] == c): the
/// merged body at the centre of mass in place of a and b. First order in their separation
/// it cancels, but in a dense core the rest is not small, and the books must balance.
double third_body_change(const std::vector<CollisionBody<double>>& bodies,
                         const std::vector<std::uint32_t>& alias, std::uint32_t a, std::uint32_t b,
                         const CollisionBody<double>& merged, const PairPotential& potential) {
  const auto n = static_cast<std::ptrdiff_t>(bodies.size());
  double change = 0;
#pragma omp parallel for reduction(+ : change) schedule(static) if (n > 20000)
  for (std::ptrdiff_t k = 0; k < n; ++k) {
    const auto c = static_cast<std::uint32_t>(k);
    if (c == a || c == b || alias[c] != c) continue;
    change += potential(merged, bodies[c]) - potential(bodies[a], bodies[c]) -
              potential(bodies[b], bodies[c]);
  }
  return change;
}
}  // namespace

PassResult merge_pass(std::vector<CollisionBody<double>>& bodies,
                      const std::vector<std::uint64_t>& ids,
                      const std::vector<CandidatePair>& pairs, int dim,
                      const PairPotential& potential, std::vector<std::uint32_t>& alias,
                      std::vector<MergeEvent>& merged, const std::vector<std::uint32_t>& index,
                      std::size_t n_active) {
  PassResult result;
  for (const CandidatePair& pr : pairs) {
    const std::uint32_t a = surviving(alias, pr.a), b = surviving(alias, pr.b);
    if (a == b || !within_reach(bodies[a], bodies[b], 1.0)) continue;
    if (!resolvable_overlap(contact_between(bodies[a], bodies[b]), bodies[a], bodies[b])) continue;
    const bool test_a = index[a] >= n_active, test_b = index[b] >= n_active;
    const std::uint32_t keep = test_a != test_b ? (test_a ? b : a) : ids[a] < ids[b] ? a : b;
    const std::uint32_t gone = keep == a ? b : a;
    // E_before - E_after: the relative kinetic energy goes, and so does the pair's
    // potential (the merged body has no self term), and the potential of the others
    // changes as the pair becomes one body at its centre of mass.
    const CollisionBody<double> merged_body = merge_bodies(bodies[keep], bodies[gone], dim);
    result.energy_lost +=
        merge_kinetic_loss(bodies[keep], bodies[gone]) + potential(bodies[keep], bodies[gone]);
    if (potential.G != 0)
      result.energy_lost -= third_body_change(bodies, alias, keep, gone, merged_body, potential);
    bodies[keep] = merged_body;
    alias[gone] = keep;
    merged.push_back({ids[keep], ids[gone]});
    result.changed = true;
  }
  return result;
}

double max_overlap_fraction(const std::vector<CollisionBody<double>>& bodies,
                            const std::vector<CandidatePair>& pairs,
                            std::vector<std::uint32_t>* alias) {
  double worst = 0;
  for (const CandidatePair& pr : pairs) {
    const std::uint32_t a = alias ? surviving(*alias, pr.a) : pr.a;
    const std::uint32_t b = alias ? surviving(*alias, pr.b) : pr.b;
    if (a == b || !within_reach(bodies[a], bodies[b], 1.0)) continue;
    const Contact<double> c = contact_between(bodies[a], bodies[b]);
    if (c.overlap > 0)
      worst = std::max(worst, overlap_fraction(c.overlap, bodies[a].radius, bodies[b].radius));
  }
  return worst;
}

}  // namespace nbody::collisions
