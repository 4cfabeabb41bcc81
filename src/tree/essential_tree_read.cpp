// The reader of essential trees (essential_tree.hpp): the bytes come from another process,
// so everything is checked before it is used: the size against the counts, the shape (a
// tree, breadth first, every cell but the root the child of one earlier cell, every body
// in one leaf), the indices, finite values. Any failure is an nbody::Error.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "nbody/error.hpp"
#include "tree/essential_tree.hpp"
#include "tree/essential_tree_format.hpp"

namespace nbody::tree {
namespace {

using namespace let;

[[noreturn]] void malformed(const std::string& what) {
  throw Error("read_essential_tree: malformed buffer: " + what);
}

bool finite_all(std::initializer_list<double> values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace

Tree read_essential_tree(const std::vector<char>& bytes) {
  if (bytes.size() < sizeof(Header)) malformed(fmt::format("{} bytes, no header", bytes.size()));
  const auto h = get<Header>(bytes, 0);
  if (h.magic != kMagic) malformed("not an essential tree");
  if (h.dim != 2 && h.dim != 3) malformed(fmt::format("dimension {}", h.dim));
  if (h.criterion > static_cast<std::uint32_t>(OpeningCriterion::Relative)) {
    malformed(fmt::format("criterion {}", h.criterion));
  }
  if (h.quadrupole > 1) malformed("quadrupole flag");
  if (!finite_all({h.root_x, h.root_y, h.root_z, h.root_half}) || !(h.root_half > 0)) {
    malformed("root cube");
  }
  const std::size_t record_bytes = sizeof(CellRecord) + (h.quadrupole ? sizeof(Quad) : 0);
  const std::size_t rest = bytes.size() - sizeof(Header);
  // Counts checked against the size before any product that could overflow.
  if (h.cells > rest / record_bytes || h.bodies > rest / sizeof(BodyRecord) ||
      h.cells * record_bytes + h.bodies * sizeof(BodyRecord) != rest) {
    malformed(fmt::format("{} bytes for {} cells and {} bodies", bytes.size(), h.cells, h.bodies));
  }
  if (h.cells > static_cast<std::uint64_t>(INT32_MAX) || h.bodies > UINT32_MAX) {
    malformed("too many cells or bodies");
  }
  Tree t;
  const auto dim = static_cast<int>(h.dim);
  const auto cells = static_cast<std::size_t>(h.cells);
  const auto nb = static_cast<std::size_t>(h.bodies);
  reset_tree(t, nb, dim, t.leaf_size);
  t.order.clear();
  t.keys.clear();
  t.root_x = h.root_x;
  t.root_y = h.root_y;
  t.root_z = h.root_z;
  t.root_half = h.root_half;
  for (auto* v : {&t.mass, &t.comx, &t.comy, &t.comz, &t.bmax}) v->resize(cells);
  if (h.quadrupole) t.quad.resize(cells);
  // The shape: breadth first, every cell but the root the child of exactly one earlier
  // cell (children numbered consecutively), every body in exactly one leaf.
  std::size_t next_cell = 1;
  std::uint32_t next_body = 0;
  const std::uint32_t max_children = 1u << dim;
  const int max_level = key_bits_per_axis(dim);
  std::size_t at = sizeof(Header);
  for (std::size_t c = 0; c < cells; ++c, at += record_bytes) {
    const auto r = get<CellRecord>(bytes, at);
    if (c >= next_cell) malformed(fmt::format("cell {} has no parent", c));
    if (!finite_all({r.comx, r.comy, r.comz, r.mass, r.cx, r.cy, r.cz, r.half, r.bmax}) ||
        !(r.half > 0) || r.mass < 0 || r.bmax < 0 || (r.flags & ~kSilentCell) != 0) {
      malformed(fmt::format("cell {}: values", c));
    }
    if (r.first_child >= 0) {
      if (static_cast<std::size_t>(r.first_child) != next_cell || r.child_count == 0 ||
          r.child_count > max_children || r.child_count > cells - next_cell) {
        malformed(fmt::format("cell {}: children {} + {}", c, r.first_child, r.child_count));
      }
      next_cell += r.child_count;
    } else if (r.child_count != 0 || (r.first_child != -1 && r.first_child != Tree::kPrunedCell)) {
      malformed(fmt::format("cell {}: child {}", c, r.first_child));
    }
    if (r.first_child == -1 ? (r.begin != next_body || r.end <= r.begin || r.end > nb)
                            : (r.begin != 0 || r.end != 0)) {
      malformed(fmt::format("cell {}: bodies [{}, {})", c, r.begin, r.end));
    }
    if (r.first_child == -1) next_body = r.end;
    // The cell arrays (append_child's layout, from the record).
    t.first_child.push_back(r.first_child);
    t.child_count.push_back(static_cast<std::uint8_t>(r.child_count));
    t.cx.push_back(r.cx);
    t.cy.push_back(r.cy);
    t.cz.push_back(r.cz);
    t.half.push_back(r.half);
    t.begin.push_back(r.begin);
    t.end.push_back(r.end);
    t.mass[c] = r.mass;
    t.comx[c] = r.comx;
    t.comy[c] = r.comy;
    t.comz[c] = r.comz;
    t.bmax[c] = r.bmax;
    if (r.flags & kSilentCell) {
      t.silent.resize(cells, 0);
      t.silent[c] = 1;
    }
    if (h.quadrupole) {
      const auto q = get<Quad>(bytes, at + sizeof(CellRecord));
      if (!finite_all({q.xx, q.yy, q.zz, q.xy, q.xz, q.yz, q.tr})) {
        malformed(fmt::format("cell {}: quadrupole", c));
      }
      t.quad[c] = q;
    }
  }
  if (cells != 0 && next_cell != cells) malformed("children past the cells");
  if (next_body != nb) malformed(fmt::format("{} of {} bodies in leaves", next_body, nb));
  // Parents and levels from the children's ranges.
  t.parent.assign(cells, -1);
  t.level.assign(cells, 0);
  for (std::size_t c = 0; c < cells; ++c) {
    if (t.first_child[c] < 0) continue;
    const auto first = static_cast<std::size_t>(t.first_child[c]);
    for (std::size_t ch = first; ch < first + t.child_count[c]; ++ch) {
      if (t.level[c] >= max_level) malformed(fmt::format("cell {} deeper than the keys", ch));
      t.parent[ch] = static_cast<std::int32_t>(c);
      t.level[ch] = static_cast<std::uint8_t>(t.level[c] + 1);
    }
  }
  for (std::size_t k = 0; k < nb; ++k, at += sizeof(BodyRecord)) {
    const auto b = get<BodyRecord>(bytes, at);
    if (!finite_all({b.x, b.y, b.z, b.m})) malformed(fmt::format("body {}", k));
    t.x[k] = b.x;
    t.y[k] = b.y;
    t.z[k] = b.z;
    t.m[k] = b.m;
  }
  build_walk_nodes(t);
  set_opening(t, static_cast<OpeningCriterion>(h.criterion));
  return t;
}

EssentialTreeCounts essential_tree_counts(const Tree& received, std::size_t bytes) {
  EssentialTreeCounts n;
  n.cells = received.cells();
  n.bodies = received.bodies();
  n.bytes = bytes;
  for (const std::int32_t f : received.first_child) {
    n.pruned += f == Tree::kPrunedCell ? 1 : 0;
    n.leaves += f == -1 ? 1 : 0;
  }
  return n;
}

}  // namespace nbody::tree
