// The shared top tree (shared_top_tree.hpp).
//
// Which cells can be shared: a cell holds bodies of another rank r only if its key range
// meets r's span [smallest key, largest key] (r's bodies have keys in both). So every rank
// all-gathers its span (24 bytes), and walks its tree from the root down through the cells
// whose range meets another rank's span: after a migration the spans are the pieces of the
// key line, so these are the cells around the cuts, a few per level. Every cell that two
// ranks hold is found by both, so each finds all the records of its cells in the gather.
// A cell another rank's span meets but whose bodies are all this rank's keeps its moments
// (one record: the global cell is this one).
#include "parallel/shared_top_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/hilbert.hpp"
#include "nbody/error.hpp"
#include "nbody/physics/multipole.hpp"
#include "tree/tree.hpp"

namespace nbody::parallel {
namespace {

static_assert(std::is_trivially_copyable_v<TopCell> && std::is_trivially_copyable_v<KeySpan>);

bool before(const TopCell& a, const TopCell& b) {
  if (a.level != b.level) return a.level < b.level;
  if (a.prefix != b.prefix) return a.prefix < b.prefix;
  return a.rank < b.rank;
}

template <class T>
std::vector<T> read_all(const ForceReducer::Bytes& bytes, const char* what, int from) {
  if (bytes.size() % sizeof(T) != 0)
    throw Error(fmt::format("shared top tree: rank {} sent {} bytes of {}, not a multiple of {}",
                            from, bytes.size(), what, sizeof(T)));
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

template <class T>
ForceReducer::Bytes as_bytes(const std::vector<T>& v) {
  ForceReducer::Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

bool finite_record(const TopCell& c) {
  const double v[] = {c.mass,    c.comx,    c.comy,    c.comz,    c.bmax,    c.quad.xx,
                      c.quad.yy, c.quad.zz, c.quad.xy, c.quad.xz, c.quad.yz, c.quad.tr};
  return std::all_of(std::begin(v), std::end(v), [](double x) { return std::isfinite(x); }) &&
         c.mass >= 0 && c.bmax >= 0;
}

/// Splits leaf c of t into its children by the next digit of its bodies' keys (sorted), as
/// the build splits a cell (tree_build.cpp).
template <class Shift>
void split_leaf(tree::Tree& t, std::size_t c, const Shift& shift) {
  const int s = shift(t.level[c] + 1u);
  const std::uint64_t mask = (std::uint64_t(1) << t.dim) - 1;
  auto digit = [&](std::uint32_t k) { return std::uint32_t((t.keys[k] >> s) & mask); };
  for (std::uint32_t b = t.begin[c], e = t.end[c]; b < e;) {
    std::uint32_t k = b + 1;
    while (k < e && digit(k) == digit(b)) ++k;
    tree::append_child(t, c, digit(b), b, k);
    b = k;
  }
}

}  // namespace

std::vector<KeySpan> gather_key_spans(const KeySpan& mine, ForceReducer& comm) {
  const auto gathered = comm.all_gather(as_bytes(std::vector<KeySpan>{mine}));
  std::vector<KeySpan> spans;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    const auto s = read_all<KeySpan>(gathered[r], "its span", int(r));
    if (s.size() != 1) throw Error(fmt::format("shared top tree: rank {} sent no span", r));
    spans.push_back(s[0]);
  }
  return spans;
}

std::vector<TopCell> gather_top_cells(const std::vector<TopCell>& mine, int dim,
                                      ForceReducer& comm) {
  const auto gathered = comm.all_gather(as_bytes(mine));
  const auto levels = std::uint32_t(dim == 2 ? 31 : 21);
  std::vector<TopCell> all;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    for (const TopCell& rec : read_all<TopCell>(gathered[r], "cells", int(r))) {
      if (rec.level > levels || !finite_record(rec) || rec.rank != r || rec.leaf > 1 ||
          rec.count == 0)
        throw Error(
            fmt::format("shared top tree: rank {} sent a malformed cell (level {})", r, rec.level));
      all.push_back(rec);
    }
  }
  std::sort(all.begin(), all.end(), before);
  return all;
}

namespace {
/// The records of the cell of `own` in `all`: [first, last).
std::pair<std::vector<TopCell>::const_iterator, std::vector<TopCell>::const_iterator> group_of(
    const std::vector<TopCell>& all, const TopCell& own) {
  TopCell key = own;
  key.rank = 0;
  const auto first = std::lower_bound(all.begin(), all.end(), key, before);
  auto last = first;
  while (last != all.end() && last->level == own.level && last->prefix == own.prefix) ++last;
  return {first, last};
}
}  // namespace

GlobalCell global_cell(const std::vector<TopCell>& all, const TopCell& own,
                       const double (&centre)[3], int dim) {
  const auto [first, last] = group_of(all, own);
  GlobalCell g{own.mass, own.comx, own.comy, own.comz, own.bmax, own.quad, 0, own.rank};
  g.copies = std::size_t(last - first);
  if (g.copies <= 1) return g;  // this rank's alone: the global cell is this one
  g.adder = first->rank;
  double m = 0, mx = 0, my = 0, mz = 0;
  for (auto p = first; p != last; ++p) {
    m += p->mass;
    mx += p->mass * p->comx;
    my += p->mass * p->comy;
    mz += p->mass * p->comz;
  }
  // The geometric centre stands in for a massless cell's, as in compute_moments.
  g.mass = m;
  g.comx = m > 0 ? mx / m : centre[0];
  g.comy = m > 0 ? my / m : centre[1];
  g.comz = dim == 2 ? 0.0 : (m > 0 ? mz / m : centre[2]);
  g.bmax = 0;
  g.quad = {};
  for (auto p = first; p != last; ++p) {
    const double dx = p->comx - g.comx, dy = p->comy - g.comy, dz = p->comz - g.comz;
    g.bmax = std::max(g.bmax, std::sqrt(dx * dx + dy * dy + dz * dz) + p->bmax);
    add_shifted_quadrupole(g.quad, p->quad, p->mass, dx, dy, dz);
  }
  return g;
}

std::size_t share_top_cells(tree::Tree& t, ForceReducer& comm, DomainCurve curve,
                            std::size_t max_cells) {
  const int parts = comm.parts(), me = comm.part();
  if (parts <= 1) return 0;
  const int levels = tree::key_bits_per_axis(t.dim);  // the deepest level: a cell of one key
  const bool quad = !t.quad.empty();
  const bool empty = t.cells() == 0 || t.keys.size() != t.bodies() || t.bodies() == 0;
  // Along the domain's curve: a tree key (Morton) as the curve's key of the same grid point.
  const bool hilbert = curve == DomainCurve::Hilbert;
  auto along = [&](std::uint64_t morton) {
    return hilbert ? hilbert_from_morton(morton, t.dim) : morton;
  };
  KeySpan mine{empty ? 0u : 1u, empty ? 0 : t.keys.front(), empty ? 0 : t.keys.back()};
  if (hilbert && !empty) {  // the tree's order is not the curve's: every key
    mine.lo = ~std::uint64_t(0), mine.hi = 0;
    for (const std::uint64_t k : t.keys) {
      const std::uint64_t h = along(k);
      mine.lo = std::min(mine.lo, h), mine.hi = std::max(mine.hi, h);
    }
  }
  const std::vector<KeySpan> spans = gather_key_spans(mine, comm);
  auto shift = [&](std::uint32_t level) { return t.dim * (levels - int(level)); };
  auto prefix_of = [&](std::size_t c) {
    const int s = shift(t.level[c]);
    return s >= 64 ? std::uint64_t(0) : t.keys[t.begin[c]] >> s;
  };
  // Whether another rank's span meets cell c's key range.
  auto meets_another = [&](std::size_t c) {
    const int s = shift(t.level[c]);
    // Both curves visit a cell's grid points as one aligned range of keys (core/hilbert.hpp).
    const std::uint64_t width_less_one = s >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << s) - 1;
    const std::uint64_t lo = s >= 64 ? 0 : along(prefix_of(c) << s) & ~width_less_one;
    const std::uint64_t hi = lo + width_less_one;
    for (int r = 0; r < parts; ++r) {
      const KeySpan& o = spans[std::size_t(r)];
      if (r != me && o.has != 0 && o.lo <= hi && lo <= o.hi) return true;
    }
    return false;
  };

  // This rank's candidate cells, top down, their records, and every rank's.
  std::vector<std::size_t> cells;
  std::vector<TopCell> records, all;
  auto gather = [&] {
    cells.clear();
    records.clear();
    std::vector<std::size_t> stack;
    if (!empty) stack.push_back(0);
    while (!stack.empty()) {
      const std::size_t c = stack.back();
      stack.pop_back();
      if (!meets_another(c)) continue;
      cells.push_back(c);
      records.push_back({prefix_of(c), t.end[c] - t.begin[c], t.level[c], std::uint32_t(me),
                         t.is_leaf(c) ? 1u : 0u, 0, t.mass[c], t.comx[c], t.comy[c], t.comz[c],
                         t.bmax[c], quad ? t.quad[c] : Quadrupole<double>{}});
      if (t.is_leaf(c)) continue;
      const auto first = static_cast<std::size_t>(t.first_child[c]);
      for (std::size_t ch = first; ch < first + t.child_count[c]; ++ch) stack.push_back(ch);
    }
    const int most = comm.max(int(std::min(records.size(), max_cells + 1)));
    if (std::size_t(most) > max_cells) return false;  // every rank gives up together
    all = gather_top_cells(records, t.dim, comm);
    return true;
  };
  // A shared cell of more than a leaf's bodies that some rank holds as a leaf (it holds few
  // of them) is split there, as one process's build splits it, so that every rank's cells
  // below it are one process's too; rounds until none is left (every rank decides from the
  // same records, so all take the same rounds). The cells split are few: the shared cells
  // are those around the cuts.
  auto must_split = [&](auto first, auto last) {
    std::uint64_t count = 0;
    bool leaf = false;
    for (auto p = first; p != last; ++p) count += p->count, leaf = leaf || p->leaf != 0;
    return last - first > 1 && leaf && count > t.leaf_size && first->level < std::uint32_t(levels);
  };
  for (;;) {
    if (!gather()) return 0;  // the tree stays as split and summed so far, every cell its own
    bool again = false;
    for (auto p = all.cbegin(); p != all.cend();) {
      auto q = p;
      while (q != all.cend() && q->level == p->level && q->prefix == p->prefix) ++q;
      again = again || must_split(p, q);
      p = q;
    }
    if (!again) break;
    bool split = false;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const auto [first, last] = group_of(all, records[i]);
      if (records[i].leaf != 0 && must_split(first, last)) {
        split_leaf(t, cells[i], shift);
        split = true;
      }
    }
    if (split) tree::compute_moments(t, quad);
  }

  // Each candidate cell of t from its records, in rank order (the same bits on every rank).
  std::size_t shared = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const std::size_t c = cells[i];
    const GlobalCell g = global_cell(all, records[i], {t.cx[c], t.cy[c], t.cz[c]}, t.dim);
    if (g.copies <= 1) continue;
    ++shared;
    t.mass[c] = g.mass;
    t.comx[c] = g.comx, t.comy[c] = g.comy, t.comz[c] = g.comz;
    t.bmax[c] = g.bmax;
    if (quad) t.quad[c] = g.quad;
    if (g.adder != std::uint32_t(me)) {
      t.silent.resize(t.cells(), 0);
      t.silent[c] = 1;
    }
  }
  tree::build_walk_nodes(t);
  return shared;
}

}  // namespace nbody::parallel
