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
    const double w_before = potential(a, b);
    result.energy_lost += resolve_bounce(a, b, c, restitution);
    result.energy_lost += w_before - potential(a, b);
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

PassResult merge_pass(std::vector<CollisionBody<double>>& bodies,
                      const std::vector<std::uint64_t>& ids,
                      const std::vector<CandidatePair>& pairs, int dim,
                      const PairPotential& potential, std::vector<std::uint32_t>& alias,
                      std::vector<MergeEvent>& merged) {
  PassResult result;
  for (const CandidatePair& pr : pairs) {
    const std::uint32_t a = surviving(alias, pr.a), b = surviving(alias, pr.b);
    if (a == b || !within_reach(bodies[a], bodies[b], 1.0)) continue;
    if (!resolvable_overlap(contact_between(bodies[a], bodies[b]), bodies[a], bodies[b])) continue;
    const std::uint32_t keep = ids[a] < ids[b] ? a : b;
    const std::uint32_t gone = keep == a ? b : a;
    // E_before - E_after: the relative kinetic energy goes, and so does the pair's
    // potential (the merged body has no self term).
    result.energy_lost +=
        merge_kinetic_loss(bodies[keep], bodies[gone]) + potential(bodies[keep], bodies[gone]);
    bodies[keep] = merge_bodies(bodies[keep], bodies[gone], dim);
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
