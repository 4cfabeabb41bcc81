// The quadtree/octree contact search (see contact_tree.hpp for the rules and the why):
// Morton keys, sort, each body's search level, and the per-body neighbour-cell search,
// OpenMP over chunks of bodies.
#include "collisions/contact_tree.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "collisions/parallel.hpp"
#include "core/morton.hpp"
#include "core/radix_sort.hpp"
#include "nbody/error.hpp"

namespace nbody::collisions {
namespace {

// Cells are this much wider than the reach they must hold, and one finest cell more:
// the quantised coordinates of two bodies closer than the reach then never lie two cells
// apart at that level (rounding of (x - lo) / h is ~1e-7 finest cells at most).
constexpr double kMargin = 1e-5;
constexpr double kAbsoluteMargin = 1e-6;  // finest cells
// A cell with at most this many bodies is scanned; a larger one is descended into.
constexpr std::size_t kScanBodies = 16;
constexpr std::size_t kParallelSearchMin = 10000;
// Bodies per work item: fixed, so the pair order never depends on the thread count.
constexpr std::size_t kChunkBodies = 1024;

std::uint64_t morton(const std::uint64_t* c, int dim) {
  std::uint64_t k = 0;
  for (int a = 0; a < dim; ++a) k |= spread(c[a], dim) << (dim - 1 - a);
  return k;
}

}  // namespace

void ContactTree::build(const ParticleSystem& ps, int dim, double skin, int threads) {
  build_from(
      ps.size(),
      [&ps](std::size_t i) {
        return CollisionBody<double>{ps.x[i], ps.y[i], ps.z[i], 0.0, 0.0, 0.0, 0.0, ps.radius[i]};
      },
      dim, skin, threads);
}

void ContactTree::build(const std::vector<CollisionBody<double>>& bodies, int dim, double skin,
                        int threads) {
  build_from(
      bodies.size(), [&bodies](std::size_t i) { return bodies[i]; }, dim, skin, threads);
}

template <class BodyAt>
void ContactTree::build_from(std::size_t n, const BodyAt& body, int dim, double skin, int threads) {
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw Error("collisions: more than 2^32 - 1 bodies are not supported");
  }
  dim_ = dim;
  bits_ = dim == 2 ? 31 : 21;
  threads_ = threads;
  scale_ = 1.0 + skin;
  const int team = team_size(threads);
  const bool parallel = n >= kParallelLoopMin;
  const auto sn = static_cast<std::ptrdiff_t>(n);

  // The root cell: a square/cube over the bounding box (NaN coordinates ignored, and
  // clamped to cell 0 below), as the seed's quadtree over the simulated square.
  const double inf = std::numeric_limits<double>::infinity();
  double lx = inf, ly = inf, lz = inf, hx = -inf, hy = -inf, hz = -inf;
#pragma omp parallel for num_threads(team) schedule(static) if (parallel) reduction(min           \
                                                                                    : lx, ly, lz) \
    reduction(max                                                                                 \
              : hx, hy, hz)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const CollisionBody<double> b = body(static_cast<std::size_t>(i));
    lx = std::min(lx, b.x);
    hx = std::max(hx, b.x);
    ly = std::min(ly, b.y);
    hy = std::max(hy, b.y);
    lz = std::min(lz, b.z);
    hz = std::max(hz, b.z);
  }
  const double lo[3] = {lx, ly, lz}, hi[3] = {hx, hy, hz};
  double side = 0;
  for (int a = 0; a < dim; ++a) {
    lo_[a] = lo[a];
    side = std::max(side, hi[a] - lo[a]);
  }
  h_ = side > 0 ? std::ldexp(side, -bits_) : 1.0;
  inv_h_ = 1.0 / h_;  // 0 when the span overflowed to inf: one cell
  const double finest = std::ldexp(1.0, bits_) - 1;

  keyed_.resize(n);
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const CollisionBody<double> b = body(u);
    const double pos[3] = {b.x, b.y, b.z};
    std::uint64_t c[3] = {0, 0, 0};
    for (int a = 0; a < dim; ++a) {
      const double t = (pos[a] - lo_[a]) * inv_h_;
      c[a] = static_cast<std::uint64_t>(t >= 0 ? std::min(t, finest) : 0.0);  // NaN -> 0
    }
    keyed_[u] = {morton(c, dim), static_cast<std::uint32_t>(u)};
  }
  radix_sort(keyed_, keyed_tmp_, dim * bits_);
  order_.resize(n);
  key_.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    key_[p] = keyed_[p].first;
    order_[p] = keyed_[p].second;
  }

  // Each body's search level: its leaf (the deepest cell no sorted neighbour shares: the
  // highest differing key bit says where they part), then up while the cell is narrower
  // than twice the body's reach (seed 001 §3.3's parent climbing).
  shift_.resize(n);
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto p = static_cast<std::size_t>(i);
    int leaf = n == 1 ? bits_ : 0;
    for (const std::size_t q : {p - 1, p + 1}) {
      if (q >= n) continue;  // p - 1 wraps for p = 0
      const std::uint64_t x = key_[p] ^ key_[q];
      if (x != 0) leaf = std::max(leaf, (63 - std::countl_zero(x)) / dim);
    }
    const double need = 2 * body(order_[p]).radius * scale_ * (1 + kMargin) * inv_h_ + 1 +
                        kAbsoluteMargin;  // in finest cells
    int reach = 1;
    while (reach < bits_ && std::ldexp(1.0, reach) < need) ++reach;
    shift_[p] = static_cast<std::uint8_t>(std::max(leaf, reach));
  }
}

std::size_t ContactTree::lower(std::uint64_t key, std::size_t from, std::size_t to,
                               std::size_t near) const {
  near = std::clamp(near, from, to);
  std::size_t lo = from, hi = to;  // the answer is in [lo, hi]
  std::size_t step = 1;
  if (near < to && key_[near] < key) {
    lo = near + 1;
    while (lo + step <= to && key_[lo + step - 1] < key) {
      lo += step;
      step *= 2;
    }
    hi = std::min(to, lo + step);
  } else {
    hi = near;
    while (hi >= from + step && key_[hi - step] >= key) {
      hi -= step;
      step *= 2;
    }
    lo = hi >= from + step ? hi - step : from;
  }
  return static_cast<std::size_t>(
      std::lower_bound(key_.begin() + std::ptrdiff_t(lo), key_.begin() + std::ptrdiff_t(hi), key) -
      key_.begin());
}

void ContactTree::find_pairs(const CollisionBody<double>* bodies,
                             std::vector<CandidatePair>& pairs) {
  pairs.clear();
  const std::size_t n = order_.size();
  const std::size_t chunks = (n + kChunkBodies - 1) / kChunkBodies;
  chunk_pairs_.resize(chunks);
  const auto schunks = static_cast<std::ptrdiff_t>(chunks);
  const bool parallel = n >= kParallelSearchMin && chunks > 1;
  RegionErrors errors;  // a failed allocation is carried out of the team and thrown here
#pragma omp parallel for num_threads(team_size(threads_)) schedule(dynamic, 1) if (parallel)
  for (std::ptrdiff_t k = 0; k < schunks; ++k) {
    const auto u = static_cast<std::size_t>(k);
    errors.run([&] {
      chunk_pairs_[u].clear();
      const std::size_t end = std::min(n, (u + 1) * kChunkBodies);
      for (std::size_t p = u * kChunkBodies; p < end; ++p)
        search_body(static_cast<std::uint32_t>(p), bodies, chunk_pairs_[u]);
    });
  }
  errors.rethrow();
  std::size_t total = 0;
  for (const auto& c : chunk_pairs_) total += c.size();
  pairs.reserve(total);
  for (const auto& c : chunk_pairs_) pairs.insert(pairs.end(), c.begin(), c.end());
}

void ContactTree::search_body(std::uint32_t p, const CollisionBody<double>* bodies,
                              std::vector<CandidatePair>& out) const {
  if (!(bodies[p].radius > 0)) return;  // owns no pair: the other body is never smaller
  const int s = shift_[p];
  const std::uint64_t top = (std::uint64_t(1) << (bits_ - s)) - 1;  // largest cell coordinate
  std::uint64_t own[3] = {0, 0, 0};
  const double pos[3] = {bodies[p].x, bodies[p].y, bodies[p].z};
  const double finest = std::ldexp(1.0, bits_) - 1;
  for (int a = 0; a < dim_; ++a) {
    const double t = (pos[a] - lo_[a]) * inv_h_;
    own[a] = static_cast<std::uint64_t>(t >= 0 ? std::min(t, finest) : 0.0) >> s;
  }
  // The 3^dim cells around the body's cell at its search level (edges and corners).
  const int zspan = dim_ == 3 ? 1 : 0;
  for (int d0 = -1; d0 <= 1; ++d0) {
    for (int d1 = -1; d1 <= 1; ++d1) {
      for (int d2 = -zspan; d2 <= zspan; ++d2) {
        const int delta[3] = {d0, d1, d2};
        std::uint64_t cell[3] = {0, 0, 0};
        bool inside = true;
        for (int a = 0; a < dim_; ++a) {
          cell[a] = own[a] + std::uint64_t(std::int64_t(delta[a]));  // wraps below 0: > top
          inside = inside && cell[a] <= top;
        }
        if (inside) visit(p, bodies, cell, s, 0, key_.size(), out);
      }
    }
  }
}

void ContactTree::visit(std::uint32_t p, const CollisionBody<double>* bodies,
                        const std::uint64_t* cell, int shift, std::size_t from, std::size_t to,
                        std::vector<CandidatePair>& out) const {
  const int level_bits = dim_ * shift;
  const std::uint64_t prefix = morton(cell, dim_);
  const std::size_t first = lower(prefix << level_bits, from, to, p);
  const std::size_t last = lower((prefix + 1) << level_bits, first, to, first);
  if (first == last) return;
  // Out of reach: the cell's box (grown by one finest cell against rounding) is further
  // than twice the body's reach, the most a pair it owns can span.
  const CollisionBody<double>& b = bodies[p];
  const double pos[3] = {b.x, b.y, b.z};
  const double width = std::ldexp(1.0, shift);
  double gap2 = 0;
  for (int a = 0; a < dim_; ++a) {
    const double u = (pos[a] - lo_[a]) * inv_h_;
    const double below = double(cell[a]) * width - u, above = u - (double(cell[a]) + 1) * width;
    const double gap = std::max({0.0, below - 1, above - 1}) * h_;
    gap2 += gap * gap;
  }
  const double reach = 2 * b.radius * scale_ * (1 + kMargin);
  if (gap2 > reach * reach) return;
  if (last - first <= kScanBodies || shift == 0) {
    const double rp = b.radius;
    for (std::size_t t = first; t < last; ++t) {
      const double rt = bodies[t].radius;
      // The pair is the larger body's (then the later position's when equal).
      if (t == p || !(rt < rp || (rt == rp && t > p))) continue;
      if (within_reach(b, bodies[t], scale_)) {
        const auto q = static_cast<std::uint32_t>(t);
        out.push_back({std::min(p, q), std::max(p, q)});
      }
    }
    return;
  }
  // The children (seed 001 §3.1: down into the cells that hold the shared corner or edge).
  const int children = 1 << dim_;
  for (int c = 0; c < children; ++c) {
    std::uint64_t child[3] = {0, 0, 0};
    for (int a = 0; a < dim_; ++a) child[a] = 2 * cell[a] + ((c >> (dim_ - 1 - a)) & 1);
    visit(p, bodies, child, shift - 1, first, last, out);
  }
}

}  // namespace nbody::collisions
