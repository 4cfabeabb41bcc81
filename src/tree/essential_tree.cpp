// Locally essential trees: the sender's walk against a receiver's box, the bytes, and
// the reader that checks them (essential_tree.hpp).
//
// Why a group of the receiver never opens a cell the box accepted (monotonicity), as
// collect_interactions (tree_walk.cpp) computes its test; here the same expressions are
// evaluated with the box B in place of the group's box g, and g lies inside B:
// - g is the bounding box of some of the receiver's bodies, B of all of them, widened
//   by `margin` (below), so g is inside B with room to spare for the rounding of the
//   boxes' centres and half extents (a few ulps of the coordinates, ~2^-52 of them,
//   against a margin of 2^-40 of them).
// - Overlap: a cell is opened when it is not apart from the box on every axis,
//   |c - b| > h + hb + slack with the same slack (the same root cube): a cell apart from
//   B on an axis is apart from g, so one that g overlaps overlaps B.
// - Distance: distance2_point_box sums per axis max(|p - c| - h, 0)^2; each gap to B is
//   <= the gap to g, and rounding is monotone (x <= y gives fl(x) <= fl(y); the squares,
//   the sum of non-negative terms and the products with constants keep the order), so
//   d2(B) <= d2(g) as computed.
// - Geometric and bmax: opened when open >= theta2 * d2; theta2 * d2(B) <= theta2 * d2(g),
//   so g's opening implies B's.
// - Relative: opened when M s^2 > alpha_a * d2 * d2 and s^2 >= 0.01 d2, alpha_a = alpha *
//   (smallest |a_old| / G): B's smallest is over all the receiver's bodies, so <= the
//   group's, and alpha_a(B) d2(B)^2 <= alpha_a(g) d2(g)^2, 0.01 d2(B) <= 0.01 d2(g).
// So the receiver's walk meets no pruned cell that its test opens; it uses a pruned cell
// whole all the same (WalkOutput::forced_accepts counts any, the tests check 0).
#include "tree/essential_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "nbody/error.hpp"
#include "nbody/physics/opening_criterion.hpp"

namespace nbody::tree {
namespace {

constexpr std::uint32_t kMagic = 0x3154454c;  // "LET1"

/// The fixed part of a buffer; then `cells` CellRecords (each followed by its Quadrupole
/// when `quadrupole`), then `bodies` BodyRecords.
struct Header {
  std::uint32_t magic, dim, criterion, quadrupole;
  double root_x, root_y, root_z, root_half;
  std::uint64_t cells, bodies;
};
struct CellRecord {
  double comx, comy, comz, mass, cx, cy, cz, half, bmax;
  std::int32_t first_child;  // first child's record; -1 a leaf, Tree::kPrunedCell
  std::uint32_t child_count;
  std::uint32_t begin, end;  // a leaf's bodies among the buffer's; 0, 0 otherwise
};
struct BodyRecord {
  double x, y, z, m;
};
using Quad = Quadrupole<double>;
static_assert(std::is_trivially_copyable_v<Header> && std::is_trivially_copyable_v<CellRecord> &&
              std::is_trivially_copyable_v<Quad>);

template <class T>
void put(std::vector<char>& out, const T& v) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

/// Reads T at `at` (bounds checked by the caller's size check).
template <class T>
T get(const std::vector<char>& in, std::size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof(T));
  return v;
}

[[noreturn]] void malformed(const std::string& what) {
  throw Error("read_essential_tree: malformed buffer: " + what);
}

bool finite_all(std::initializer_list<double> values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

}  // namespace

ReceiverBox receiver_box(const Tree& t, const double* a_old) {
  ReceiverBox box;
  box.dim = t.dim;
  for (std::size_t k = 0; k < t.bodies(); ++k) {
    const double p[3] = {t.x[k], t.y[k], t.z[k]};
    for (int a = 0; a < 3; ++a) {
      box.lo[a] = std::min(box.lo[a], p[a]);
      box.hi[a] = std::max(box.hi[a], p[a]);
    }
  }
  if (a_old) {
    box.a_min = INFINITY;
    for (std::size_t k = 0; k < t.bodies(); ++k) box.a_min = std::min(box.a_min, a_old[k]);
  }
  return box;
}

std::vector<char> receiver_box_bytes(const ReceiverBox& box) {
  std::vector<char> out;
  put(out, box);
  return out;
}

ReceiverBox read_receiver_box(const std::vector<char>& bytes) {
  if (bytes.size() != sizeof(ReceiverBox)) {
    throw Error(
        fmt::format("read_receiver_box: {} bytes, expected {}", bytes.size(), sizeof(ReceiverBox)));
  }
  const auto box = get<ReceiverBox>(bytes, 0);
  if ((box.dim != 2 && box.dim != 3) || std::isnan(box.a_min) ||
      std::any_of(box.lo, box.lo + 3, [](double v) { return std::isnan(v); }) ||
      std::any_of(box.hi, box.hi + 3, [](double v) { return std::isnan(v); })) {
    throw Error("read_receiver_box: malformed box");
  }
  return box;
}

OpeningCriterion effective_criterion(const WalkOptions& options, const ReceiverBox& box) {
  if (options.mac != OpeningCriterion::Relative) return options.mac;
  return box.a_min >= 0 ? OpeningCriterion::Relative : OpeningCriterion::Geometric;
}

void check_sources(const Tree& targets, const Tree& sources, const WalkOptions& options) {
  if (sources.cells() == 0) return;
  const ReceiverBox box{.dim = targets.dim, .a_min = options.a_old ? 0.0 : -1.0};
  if (sources.dim != targets.dim || sources.opening != effective_criterion(options, box) ||
      (options.quadrupole && sources.quad.empty())) {
    throw Error(fmt::format(
        "walk_forces: sources (dimension {}, criterion {}, {} quadrupoles) that the walk "
        "(dimension {}, criterion {}, quadrupoles {}) cannot use",
        sources.dim, to_string(sources.opening), sources.quad.empty() ? "no" : "with", targets.dim,
        to_string(effective_criterion(options, box)), options.quadrupole));
  }
}

std::vector<char> essential_tree(const Tree& local, const ReceiverBox& box,
                                 const WalkOptions& options) {
  if (box.dim != local.dim) {
    throw Error(fmt::format("essential_tree: a receiver of dimension {} for a tree of {}", box.dim,
                            local.dim));
  }
  const bool quad = options.quadrupole;
  if (quad && local.cells() != 0 && local.quad.empty()) {
    throw Error("essential_tree: quadrupoles asked for, the tree has none");
  }
  const OpeningCriterion mac = effective_criterion(options, box);
  Header h{kMagic,
           static_cast<std::uint32_t>(local.dim),
           static_cast<std::uint32_t>(mac),
           quad ? 1u : 0u,
           local.root_x,
           local.root_y,
           local.root_z,
           local.root_half,
           0,
           0};
  const bool planar = local.dim == 2;
  bool empty_box = false;
  for (int a = 0; a < (planar ? 2 : 3); ++a) empty_box = empty_box || !(box.lo[a] <= box.hi[a]);
  std::vector<std::int32_t> sent;  // the records' cells in the local tree, breadth first
  std::vector<CellRecord> records;
  std::vector<BodyRecord> bodies;
  if (local.cells() != 0 && !empty_box) {
    // The box as the walk's Box, widened by the margin of the comment above.
    const double big = std::max(
        {std::abs(local.root_x), std::abs(local.root_y), std::abs(local.root_z), local.root_half});
    const double margin = big * 0x1p-40;
    double c[3], e[3];
    for (int a = 0; a < 3; ++a) {
      const double w = planar && a == 2 ? 0.0 : margin;
      const double lo = box.lo[a] - w, hi = box.hi[a] + w;
      c[a] = 0.5 * (lo + hi);
      e[a] = 0.5 * (hi - lo);
    }
    const double theta2 = options.theta * options.theta;
    const double slack = local.root_half * 0x1p-40;  // the walk's (tree_walk.cpp)
    const double alpha_a = options.alpha * box.a_min;
    auto must_open = [&](std::size_t k) {
      const double hk = local.half[k];
      if (boxes_overlap(local.cx[k], local.cy[k], local.cz[k], hk, hk, planar ? 0.0 : hk, c[0],
                        c[1], c[2], e[0], e[1], e[2], slack)) {
        return true;
      }
      const double d2 = distance2_point_box(local.comx[k], local.comy[k], local.comz[k], c[0], c[1],
                                            c[2], e[0], e[1], e[2]);
      const double open = opening_value(local, k, mac);
      return mac == OpeningCriterion::Relative ? relative_must_open(open, alpha_a, d2, 4 * hk * hk)
                                               : bh_must_open(open, theta2, d2);
    };
    sent.push_back(0);
    for (std::size_t r = 0; r < sent.size(); ++r) {
      const auto k = static_cast<std::size_t>(sent[r]);
      CellRecord rec{local.comx[k],
                     local.comy[k],
                     local.comz[k],
                     local.mass[k],
                     local.cx[k],
                     local.cy[k],
                     local.cz[k],
                     local.half[k],
                     local.bmax[k],
                     Tree::kPrunedCell,
                     0,
                     0,
                     0};
      const std::uint32_t count = local.end[k] - local.begin[k];
      // A leaf of one body is sent with its body even when accepted: the receiver's walk
      // then takes it as the one-process walk does (a lone body is a pair, not a cell).
      if (local.is_leaf(k) && (count == 1 || must_open(k))) {
        rec.first_child = -1;
        rec.begin = static_cast<std::uint32_t>(bodies.size());
        for (std::uint32_t b = local.begin[k]; b < local.end[k]; ++b) {
          bodies.push_back({local.x[b], local.y[b], local.z[b], local.m[b]});
        }
        rec.end = static_cast<std::uint32_t>(bodies.size());
      } else if (!local.is_leaf(k) && must_open(k)) {
        rec.first_child = static_cast<std::int32_t>(sent.size());
        rec.child_count = local.child_count[k];
        const auto first = static_cast<std::size_t>(local.first_child[k]);
        for (std::size_t ch = first; ch < first + local.child_count[k]; ++ch) {
          sent.push_back(static_cast<std::int32_t>(ch));
        }
      }
      records.push_back(rec);
    }
  }
  h.cells = records.size();
  h.bodies = bodies.size();
  const std::size_t record_bytes = sizeof(CellRecord) + (quad ? sizeof(Quad) : 0);
  std::vector<char> out;
  out.reserve(sizeof(Header) + records.size() * record_bytes + bodies.size() * sizeof(BodyRecord));
  put(out, h);
  for (std::size_t r = 0; r < records.size(); ++r) {
    put(out, records[r]);
    if (quad) put(out, local.quad[static_cast<std::size_t>(sent[r])]);
  }
  for (const BodyRecord& b : bodies) put(out, b);
  return out;
}

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
        !(r.half > 0) || r.mass < 0 || r.bmax < 0) {
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
