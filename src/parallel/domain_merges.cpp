// Merges in a decomposed collision stage: energy against the rest, accelerations
// (domain_merges.hpp).
#include "parallel/domain_merges.hpp"

#include <cstdint>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "collisions/resolution_passes.hpp"
#include "nbody/error.hpp"

namespace nbody::parallel {

double merges_against_the_rest(const ParticleSystem& all, std::size_t owned,
                               const std::vector<std::size_t>& from, const ParticleSystem& after,
                               bool merged, const CollisionOptions& options, ForceReducer& comm) {
  struct Mass {
    double x, y, z, m, before;
    std::uint64_t id;
  };
  ForceReducer::Bytes out;
  const auto put = [&out](const Mass& m) {
    const std::size_t at = out.size();
    out.resize(at + sizeof m);
    std::memcpy(out.data() + at, &m, sizeof m);
  };
  if (merged) {
    for (std::size_t i : from) put(Mass{all.x[i], all.y[i], all.z[i], all.mass[i], 1, all.id[i]});
    for (std::size_t k = 0; k < after.size(); ++k)
      put(Mass{after.x[k], after.y[k], after.z[k], after.mass[k], 0, 0});
  }
  std::vector<std::vector<Mass>> ranks;
  std::unordered_map<std::uint64_t, char> resolved;  // the ids of every B_r
  for (const ForceReducer::Bytes& b : comm.all_gather(out)) {
    if (b.size() % sizeof(Mass) != 0)
      throw Error(
          fmt::format("collisions on owned bodies: a rank sent malformed merged clusters "
                      "({} bytes)",
                      b.size()));
    ranks.emplace_back(b.size() / sizeof(Mass));
    if (!b.empty()) std::memcpy(ranks.back().data(), b.data(), b.size());
    for (const Mass& m : ranks.back())
      if (m.before != 0) resolved.emplace(m.id, 1);
  }
  if (resolved.empty()) return 0;
  const collisions::PairPotential phi{options.G, options.softening * options.softening};
  const auto body = [](const Mass& m) {
    return CollisionBody<double>{m.x, m.y, m.z, 0, 0, 0, m.m, 0};
  };
  const auto sign = [](const Mass& m) { return m.before != 0 ? -1.0 : 1.0; };
  double change = 0;
  for (std::size_t c = 0; c < owned; ++c) {  // U's bodies here, as before the stage
    if (resolved.count(all.id[c])) continue;
    const CollisionBody<double> u{all.x[c], all.y[c], all.z[c], 0, 0, 0, all.mass[c], 0};
    for (const auto& rank : ranks)
      for (const Mass& m : rank) change += sign(m) * phi(body(m), u);
  }
  if (comm.part() == 0) {
    for (std::size_t r = 0; r < ranks.size(); ++r)
      for (std::size_t q = r + 1; q < ranks.size(); ++q)
        for (const Mass& a : ranks[r])
          for (const Mass& b : ranks[q])
            if ((a.before != 0) == (b.before != 0)) change += sign(a) * phi(body(a), body(b));
  }
  return change;
}

}  // namespace nbody::parallel
