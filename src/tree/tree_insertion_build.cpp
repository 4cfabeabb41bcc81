// The seed documents' tree build (Burtscher & Pingali 2011; seed 001 section 6.1.3, OpenMP
// locks per cell), `--tree-build insertion`: bodies inserted concurrently from the root into
// a pointer tree, then laid out into the flat arrays of tree.hpp, so that the moments, the
// groups and the walk are the Morton build's, unchanged.
//
// The pointer tree lives in a pool of cells (InsertionPool): per cell its child slots (-1:
// empty), its level, and, while it is a leaf, its bodies as a linked list (head, next) and
// their count; count -1 marks a cell that has been split. Each cell has an omp_lock_t that
// guards its slots, its list and its count. An insertion reads down the tree without locks
// (a slot only ever goes from empty to a cell, a leaf only ever becomes an inner cell, and
// both are published with a release store after the new cells are written), and takes one
// lock at a time: the parent's to fill an empty slot, the leaf's to add a body or, when
// the leaf is full, to split it (its bodies move to new children by their digit at the next
// level) before it goes on down. A thread never holds two locks and never waits for
// anything but a lock held for a few dozen instructions, so the build cannot deadlock or
// livelock whatever the scheduling.
//
// A cell splits when it would hold more than leaf_size bodies, unless it is at the depth
// limit key_bits_per_axis(dim), where a leaf takes any number (coincident bodies); the child
// digit is read from the body's Morton key, the integer grid coordinates of build_tree. So a
// body lands in the same cell as in build_tree, and the cells are build_tree's: a cell splits
// in both builds exactly when it holds more than leaf_size bodies.
//
// The pool is sized from a guess and kept between builds; when a build runs out of cells it
// stops inserting, doubles the pool and starts again (InsertionTimes::retries).
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "core/omp_team.hpp"
#include "tree/tree.hpp"

namespace nbody::tree {

namespace {

/// One cell's lock: an OpenMP lock (set and unset are acquire and release), none without
/// OpenMP (the insertion is then serial).
struct CellLock {
#if defined(_OPENMP)
  omp_lock_t lock;
  void init() {
    omp_init_lock(&lock);
  }
  void destroy() {
    omp_destroy_lock(&lock);
  }
  void set() {
    omp_set_lock(&lock);
  }
  void unset() {
    omp_unset_lock(&lock);
  }
#else
  void init() {}
  void destroy() {}
  void set() {}
  void unset() {}
#endif
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class T>
std::atomic_ref<T> atomic(T& v) {
  return std::atomic_ref<T>(v);
}

}  // namespace

struct InsertionPool {
  std::size_t capacity = 0;  // cells
  std::uint32_t fan = 8;     // child slots per cell: 2^dim
  int dim = 3, bits = 21;
  std::uint32_t leaf_size = 8;
  std::vector<std::int32_t> child;  // capacity * fan slots: a cell, or -1
  std::vector<std::int32_t> count;  // a leaf's bodies; -1 once split
  std::vector<std::int32_t> head;   // a leaf's first body (-1: none)
  std::vector<std::uint8_t> level;
  std::vector<std::int32_t> next;  // per body: the next body of its leaf (-1: the last)
  std::vector<CellLock> locks;
  const std::pair<std::uint64_t, std::uint32_t>* keyed = nullptr;  // per body: (key, index)
  std::atomic<std::int64_t> used{0};  // cells taken (may pass capacity on overflow)
  std::atomic<bool> overflow{false};

  [[nodiscard]] std::uint64_t key(std::int32_t b) const { return keyed[std::size_t(b)].first; }
  /// The slot a body of `key` takes in a cell of level `lv`.
  [[nodiscard]] std::uint32_t digit(std::uint64_t key, int lv) const {
    return std::uint32_t(key >> (dim * (bits - 1 - lv))) & (fan - 1);
  }

  /// Takes k cells, or returns -1 (and flags the overflow) when the pool has too few.
  std::int32_t take(std::uint32_t k) {
    const std::int64_t first = used.fetch_add(k, std::memory_order_relaxed);
    const auto cap = static_cast<std::int64_t>(capacity);
    if (first + k > cap) {
      // The cells below capacity that this thread took stay unused: their locks are
      // initialised all the same, so that destroy_locks() finds every taken cell's lock so.
      for (std::int64_t c = first; c < std::min(first + k, cap); ++c) locks[std::size_t(c)].init();
      overflow.store(true, std::memory_order_relaxed);
      return -1;
    }
    return static_cast<std::int32_t>(first);
  }
  /// An empty leaf of level lv in cell c (not yet reachable by other threads).
  void make_leaf(std::int32_t c, int lv) {
    std::fill_n(child.begin() + std::ptrdiff_t(c) * fan, fan, -1);
    count[std::size_t(c)] = 0;
    head[std::size_t(c)] = -1;
    level[std::size_t(c)] = static_cast<std::uint8_t>(lv);
    locks[std::size_t(c)].init();
  }
  /// Adds body b to leaf c (the caller holds c's lock, or c is not yet reachable).
  void push(std::int32_t c, std::int32_t b) {
    next[std::size_t(b)] = head[std::size_t(c)];
    head[std::size_t(c)] = b;
    atomic(count[std::size_t(c)]).store(count[std::size_t(c)] + 1, std::memory_order_relaxed);
  }

  /// Splits full leaf c (the caller holds its lock): its bodies go to new leaves by their
  /// digit, and c becomes an inner cell (count -1, a release store: a thread that reads it
  /// sees the new slots and leaves). False, with c unchanged, when the pool is too small.
  bool split(std::int32_t c) {
    const int lv = level[std::size_t(c)];
    std::int32_t* slots = child.data() + std::ptrdiff_t(c) * fan;
    std::uint32_t used_digits = 0;  // a bit per digit; at most 8 in 3D
    for (std::int32_t q = head[std::size_t(c)]; q >= 0; q = next[std::size_t(q)])
      used_digits |= 1u << digit(key(q), lv);
    std::int32_t fresh = take(static_cast<std::uint32_t>(std::popcount(used_digits)));
    if (fresh < 0) return false;
    for (std::uint32_t d = 0; d < fan; ++d) {
      if (!(used_digits >> d & 1u)) continue;
      make_leaf(fresh, lv + 1);
      atomic(slots[d]).store(fresh++, std::memory_order_relaxed);
    }
    for (std::int32_t q = head[std::size_t(c)]; q >= 0;) {
      const std::int32_t after = next[std::size_t(q)];
      push(atomic(slots[digit(key(q), lv)]).load(std::memory_order_relaxed), q);
      q = after;
    }
    head[std::size_t(c)] = -1;
    atomic(count[std::size_t(c)]).store(-1, std::memory_order_release);
    return true;
  }

  /// Inserts body b from the root; false when the pool ran out of cells.
  bool insert(std::int32_t b) {
    const std::uint64_t k = key(b);
    std::int32_t c = 0;
    for (;;) {
      if (atomic(count[std::size_t(c)]).load(std::memory_order_acquire) < 0) {
        // An inner cell: follow the body's slot, filling it under c's lock when empty.
        const int lv = level[std::size_t(c)];
        std::atomic_ref<std::int32_t> slot(child[std::size_t(c) * fan + digit(k, lv)]);
        std::int32_t to = slot.load(std::memory_order_acquire);
        if (to < 0) {
          locks[std::size_t(c)].set();
          to = slot.load(std::memory_order_relaxed);
          if (to < 0) {
            to = take(1);
            if (to >= 0) {
              make_leaf(to, lv + 1);
              push(to, b);
              slot.store(to, std::memory_order_release);
            }
            locks[std::size_t(c)].unset();
            return to >= 0;
          }
          locks[std::size_t(c)].unset();
        }
        c = to;
        continue;
      }
      // A leaf, unless it is split before we hold its lock: then look again.
      locks[std::size_t(c)].set();
      const std::int32_t held = atomic(count[std::size_t(c)]).load(std::memory_order_relaxed);
      if (held >= 0 && (std::uint32_t(held) < leaf_size || level[std::size_t(c)] >= bits)) {
        push(c, b);
        locks[std::size_t(c)].unset();
        return true;
      }
      const bool ok = held < 0 || split(c);
      locks[std::size_t(c)].unset();
      if (!ok) return false;
    }
  }

  /// Makes the pool hold `cells` cells for n bodies (outside any parallel region).
  void reserve(std::size_t cells, std::size_t n) {
    capacity = cells;
    child.resize(cells * fan);
    for (auto* v : {&count, &head}) v->resize(cells);
    level.resize(cells);
    locks.resize(cells);
    next.resize(n);
  }
  /// The locks of the cells taken, destroyed (each is initialised when its cell is made).
  void destroy_locks() {
    const auto taken = std::min<std::int64_t>(used.load(), std::int64_t(capacity));
    for (std::int64_t c = 0; c < taken; ++c) locks[std::size_t(c)].destroy();
  }
};

namespace {

/// Every body inserted, concurrently; false (the tree left half built) when the pool ran
/// out of cells.
bool insert_all(InsertionPool& p, std::size_t n, int team) {
  p.used.store(0);
  p.overflow.store(false);
  p.make_leaf(p.take(1), 0);  // the root: a leaf until it is split
  const auto sn = static_cast<std::ptrdiff_t>(n);
  // Dynamic chunks: on a loaded machine a thread that is descheduled leaves its share to the
  // others instead of holding up the end of the loop.
#pragma omp parallel for num_threads(team) schedule(dynamic, 256) if (team > 1 && n > 1)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    if (p.overflow.load(std::memory_order_relaxed)) continue;  // the attempt is redone
    if (!p.insert(static_cast<std::int32_t>(i))) p.overflow.store(true);
  }
  p.destroy_locks();
  return !p.overflow.load();
}

/// The pointer tree into t's flat arrays: cells breadth first with each cell's children in
/// digit order (build_tree's order), then each cell's body range from the subtree sizes,
/// then each leaf's bodies into its range sorted by (key, body index) as build_tree's
/// stable sort leaves them, and the bodies copied into tree order.
void lay_out(const InsertionPool& p, const ParticleSystem& ps, int team, Tree& t,
             BuildScratch& scratch) {
  const std::size_t n = ps.size();
  std::vector<std::int32_t>& cell_of = scratch.insertion_cells;  // flat cell -> pool cell
  cell_of.assign(1, 0);
  append_root(t);
  t.end[0] = 0;  // the sizes are summed below
  for (std::size_t c = 0; c < t.cells(); ++c) {
    const auto pc = std::size_t(cell_of[c]);
    if (p.count[pc] >= 0) continue;
    for (std::uint32_t d = 0; d < p.fan; ++d) {
      const std::int32_t to = p.child[pc * p.fan + d];
      if (to < 0) continue;
      append_child(t, c, d, 0, 0);
      cell_of.push_back(to);
    }
  }
  // Body counts bottom-up (children follow their parent), then ranges top-down.
  for (std::size_t c = t.cells(); c-- > 0;) {
    const std::int32_t held = p.count[std::size_t(cell_of[c])];
    if (held >= 0) t.end[c] = static_cast<std::uint32_t>(held);
    if (c > 0) t.end[std::size_t(t.parent[c])] += t.end[c];
  }
  for (std::size_t c = 0; c < t.cells(); ++c) {
    std::uint32_t at = t.begin[c];
    t.end[c] += at;
    for (std::uint8_t j = 0; j < t.child_count[c]; ++j) {
      const std::size_t ch = std::size_t(t.first_child[c]) + j;
      t.begin[ch] = at;
      at += t.end[ch];
    }
  }
  auto& sorted = scratch.tmp;
  sorted.resize(n);
  const auto cells = static_cast<std::ptrdiff_t>(t.cells());
  const bool parallel = team > 1 && n >= 50000;  // as build_tree's per-body loops
#pragma omp parallel for num_threads(team) schedule(dynamic, 1024) if (parallel)
  for (std::ptrdiff_t c = 0; c < cells; ++c) {
    if (!t.is_leaf(std::size_t(c))) continue;
    std::uint32_t k = t.begin[std::size_t(c)];
    for (std::int32_t q = p.head[std::size_t(cell_of[std::size_t(c)])]; q >= 0;
         q = p.next[std::size_t(q)])
      sorted[k++] = scratch.keyed[std::size_t(q)];
    std::sort(sorted.begin() + t.begin[std::size_t(c)], sorted.begin() + k);
  }
  const bool planar = t.dim == 2;
  const auto sn = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(team) schedule(static) if (parallel)
  for (std::ptrdiff_t i = 0; i < sn; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const std::uint32_t s = sorted[k].second;
    t.keys[k] = sorted[k].first;
    t.order[k] = s;
    t.x[k] = ps.x[s];
    t.y[k] = ps.y[s];
    t.z[k] = planar ? 0.0 : ps.z[s];
    t.m[k] = ps.mass[s];
  }
}

}  // namespace

void build_tree_insertion(const ParticleSystem& ps, int dim, std::size_t leaf_size, int threads,
                          Tree& t, BuildScratch& scratch) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t n = ps.size();
  const int team = team_size(threads);
  InsertionTimes& times = scratch.insertion_times;
  times = {};
  reset_tree(t, n, dim, leaf_size);
  if (n == 0) return;
  bounding_cube(ps, dim, threads, t);
  morton_keys(ps, dim, threads, t, scratch.keyed);
  times.prepare = seconds_since(t0);

  const auto t1 = std::chrono::steady_clock::now();
  if (!scratch.insertion) scratch.insertion = std::make_shared<InsertionPool>();
  InsertionPool& p = *scratch.insertion;
  p.dim = dim;
  p.bits = key_bits_per_axis(dim);
  p.fan = 1u << dim;
  p.leaf_size = static_cast<std::uint32_t>(t.leaf_size);
  p.keyed = scratch.keyed.data();
  // A guess (a Plummer sphere with 8-body leaves makes 0.42 cells per body); the pool
  // keeps its size, so a run pays for a retry at most once or twice.
  p.reserve(std::max(p.capacity, n / 2 + 16), n);
  while (!insert_all(p, n, team)) {
    ++times.retries;
    p.reserve(2 * p.capacity, n);
  }
  times.nodes = static_cast<std::size_t>(p.used.load());
  times.insert = seconds_since(t1);

  const auto t2 = std::chrono::steady_clock::now();
  lay_out(p, ps, team, t, scratch);
  times.layout = seconds_since(t2);
}

}  // namespace nbody::tree
