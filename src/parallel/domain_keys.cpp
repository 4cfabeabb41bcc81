// The keys of the domain decomposition (domain.hpp): the global cube, the bodies' keys in it,
// who owns a key, and how the cost falls on the ranks under some cuts.
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "core/hilbert.hpp"
#include "core/omp_team.hpp"
#include "nbody/error.hpp"
#include "parallel/domain.hpp"
#include "tree/tree.hpp"

namespace nbody::parallel {

namespace {

// On x86-64 an AVX2 clone beside the baseline one, chosen at load time: the transform is
// branch-free integer work that vectorises over bodies (measured, 200000 keys, one thread:
// 14.5 ms with SSE2, 2.2 ms with AVX2). Not under the sanitizers (an ifunc resolver runs
// before their runtime is up).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define NBODY_KEY_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NBODY_KEY_CLONES
#endif

/// Morton keys to the same points' Hilbert keys, in place.
NBODY_KEY_CLONES void hilbert_from_morton_block(std::uint64_t* k, std::ptrdiff_t n, int dim) {
  if (dim == 2) {
#pragma omp simd
    for (std::ptrdiff_t i = 0; i < n; ++i) k[i] = hilbert_from_morton2(k[i]);
  } else {
#pragma omp simd
    for (std::ptrdiff_t i = 0; i < n; ++i) k[i] = hilbert_from_morton3(k[i]);
  }
}

}  // namespace

int key_levels(int dim) {
  return tree::key_bits_per_axis(dim);
}

int key_bits(int dim) {
  return dim * key_levels(dim);
}

std::uint64_t cell_width(int dim, int level) {
  return std::uint64_t(1) << (dim * (key_levels(dim) - level));
}

bool union_of_boxes(ForceReducer& comm, bool has, double (&lo)[3], double (&hi)[3]) {
  // lo x y z, hi x y z, then 1 when this rank has a box.
  const double box[7] = {lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], has ? 1.0 : 0.0};
  ForceReducer::Bytes mine(sizeof box);
  std::memcpy(mine.data(), box, sizeof box);
  bool any = false;
  for (const auto& bytes : comm.all_gather(mine)) {
    if (bytes.size() != sizeof box)
      throw Error("domain decomposition: a rank sent a malformed box");
    double b[7];
    std::memcpy(b, bytes.data(), sizeof b);
    if (b[6] == 0) continue;
    for (int k = 0; k < 3; ++k) {
      lo[k] = any ? std::min(lo[k], b[k]) : b[k];
      hi[k] = any ? std::max(hi[k], b[3 + k]) : b[3 + k];
    }
    any = true;
  }
  return any;
}

KeyCube global_cube(const ParticleSystem& local, int dim, ForceReducer& comm, int threads) {
  double lo[3], hi[3];
  tree::body_bounds(local, dim, threads, lo, hi);
  // The union's extremes, then the tree's own cube of them: the formula lives in one place.
  if (!union_of_boxes(comm, !local.empty(), lo, hi)) return {};
  const tree::RootCube cube = tree::root_cube_from_bounds(lo, hi);
  return {cube.x, cube.y, cube.z, cube.half};
}

std::vector<std::uint64_t> domain_keys(const ParticleSystem& local, int dim, const KeyCube& cube,
                                       int threads, DomainCurve curve) {
  tree::Tree t;  // morton_keys reads only the root cube
  t.root_x = cube.cx, t.root_y = cube.cy, t.root_z = cube.cz, t.root_half = cube.half;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
  tree::morton_keys(local, dim, threads, t, keyed);
  std::vector<std::uint64_t> keys(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) keys[i] = keyed[i].first;
  if (curve == DomainCurve::Morton) return keys;
  // The Hilbert keys from the Morton keys' grid points: one quantisation for both curves.
  const auto n = static_cast<std::ptrdiff_t>(keys.size());
  constexpr std::ptrdiff_t kBlock = 8192;
  const std::ptrdiff_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(team_size(threads)) schedule(static) if (blocks > 8)
  for (std::ptrdiff_t b = 0; b < blocks; ++b) {
    const std::ptrdiff_t start = b * kBlock;
    hilbert_from_morton_block(keys.data() + start, std::min(kBlock, n - start), dim);
  }
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
