// The hierarchical contact grid (see contact_grid.hpp for the why): keys, sort, cells,
// and the neighbour search, OpenMP over chunks of cells.
#include "collisions/contact_grid.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "collisions/parallel.hpp"
#include "core/radix_sort.hpp"
#include "nbody/error.hpp"

namespace nbody::collisions {
namespace {

// Cells are this much wider than the largest reach they hold: the coordinates' rounding
// (a few ulp of at most 2^29 cells, ~2e-7 cell widths) can then never separate two
// touching bodies by two cells.
constexpr double kCellMargin = 1e-5;
constexpr int kMaxLevel = 31;  // levels fit in 5 bits of the key
// The search costs ~0.1-0.5 us per body; it gets threads from this N on.
constexpr std::size_t kParallelSearchMin = 10000;
// Cells per work item of the search: large enough to amortise the pointer set-up, small
// enough for dynamic load balance. Fixed, so the pair order never depends on threads.
constexpr std::size_t kChunkCells = 512;

/// Level-0 cells per axis (without padding) that keep every key below 2^64 with 32 levels:
/// 3D 32 * (2^19)^3 = 2^62, 2D 32 * (2^29)^2 = 2^63.
double max_cells_per_axis(int dim) {
  return dim == 2 ? 0x1p29 - 4 : 0x1p19 - 4;
}

/// Smallest level whose cells (h0 * 2^level) are at least `width` wide.
int level_for(double width, double h0) {
  if (!(width > h0)) return 0;
  int level = std::max(0, std::ilogb(width / h0));
  while (level > 0 && std::ldexp(h0, level - 1) >= width) --level;
  while (level < kMaxLevel && std::ldexp(h0, level) < width) ++level;
  return level;
}

}  // namespace

void gather_bodies(const ParticleSystem& ps, const std::vector<std::uint32_t>& order, int threads,
                   std::vector<CollisionBody<double>>& out) {
  const std::size_t n = order.size();
  out.resize(n);
  const auto sn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(team_size(threads)) schedule(static) if (n >= kParallelLoopMin)
  for (std::ptrdiff_t p = 0; p < sn; ++p) {
    const std::size_t i = order[static_cast<std::size_t>(p)];
    out[static_cast<std::size_t>(p)] = {ps.x[i],  ps.y[i],  ps.z[i],    ps.vx[i],
                                        ps.vy[i], ps.vz[i], ps.mass[i], ps.radius[i]};
  }
}

void ContactGrid::build(const ParticleSystem& ps, int dim, double skin, int threads) {
  build_from(
      ps.size(),
      [&ps](std::size_t i) {
        return CollisionBody<double>{ps.x[i], ps.y[i], ps.z[i], 0.0, 0.0, 0.0, 0.0, ps.radius[i]};
      },
      dim, skin, threads);
}

void ContactGrid::build(const std::vector<CollisionBody<double>>& bodies, int dim, double skin,
                        int threads) {
  build_from(
      bodies.size(), [&bodies](std::size_t i) { return bodies[i]; }, dim, skin, threads);
}

template <class BodyAt>
void ContactGrid::build_from(std::size_t n, const BodyAt& body, int dim, double skin, int threads) {
  if (n > std::numeric_limits<std::uint32_t>::max()) {
    throw Error("collisions: more than 2^32 - 1 bodies are not supported");
  }
  dim_ = dim;
  threads_ = threads;
  scale_ = 1.0 + skin;
  const int team = team_size(threads);
  const bool parallel = n >= kParallelLoopMin;
  const auto sn = static_cast<std::ptrdiff_t>(n);

  // Bounding box and the largest radius (NaN coordinates are ignored by min/max and
  // clamped to cell 0 below).
  const double inf = std::numeric_limits<double>::infinity();
  double lx = inf, ly = inf, lz = inf, hx = -inf, hy = -inf, hz = -inf, rmax = 0;
#pragma omp parallel for num_threads(team) schedule(static) if (parallel) reduction(min           \
                                                                                    : lx, ly, lz) \
    reduction(max                                                                                 \
              : hx, hy, hz, rmax)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const CollisionBody<double> b = body(static_cast<std::size_t>(i));
    lx = std::min(lx, b.x);
    hx = std::max(hx, b.x);
    ly = std::min(ly, b.y);
    hy = std::max(hy, b.y);
    lz = std::min(lz, b.z);
    hz = std::max(hz, b.z);
    rmax = std::max(rmax, b.radius);
  }
  const double lo[3] = {lx, ly, lz}, hi[3] = {hx, hy, hz};

  // Base cell width from the median radius of the bodies that have one: most bodies sit at
  // level 0 in cells about their own size, whatever a few giants measure.
  radii_.clear();
  radii_.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (const double r = body(i).radius; r > 0) radii_.push_back(r);
  double rmed = 0;
  if (!radii_.empty()) {
    auto mid = radii_.begin() + std::ptrdiff_t(radii_.size() / 2);
    std::nth_element(radii_.begin(), mid, radii_.end());
    rmed = *mid;
  }
  const double widen = scale_ * (1 + kCellMargin);  // cell width needed per unit diameter
  double h0 = rmed > 0 ? 2 * rmed * widen : 1.0;
  const double max_cells = max_cells_per_axis(dim);
  for (int a = 0; a < dim; ++a) {
    const double span = hi[a] - lo[a];
    if (span / h0 > max_cells) h0 = span / max_cells;  // coarser cells: still correct
  }
  if (2 * rmax * widen / h0 > std::ldexp(1.0, kMaxLevel))
    h0 = 2 * rmax * widen / std::ldexp(1.0, kMaxLevel);
  const double inv_h0 = 1.0 / h0;  // 0 when the span overflowed to inf: one cell
  for (int a = 0; a < 3; ++a) origin_[a] = lo[a];
  h0_ = h0;
  inv_h0_ = inv_h0;
  max_cells_ = max_cells;

  std::uint64_t key_space = 1;
  for (int a = dim - 1; a >= 0; --a) {
    const double cells = std::clamp(std::floor((hi[a] - lo[a]) * inv_h0), 0.0, max_cells);
    extent_[a] = static_cast<std::uint64_t>(cells) + 3;  // + padding on both sides + 1
    stride_[a] = key_space;
    key_space *= extent_[a];
  }
  level_stride_ = key_space;

  keyed_.resize(n);
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const CollisionBody<double> b = body(u);
    const double pos[3] = {b.x, b.y, b.z};
    const int level = level_for(2 * b.radius * widen, h0);
    std::uint64_t key = static_cast<std::uint64_t>(level) * level_stride_;
    for (int a = 0; a < dim; ++a) {
      double t = (pos[a] - lo[a]) * inv_h0;
      t = t >= 0 ? std::min(t, max_cells) : 0.0;  // NaN -> 0
      key += ((static_cast<std::uint64_t>(t) >> level) + 1) * stride_[a];
    }
    keyed_[u] = {key, static_cast<std::uint32_t>(u)};
  }
  std::uint64_t max_key = 0;
  for (const auto& k : keyed_) max_key = std::max(max_key, k.first);
  radix_sort(keyed_, keyed_tmp_, static_cast<int>(std::bit_width(max_key)));

  order_.resize(n);
  body_key_.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    body_key_[p] = keyed_[p].first;
    order_[p] = keyed_[p].second;
  }
  build_cells();
  if (rmax == 0) levels_.clear();  // no body has a radius: nothing can touch
}

void ContactGrid::build_cells() {
  cell_key_.clear();
  cell_begin_.clear();
  levels_.clear();
  level_number_.clear();
  const std::size_t n = body_key_.size();
  for (std::size_t p = 0; p < n; ++p) {
    if (p == 0 || body_key_[p] != body_key_[p - 1]) {
      cell_key_.push_back(body_key_[p]);
      cell_begin_.push_back(static_cast<std::uint32_t>(p));
    }
  }
  cell_begin_.push_back(static_cast<std::uint32_t>(n));
  for (std::size_t c = 0; c < cell_key_.size(); ++c) {
    const auto level = static_cast<std::uint32_t>(cell_key_[c] / level_stride_);
    if (level_number_.empty() || level_number_.back() != level) {
      level_number_.push_back(level);
      levels_.push_back({c, c});
    }
    levels_.back().end_cell = c + 1;
  }
  // Which side searches each pair of levels: per finer cell, 3^(dim-1) row searches among
  // the coarse cells; per coarse body, about (2^shift + 2)^(dim-1) among the fine cells.
  // A few slightly larger bodies (merged ones, say) are far cheaper from their side
  // (measured, 1e5 bodies, 1 thread: with 4% of them 1.5x larger, on level 1, the search
  // takes 30 ms from the fine side, 17 ms from theirs, 12 ms without them); giants among
  // dust from the dust's side (the tests take both ways).
  const std::size_t levels = levels_.size();
  from_coarse_.assign(levels * levels, 0);
  for (std::size_t fine = 0; fine < levels; ++fine) {
    for (std::size_t coarse = fine + 1; coarse < levels; ++coarse) {
      const double fine_cells = double(levels_[fine].end_cell - levels_[fine].first_cell);
      const double coarse_bodies =
          double(cell_begin_[levels_[coarse].end_cell] - cell_begin_[levels_[coarse].first_cell]);
      const double span = std::ldexp(1.0, int(level_number_[coarse] - level_number_[fine])) + 2;
      const double coarse_cells = double(levels_[coarse].end_cell - levels_[coarse].first_cell);
      const double from_fine = fine_cells * std::pow(3.0, dim_ - 1) * std::log2(coarse_cells + 2);
      const double from_coarse = coarse_bodies * std::pow(span, dim_ - 1) * 4;  // galloping
      from_coarse_[fine * levels + coarse] = from_coarse < from_fine ? 1 : 0;
    }
  }
}

void ContactGrid::find_pairs(const CollisionBody<double>* bodies,
                             std::vector<CandidatePair>& pairs) {
  pairs.clear();
  if (levels_.empty()) return;
  const std::size_t cells = cell_key_.size();
  const std::size_t chunks = (cells + kChunkCells - 1) / kChunkCells;
  chunk_pairs_.resize(chunks);
  const auto schunks = static_cast<std::ptrdiff_t>(chunks);
  const bool parallel = order_.size() >= kParallelSearchMin && chunks > 1;
  // The pair lists grow as they are found: a failed allocation is carried out of the team
  // (core/omp_team.hpp) and thrown here.
  RegionErrors errors;
#pragma omp parallel for num_threads(team_size(threads_)) schedule(dynamic, 1) if (parallel)
  for (std::ptrdiff_t k = 0; k < schunks; ++k) {
    const auto u = static_cast<std::size_t>(k);
    errors.run([&] {
      chunk_pairs_[u].clear();
      search_chunk(u * kChunkCells, std::min(cells, (u + 1) * kChunkCells), bodies,
                   chunk_pairs_[u]);
    });
  }
  errors.rethrow();
  std::size_t total = 0;
  for (const auto& c : chunk_pairs_) total += c.size();
  pairs.reserve(total);
  for (const auto& c : chunk_pairs_) pairs.insert(pairs.end(), c.begin(), c.end());
}

namespace {
inline void test_pair(const CollisionBody<double>* bodies, std::uint32_t p, std::uint32_t q,
                      double scale, std::vector<CandidatePair>& out) {
  if (within_reach(bodies[p], bodies[q], scale)) out.push_back({p, q});
}
}  // namespace

void ContactGrid::search_chunk(std::size_t first, std::size_t end,
                               const CollisionBody<double>* bodies,
                               std::vector<CandidatePair>& out) const {
  // Forward rows of the half shell, as key ranges [K + lo, K + hi] around a cell's key K:
  // the next cell along the last axis, then the rows of 3 cells at the forward neighbours
  // (3D: (0,+1), (+1,-1), (+1,0), (+1,+1) in the first two axes; 2D: (+1)).
  std::uint64_t row_lo[5], row_hi[5];
  int rows = 0;
  row_lo[rows] = row_hi[rows] = 1;
  ++rows;
  const std::uint64_t s0 = stride_[0], s1 = stride_[1];
  const std::uint64_t centres3[4] = {s1, s0 - s1, s0, s0 + s1};
  const std::uint64_t centres2[1] = {s0};
  const std::uint64_t* centres = dim_ == 2 ? centres2 : centres3;
  const int forward = dim_ == 2 ? 1 : 4;
  for (int r = 0; r < forward; ++r, ++rows) {
    row_lo[rows] = centres[r] - 1;
    row_hi[rows] = centres[r] + 1;
  }
  const std::size_t cells = cell_key_.size();
  // One pointer per row that only moves forward: the rows' keys grow with the cell key.
  std::size_t ptr[5];
  for (int r = 0; r < rows; ++r) {
    ptr[r] =
        static_cast<std::size_t>(std::lower_bound(cell_key_.begin() + std::ptrdiff_t(first),
                                                  cell_key_.end(), cell_key_[first] + row_lo[r]) -
                                 cell_key_.begin());
  }
  const bool several_levels = levels_.size() > 1;
  std::size_t level = 0;  // index into levels_ of cell c
  for (std::size_t c = first; c < end; ++c) {
    while (c >= levels_[level].end_cell) ++level;
    const std::uint64_t key = cell_key_[c];
    const std::uint32_t b0 = cell_begin_[c], b1 = cell_begin_[c + 1];
    for (std::uint32_t p = b0; p < b1; ++p)
      for (std::uint32_t q = p + 1; q < b1; ++q) test_pair(bodies, p, q, scale_, out);
    for (int r = 0; r < rows; ++r) {
      const std::uint64_t lo = key + row_lo[r], hi = key + row_hi[r];
      while (ptr[r] < cells && cell_key_[ptr[r]] < lo) ++ptr[r];
      for (std::size_t j = ptr[r]; j < cells && cell_key_[j] <= hi; ++j) {
        for (std::uint32_t p = b0; p < b1; ++p)
          for (std::uint32_t q = cell_begin_[j]; q < cell_begin_[j + 1]; ++q)
            test_pair(bodies, p, q, scale_, out);
      }
    }
    if (several_levels) search_other_levels(c, level, bodies, out);
  }
}

void ContactGrid::search_other_levels(std::size_t cell, std::size_t level,
                                      const CollisionBody<double>* bodies,
                                      std::vector<CandidatePair>& out) const {
  const std::uint64_t key = cell_key_[cell];
  const std::uint32_t own = level_number_[level];
  std::uint64_t coord[3] = {0, 0, 0};  // level coordinates without the +1 padding
  for (int a = 0; a < dim_; ++a) coord[a] = (key % level_stride_) / stride_[a] % extent_[a] - 1;
  const std::uint32_t b0 = cell_begin_[cell], b1 = cell_begin_[cell + 1];
  const std::uint64_t s1 = dim_ == 3 ? stride_[1] : 0;
  const std::size_t levels = levels_.size();
  // Bodies of cell j against this cell's bodies (coarse == kAll: on a coarser level), or
  // against body `coarse` of this cell (j on a finer level); the finer body is the pair's a.
  constexpr std::uint32_t kAll = 0xffffffffu;
  auto test_cell = [&](std::size_t j, std::uint32_t coarse) {
    for (std::uint32_t q = cell_begin_[j]; q < cell_begin_[j + 1]; ++q) {
      if (coarse == kAll) {
        for (std::uint32_t p = b0; p < b1; ++p) test_pair(bodies, p, q, scale_, out);
      } else {
        test_pair(bodies, q, coarse, scale_, out);
      }
    }
  };
  // Every cell of level l whose key lies in [lo, hi].
  // The rows of one level are visited in increasing key order, so each search starts where
  // the previous row ended and gallops forward: a few cache-near steps instead of a binary
  // search over the whole level (which made the cross-level search dominate).
  std::size_t hint = 0;
  auto scan_row = [&](std::size_t l, std::uint64_t lo, std::uint64_t hi, std::uint32_t coarse) {
    const std::size_t last = levels_[l].end_cell;
    std::size_t from = std::max(hint, levels_[l].first_cell);
    std::size_t step = 1;
    while (from + step < last && cell_key_[from + step] < lo) {
      from += step;
      step *= 2;
    }
    std::size_t j = static_cast<std::size_t>(
        std::lower_bound(cell_key_.begin() + std::ptrdiff_t(from),
                         cell_key_.begin() + std::ptrdiff_t(std::min(from + step + 1, last)), lo) -
        cell_key_.begin());
    for (; j < last && cell_key_[j] <= hi; ++j) test_cell(j, coarse);
    hint = j;
  };
  for (std::size_t l = 0; l < levels; ++l) {
    hint = levels_[l].first_cell;
    if (l > level && !from_coarse_[level * levels + l]) {
      // Coarser level, searched from here: the 3^dim cells around the parent cell (3D: 3 x 3
      // rows in the first two axes, of 3 cells along z; 2D: 3 rows of 3 cells along y).
      const std::uint32_t shift = level_number_[l] - own;
      std::uint64_t parent = level_number_[l] * level_stride_;
      for (int a = 0; a < dim_; ++a) parent += ((coord[a] >> shift) + 1) * stride_[a];
      const std::uint64_t lowest = parent - stride_[0] - s1;  // coordinates >= 1: no wrap
      for (std::uint64_t i0 = 0; i0 < 3; ++i0) {
        for (std::uint64_t i1 = 0; i1 < (dim_ == 3 ? 3u : 1u); ++i1) {
          const std::uint64_t centre = lowest + i0 * stride_[0] + i1 * s1;
          scan_row(l, centre - 1, centre + 1, kAll);
        }
      }
    } else if (l < level && from_coarse_[l * levels + level]) {
      // Finer level, searched from here (cheaper when this level has few cells): for each
      // body of this cell, the fine cells that meet the box of its reach plus half a fine
      // cell (the largest reach a fine body has). The cells are sized with a margin, so the
      // box's rounding cannot miss a cell.
      const std::uint32_t fine = level_number_[l];
      const double half_fine = 0.5 * std::ldexp(h0_, int(fine));
      const int last_axis = dim_ - 1;
      const std::uint64_t base = fine * level_stride_;
      for (std::uint32_t q = b0; q < b1; ++q) {
        const double pos[3] = {bodies[q].x, bodies[q].y, bodies[q].z};
        const double reach = bodies[q].radius * scale_ + half_fine;
        std::uint64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
        for (int a = 0; a < dim_; ++a) {
          double t0 = (pos[a] - reach - origin_[a]) * inv_h0_;
          double t1 = (pos[a] + reach - origin_[a]) * inv_h0_;
          t0 = t0 >= 0 ? std::min(t0, max_cells_) : 0.0;  // NaN -> 0
          t1 = t1 >= 0 ? std::min(t1, max_cells_) : 0.0;
          lo[a] = static_cast<std::uint64_t>(t0) >> fine;
          hi[a] = static_cast<std::uint64_t>(t1) >> fine;
        }
        const std::uint64_t hi1 = dim_ == 3 ? hi[1] : lo[1];  // 2D: rows over x only
        hint = levels_[l].first_cell;
        for (std::uint64_t f0 = lo[0]; f0 <= hi[0]; ++f0) {
          for (std::uint64_t f1 = lo[1]; f1 <= hi1; ++f1) {
            const std::uint64_t row =
                base + (f0 + 1) * stride_[0] + (dim_ == 3 ? (f1 + 1) * s1 : 0);
            scan_row(l, row + (lo[last_axis] + 1) * stride_[last_axis],
                     row + (hi[last_axis] + 1) * stride_[last_axis], q);
          }
        }
      }
    }
  }
}

}  // namespace nbody::collisions
