// Tree build from Morton-sorted bodies (the issue allows this instead of inserting
// bodies one at a time under per-cell locks): bounding cube, Morton keys, radix sort,
// permutation into tree order, then a top-down split in which a cell covers a contiguous
// key range and its children are found by binary search on the next key digit.
// No locks, no pointer chasing, and the same tree for any number of threads.
// The seeds' build with locks (`--tree-build insertion`, tree_insertion_build.cpp) shares
// the root cube, the keys and the cell append below, and makes the same tree.
//
// Measured (Plummer N = 100000, 3D, leaf 8, Zen 3, quiet machine): the build takes ~7 ms
// of a 123 ms evaluation (2 threads, float), moments + groups ~1 ms: ~6%, so the sort and
// the split stay serial; the bounding box, keys and permutation are OpenMP loops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "core/morton.hpp"
#include "core/omp_team.hpp"
#include "core/radix_sort.hpp"
#include "tree/tree.hpp"

namespace nbody::tree {
namespace {

// The per-body loops below are a few ns per body: below ~50k bodies a thread team costs
// more than it saves, and on a loaded machine its barriers can stall for milliseconds
// (measured: the build at N = 5000 took 24 ms instead of 0.4 ms while the other core was
// busy).
bool worth_a_team(std::size_t n) {
  return n >= 50000;
}

void add_cell(Tree& t, std::int32_t parent, int level, double x, double y, double z, double h,
              std::uint32_t b, std::uint32_t e) {
  t.first_child.push_back(-1);
  t.child_count.push_back(0);
  t.parent.push_back(parent);
  t.level.push_back(static_cast<std::uint8_t>(level));
  t.cx.push_back(x);
  t.cy.push_back(y);
  t.cz.push_back(z);
  t.half.push_back(h);
  t.begin.push_back(b);
  t.end.push_back(e);
}

void split_in_cube(const ParticleSystem& ps, int threads, Tree& t, BuildScratch& scratch);

}  // namespace

void append_root(Tree& t) {
  add_cell(t, -1, 0, t.root_x, t.root_y, t.root_z, t.root_half, 0,
           static_cast<std::uint32_t>(t.bodies()));
}

void append_child(Tree& t, std::size_t c, std::uint32_t digit, std::uint32_t b, std::uint32_t e) {
  if (t.child_count[c] == 0) t.first_child[c] = static_cast<std::int32_t>(t.cells());
  const double h = 0.5 * t.half[c];
  add_cell(t, static_cast<std::int32_t>(c), t.level[c] + 1, t.cx[c] + ((digit & 1) ? h : -h),
           t.cy[c] + ((digit & 2) ? h : -h),
           t.dim == 2 ? t.cz[c] : t.cz[c] + ((digit & 4) ? h : -h), h, b, e);
  ++t.child_count[c];
}

void reset_tree(Tree& t, std::size_t n, int dim, std::size_t leaf_size) {
  t.dim = dim;
  t.leaf_size = std::max<std::size_t>(leaf_size, 1);
  for (auto* v : {&t.first_child, &t.parent}) v->clear();
  t.child_count.clear();
  t.level.clear();
  for (auto* v : {&t.cx, &t.cy, &t.cz, &t.half}) v->clear();
  t.begin.clear();
  t.end.clear();
  t.silent.clear();
  for (auto* v : {&t.x, &t.y, &t.z, &t.m}) v->resize(n);
  t.order.resize(n);
  t.keys.resize(n);
}

void body_bounds(const ParticleSystem& ps, int dim, int threads, double (&lo)[3], double (&hi)[3]) {
  const std::size_t n = ps.size();
  const bool planar = dim == 2;
  // A parallel min/max reduction.
  const double inf = std::numeric_limits<double>::infinity();
  double lx = inf, ly = inf, lz = inf, hx = -inf, hy = -inf, hz = -inf;
  const auto sn = static_cast<std::ptrdiff_t>(n);
  const bool parallel = worth_a_team(n);
#pragma omp parallel for num_threads(team_size(threads)) schedule(static) if (parallel) \
    reduction(min                                                                       \
              : lx, ly, lz) reduction(max                                               \
                                      : hx, hy, hz)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto u = static_cast<std::size_t>(i);
    lx = std::min(lx, ps.x[u]);
    hx = std::max(hx, ps.x[u]);
    ly = std::min(ly, ps.y[u]);
    hy = std::max(hy, ps.y[u]);
    const double zi = planar ? 0.0 : ps.z[u];
    lz = std::min(lz, zi);
    hz = std::max(hz, zi);
  }
  lo[0] = lx, lo[1] = ly, lo[2] = lz, hi[0] = hx, hi[1] = hy, hi[2] = hz;
}

void bounding_cube(const ParticleSystem& ps, int dim, int threads, Tree& t) {
  double lo[3], hi[3];
  body_bounds(ps, dim, threads, lo, hi);
  const RootCube cube = root_cube_from_bounds(lo, hi);
  t.root_x = cube.x;
  t.root_y = cube.y;
  t.root_z = cube.z;
  t.root_half = cube.half;
}

RootCube root_cube_from_bounds(const double (&lo)[3], const double (&hi)[3]) {
  const double lx = lo[0], ly = lo[1], lz = lo[2], hx = hi[0], hy = hi[1], hz = hi[2];
  RootCube cube{0.5 * (lx + hx), 0.5 * (ly + hy), 0.5 * (lz + hz), 0};
  const double extent = std::max({hx - lx, hy - ly, hz - lz});
  // Slightly larger than the extent so the extreme bodies get keys below 2^bits; all
  // bodies at one point still get a cube of positive size (its value does not matter).
  const double big = std::max(
      {std::abs(lx), std::abs(hx), std::abs(ly), std::abs(hy), std::abs(lz), std::abs(hz)});
  cube.half = extent > 0 ? 0.5 * extent * (1 + 1e-9) : (big > 0 ? big : 1.0);
  return cube;
}

void morton_keys(const ParticleSystem& ps, int dim, int threads, const Tree& t,
                 std::vector<std::pair<std::uint64_t, std::uint32_t>>& keyed) {
  const std::size_t n = ps.size();
  const bool planar = dim == 2;
  // Digit order inside a level: x is bit 0, y bit 1, z bit 2.
  const int bits = key_bits_per_axis(dim);
  const double cells_per_axis = std::ldexp(1.0, bits);
  const double to_grid = cells_per_axis / (2 * t.root_half);
  const double x0 = t.root_x - t.root_half, y0 = t.root_y - t.root_half,
               z0 = t.root_z - t.root_half;
  auto grid = [&](double v, double lo) {
    const double g = std::floor((v - lo) * to_grid);
    return static_cast<std::uint64_t>(std::clamp(g, 0.0, cells_per_axis - 1));
  };
  keyed.resize(n);
  const auto sn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(team_size(threads)) schedule(static) if (worth_a_team(n))
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const std::uint64_t gx = grid(ps.x[u], x0), gy = grid(ps.y[u], y0);
    const std::uint64_t key =
        planar ? spread2(gx) | spread2(gy) << 1
               : spread3(gx) | spread3(gy) << 1 | spread3(grid(ps.z[u], z0)) << 2;
    keyed[u] = {key, static_cast<std::uint32_t>(u)};
  }
}

void build_tree(const ParticleSystem& ps, int dim, std::size_t leaf_size, int threads, Tree& t,
                BuildScratch& scratch) {
  reset_tree(t, ps.size(), dim, leaf_size);
  if (ps.size() == 0) return;
  bounding_cube(ps, dim, threads, t);
  split_in_cube(ps, threads, t, scratch);
}

void build_tree(const ParticleSystem& ps, int dim, std::size_t leaf_size, int threads,
                const RootCube& cube, Tree& t, BuildScratch& scratch) {
  reset_tree(t, ps.size(), dim, leaf_size);
  t.root_x = cube.x;  // also without bodies: the empty tree's essential trees carry it
  t.root_y = cube.y;
  t.root_z = dim == 2 ? 0.0 : cube.z;
  t.root_half = cube.half;
  if (ps.size() == 0) return;
  split_in_cube(ps, threads, t, scratch);
}

namespace {

/// build_tree's keys, sort and split, t reset and its root cube set.
void split_in_cube(const ParticleSystem& ps, int threads, Tree& t, BuildScratch& scratch) {
  const std::size_t n = ps.size();
  const int dim = t.dim;
  const int team = team_size(threads);
  const bool planar = dim == 2;
  const int bits = key_bits_per_axis(dim);
  morton_keys(ps, dim, threads, t, scratch.keyed);
  const auto sn = static_cast<std::ptrdiff_t>(n);
  const bool parallel = worth_a_team(n);
  radix_sort(scratch.keyed, scratch.tmp, dim * bits);

  // Bodies into tree order.
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const std::uint32_t s = scratch.keyed[k].second;
    t.keys[k] = scratch.keyed[k].first;
    t.order[k] = s;
    t.x[k] = ps.x[s];
    t.y[k] = ps.y[s];
    t.z[k] = planar ? 0.0 : ps.z[s];
    t.m[k] = ps.mass[s];
  }

  // Top-down split, breadth first: the cell array is its own work queue (cell c is
  // processed after every cell before it, and appends its children at the end), so there
  // is no recursion and no stack, and children always follow their parent.
  append_root(t);
  const std::uint32_t children = 1u << dim;
  for (std::size_t c = 0; c < t.cells(); ++c) {
    const std::uint32_t b = t.begin[c], e = t.end[c];
    const int level = t.level[c];
    if (e - b <= t.leaf_size || level >= bits) continue;  // a leaf (bucket at max depth)
    const int shift = dim * (bits - 1 - level);
    std::uint32_t lo = b;
    for (std::uint32_t digit = 0; digit < children && lo < e; ++digit) {
      // Keys in [b, e) share every digit above this level, so the digit orders them.
      const std::uint64_t* first = t.keys.data() + lo;
      const auto* hi_ptr = std::partition_point(
          first, static_cast<const std::uint64_t*>(t.keys.data() + e),
          [&](std::uint64_t k) { return ((k >> shift) & (children - 1)) <= digit; });
      const auto hi = static_cast<std::uint32_t>(hi_ptr - t.keys.data());
      if (hi > lo) append_child(t, c, digit, lo, hi);
      lo = hi;
    }
  }
}

}  // namespace

}  // namespace nbody::tree
