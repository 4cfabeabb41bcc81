// The keys of the domain decomposition (domain.hpp): the global cube, the bodies' keys in it,
// who owns a key, and how the cost falls on the ranks under some cuts.
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "core/omp_team.hpp"
#include "nbody/error.hpp"
#include "parallel/domain.hpp"
#include "tree/tree.hpp"

namespace nbody::parallel {

int key_levels(int dim) {
  return tree::key_bits_per_axis(dim);
}

int key_bits(int dim) {
  return dim * key_levels(dim);
}

std::uint64_t cell_width(int dim, int level) {
  return std::uint64_t(1) << (dim * (key_levels(dim) - level));
}

KeyCube global_cube(const ParticleSystem& local, int dim, ForceReducer& comm, int threads) {
  const bool planar = dim == 2;
  const double inf = std::numeric_limits<double>::infinity();
  // lo x y z, hi x y z, then 1 when this rank has bodies.
  double box[7] = {inf, inf, inf, -inf, -inf, -inf, local.empty() ? 0.0 : 1.0};
  double lx = inf, ly = inf, lz = inf, hx = -inf, hy = -inf, hz = -inf;
  const auto sn = static_cast<std::ptrdiff_t>(local.size());
#pragma omp parallel for num_threads(team_size(threads)) schedule(static) if (sn >= 50000) \
    reduction(min                                                                          \
              : lx, ly, lz) reduction(max                                                  \
                                      : hx, hy, hz)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto u = static_cast<std::size_t>(i);
    lx = std::min(lx, local.x[u]);
    hx = std::max(hx, local.x[u]);
    ly = std::min(ly, local.y[u]);
    hy = std::max(hy, local.y[u]);
    const double zi = planar ? 0.0 : local.z[u];
    lz = std::min(lz, zi);
    hz = std::max(hz, zi);
  }
  box[0] = lx, box[1] = ly, box[2] = lz, box[3] = hx, box[4] = hy, box[5] = hz;
  ForceReducer::Bytes mine(sizeof box);
  std::memcpy(mine.data(), box, sizeof box);
  const auto all = comm.all_gather(mine);

  // The union's extremes as two bodies: the tree's bounding_cube of them is its cube of all
  // bodies (its min/max see the same extremes), so the formula lives in one place.
  ParticleSystem corners;
  corners.resize(2);
  bool any = false;
  for (const auto& bytes : all) {
    if (bytes.size() != sizeof box) throw Error("global_cube: a rank sent a malformed box");
    double b[7];
    std::memcpy(b, bytes.data(), sizeof b);
    if (b[6] == 0) continue;
    if (!any) {
      corners.x = {b[0], b[3]}, corners.y = {b[1], b[4]}, corners.z = {b[2], b[5]};
      any = true;
      continue;
    }
    corners.x[0] = std::min(corners.x[0], b[0]), corners.x[1] = std::max(corners.x[1], b[3]);
    corners.y[0] = std::min(corners.y[0], b[1]), corners.y[1] = std::max(corners.y[1], b[4]);
    corners.z[0] = std::min(corners.z[0], b[2]), corners.z[1] = std::max(corners.z[1], b[5]);
  }
  if (!any) return {};
  tree::Tree t;
  tree::bounding_cube(corners, dim, 1, t);
  return {t.root_x, t.root_y, t.root_z, t.root_half};
}

std::vector<std::uint64_t> domain_keys(const ParticleSystem& local, int dim, const KeyCube& cube,
                                       int threads) {
  tree::Tree t;  // morton_keys reads only the root cube
  t.root_x = cube.cx, t.root_y = cube.cy, t.root_z = cube.cz, t.root_half = cube.half;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
  tree::morton_keys(local, dim, threads, t, keyed);
  std::vector<std::uint64_t> keys(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) keys[i] = keyed[i].first;
  return keys;
}

int DomainCuts::owner(std::uint64_t key) const {
  // The last piece whose first key is <= key (empty pieces share their first key with the
  // next one, and upper_bound skips past them).
  const auto it = std::upper_bound(first.begin(), first.end() - 1, key);
  return std::max(0, static_cast<int>(it - first.begin()) - 1);
}

DomainCuts whole_line(int parts) {
  DomainCuts cuts;
  cuts.first.assign(static_cast<std::size_t>(parts) + 1, 0);
  cuts.first.back() = kKeyEnd;
  // Pieces 1..P-1 start at kKeyEnd: empty.
  for (int r = 1; r < parts; ++r) cuts.first[std::size_t(r)] = kKeyEnd;
  return cuts;
}

std::vector<double> rank_costs(const std::vector<std::uint64_t>& keys,
                               const std::vector<double>& cost, const DomainCuts& cuts,
                               ForceReducer& comm) {
  if (!cost.empty() && cost.size() != keys.size())
    throw Error("rank_costs: one cost per key expected");
  std::vector<double> sums(std::size_t(cuts.parts()), 0.0);
  for (std::size_t i = 0; i < keys.size(); ++i)
    sums[std::size_t(cuts.owner(keys[i]))] += cost.empty() ? 1.0 : cost[i];
  comm.sum(sums.data(), sums.size());
  return sums;
}

double imbalance(const std::vector<std::uint64_t>& keys, const std::vector<double>& cost,
                 const DomainCuts& cuts, ForceReducer& comm) {
  const auto sums = rank_costs(keys, cost, cuts, comm);
  double total = 0, most = 0;
  for (double s : sums) total += s, most = std::max(most, s);
  return total > 0 ? most / (total / double(sums.size())) : 1.0;
}

}  // namespace nbody::parallel
