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
#include "tree/essential_tree_format.hpp"

namespace nbody::tree {
namespace {

using namespace let;

/// The box of the tree-ordered bodies [b, e) of t, with their smallest a_old.
ReceiverBox box_of(const Tree& t, std::uint32_t b, std::uint32_t e, const double* a_old) {
  ReceiverBox box;
  box.dim = t.dim;
  for (std::uint32_t k = b; k < e; ++k) {
    const double p[3] = {t.x[k], t.y[k], t.z[k]};
    for (int a = 0; a < 3; ++a) {
      box.lo[a] = std::min(box.lo[a], p[a]);
      box.hi[a] = std::max(box.hi[a], p[a]);
    }
  }
  if (a_old) {
    box.a_min = INFINITY;
    for (std::uint32_t k = b; k < e; ++k) box.a_min = std::min(box.a_min, a_old[k]);
  }
  return box;
}

/// A box as the walk's test reads it: centre, half extents (widened by the margin of the
/// comment above), alpha |a_old| / G.
struct TestBox {
  double c[3], e[3], alpha_a;
};

/// The box around two boxes with the smaller alpha |a_min|: it opens every cell either opens
/// (a box inside it is no nearer, and a smaller |a_min| opens no less).
TestBox around(const TestBox& a, const TestBox& b) {
  TestBox u{};
  for (int k = 0; k < 3; ++k) {
    const double lo = std::min(a.c[k] - a.e[k], b.c[k] - b.e[k]);
    const double hi = std::max(a.c[k] + a.e[k], b.c[k] + b.e[k]);
    u.c[k] = 0.5 * (lo + hi), u.e[k] = 0.5 * (hi - lo);
  }
  u.alpha_a = std::min(a.alpha_a, b.alpha_a);
  return u;
}

/// A receiver's boxes as a binary tree of the boxes around them, over their order (runs of
/// consecutive groups, near each other): node 1 the root, node i's children 2i and 2i + 1,
/// the boxes the leaves width .. width + count - 1; padding nodes are not real.
struct BoxTree {
  std::size_t width = 0;
  std::vector<TestBox> node;
  std::vector<char> real;
};

BoxTree box_tree(const std::vector<TestBox>& tests) {
  BoxTree t;
  t.width = 1;
  while (t.width < tests.size()) t.width *= 2;
  t.node.resize(2 * t.width);
  t.real.assign(2 * t.width, 0);
  for (std::size_t i = 0; i < tests.size(); ++i)
    t.node[t.width + i] = tests[i], t.real[t.width + i] = 1;
  for (std::size_t i = t.width - 1; i >= 1; --i) {
    const bool l = t.real[2 * i] != 0, r = t.real[2 * i + 1] != 0;
    if (l || r) {
      t.node[i] = l && r ? around(t.node[2 * i], t.node[2 * i + 1]) : t.node[l ? 2 * i : 2 * i + 1];
      t.real[i] = 1;
    }
  }
  return t;
}

/// receiver_boxes' split 2: the box of the tree-order range [b, e), or, where the smallest
/// cell holding it holds or borders the root's centre of mass (edge >= distance) and the range
/// spans several of its children, one box for each child's part.
void add_split_boxes(const Tree& t, std::uint32_t b, std::uint32_t e, const double* a_old,
                     std::vector<ReceiverBox>& boxes) {
  std::size_t c = 0;
  while (!t.is_leaf(c)) {
    const auto first = static_cast<std::size_t>(t.first_child[c]);
    std::size_t inner = c;
    for (std::size_t ch = first; ch < first + t.child_count[c]; ++ch) {
      if (t.begin[ch] <= b && e <= t.end[ch]) inner = ch;
    }
    if (inner == c) break;
    c = inner;
  }
  if (t.is_leaf(c) || !at_centre_of_mass(t.half[c], t.cx[c] - t.comx[0], t.cy[c] - t.comy[0],
                                         t.cz[c] - t.comz[0])) {
    boxes.push_back(box_of(t, b, e, a_old));
    return;
  }
  const auto first = static_cast<std::size_t>(t.first_child[c]);
  for (std::size_t ch = first; ch < first + t.child_count[c]; ++ch) {
    const std::uint32_t lo = std::max(b, t.begin[ch]), hi = std::min(e, t.end[ch]);
    if (lo < hi) boxes.push_back(box_of(t, lo, hi, a_old));
  }
}

}  // namespace

ReceiverBox receiver_box(const Tree& t, const double* a_old) {
  return box_of(t, 0, static_cast<std::uint32_t>(t.bodies()), a_old);
}

std::vector<ReceiverBox> receiver_boxes(const Tree& t, std::vector<Group> groups,
                                        const double* a_old, std::size_t max_boxes, int split) {
  std::vector<ReceiverBox> boxes;
  if (t.bodies() == 0) return boxes;
  // A group's box range (Group::box_begin) covers its own; runs of whole groups in tree
  // order, cut where a run reaches its share of the bodies.
  for (Group& g : groups) {
    if (g.box_end != 0) g.begin = g.box_begin, g.end = g.box_end;
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& x, const Group& y) { return x.begin < y.begin; });
  const std::size_t share =
      std::max<std::size_t>(1, (t.bodies() + std::max<std::size_t>(max_boxes, 1) - 1) /
                                   std::max<std::size_t>(max_boxes, 1));
  std::size_t g = 0;
  while (g < groups.size()) {
    const std::uint32_t b = groups[g].begin;
    std::uint32_t e = groups[g].end;
    for (++g; g < groups.size() && groups[g].end - b <= share; ++g) e = std::max(e, groups[g].end);
    if (split == 2) {
      add_split_boxes(t, b, e, a_old, boxes);
    } else {
      boxes.push_back(box_of(t, b, e, a_old));
    }
  }
  return boxes;
}

std::vector<char> receiver_boxes_bytes(const std::vector<ReceiverBox>& boxes) {
  std::vector<char> out;
  for (const ReceiverBox& box : boxes) put(out, box);
  return out;
}

std::vector<ReceiverBox> read_receiver_boxes(const std::vector<char>& bytes) {
  if (bytes.size() % sizeof(ReceiverBox) != 0) {
    throw Error(fmt::format("read_receiver_boxes: {} bytes, not a multiple of {}", bytes.size(),
                            sizeof(ReceiverBox)));
  }
  std::vector<ReceiverBox> boxes;
  for (std::size_t at = 0; at < bytes.size(); at += sizeof(ReceiverBox)) {
    const auto box = get<ReceiverBox>(bytes, at);
    auto nan = [](const double* v) {
      return std::any_of(v, v + 3, [](double x) { return std::isnan(x); });
    };
    if ((box.dim != 2 && box.dim != 3) || std::isnan(box.a_min) || nan(box.lo) || nan(box.hi) ||
        (!boxes.empty() && (box.dim != boxes[0].dim || (box.a_min < 0) != (boxes[0].a_min < 0)))) {
      throw Error(fmt::format("read_receiver_boxes: box {} is malformed", boxes.size()));
    }
    boxes.push_back(box);
  }
  return boxes;
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
  return essential_tree(local, std::vector<ReceiverBox>{box}, options);
}

std::vector<char> essential_tree(const Tree& local, const std::vector<ReceiverBox>& boxes,
                                 const WalkOptions& options) {
  for (const ReceiverBox& box : boxes) {
    if (box.dim != local.dim || (box.a_min < 0) != (boxes[0].a_min < 0)) {
      throw Error(
          fmt::format("essential_tree: a receiver box of dimension {} for a tree of {}, "
                      "or boxes with and without old accelerations",
                      box.dim, local.dim));
    }
  }
  const bool quad = options.quadrupole;
  if (quad && local.cells() != 0 && local.quad.empty()) {
    throw Error("essential_tree: quadrupoles asked for, the tree has none");
  }
  const OpeningCriterion mac = boxes.empty() ? options.mac : effective_criterion(options, boxes[0]);
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
  // The boxes as the walk's test reads them, widened by the margin of the comment above.
  const double big = std::max(
      {std::abs(local.root_x), std::abs(local.root_y), std::abs(local.root_z), local.root_half});
  const double margin = big * 0x1p-40;
  std::vector<TestBox> tests;
  for (const ReceiverBox& box : boxes) {
    TestBox tb{};
    bool empty = false;
    for (int a = 0; a < 3; ++a) {
      const double w = planar && a == 2 ? 0.0 : margin;
      const double lo = planar && a == 2 ? 0.0 : box.lo[a] - w;
      const double hi = planar && a == 2 ? 0.0 : box.hi[a] + w;
      empty = empty || !(lo <= hi);
      tb.c[a] = 0.5 * (lo + hi);
      tb.e[a] = 0.5 * (hi - lo);
    }
    tb.alpha_a = options.alpha * box.a_min;
    if (!empty) tests.push_back(tb);
  }
  const double theta2 = options.theta * options.theta;
  const double slack = local.root_half * 0x1p-40;  // the walk's (tree_walk.cpp)
  auto opens = [&](std::size_t k, const TestBox& b) {
    const double hk = local.half[k];
    if (boxes_overlap(local.cx[k], local.cy[k], local.cz[k], hk, hk, planar ? 0.0 : hk, b.c[0],
                      b.c[1], b.c[2], b.e[0], b.e[1], b.e[2], slack)) {
      return true;
    }
    const double d2 = distance2_point_box(local.comx[k], local.comy[k], local.comz[k], b.c[0],
                                          b.c[1], b.c[2], b.e[0], b.e[1], b.e[2]);
    const double open = opening_value(local, k, mac);
    return mac == OpeningCriterion::Relative ? relative_must_open(open, b.alpha_a, d2, 4 * hk * hk)
                                             : bh_must_open(open, theta2, d2);
  };
  // Breadth first. A cell is reached only by the groups whose walks opened its parent,
  // which lie in boxes that opened the parent (monotonicity): so a cell is tested against
  // those boxes alone, `pool[from[r]..to[r])`, and opened when one of them opens it.
  std::vector<std::int32_t> sent;  // the records' cells in the local tree
  std::vector<std::uint32_t> pool, from, to, stack;
  const BoxTree boxes_tree = box_tree(tests);
  std::vector<CellRecord> records;
  std::vector<BodyRecord> bodies;
  if (local.cells() != 0 && !tests.empty()) {
    pool.push_back(1);  // the root of the boxes' tree
    sent.push_back(0);
    from.push_back(0);
    to.push_back(1);
  }
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
                   local.silent.empty() || local.silent[k] == 0 ? std::uint16_t(0) : kSilentCell,
                   0,
                   0};
    // The parent's openers are nodes of the boxes' tree. A node that does not open the cell
    // has no box under it that does (its box is around theirs); one that does is opened
    // down to a box that does, which decides that the cell is opened; after that the nodes
    // that open it are kept whole for the children, so a cell costs the tests of the nodes
    // near it, not of every box.
    const auto first_opener = static_cast<std::uint32_t>(pool.size());
    bool opened = false;
    stack.assign(pool.begin() + from[r], pool.begin() + to[r]);
    while (!stack.empty()) {
      const std::uint32_t n = stack.back();
      stack.pop_back();
      if (boxes_tree.real[n] == 0 || !opens(k, boxes_tree.node[n])) continue;
      if (opened || n >= boxes_tree.width) {
        opened = opened || n >= boxes_tree.width;
        pool.push_back(n);
        continue;
      }
      stack.push_back(2 * n + 1);
      stack.push_back(2 * n);
    }
    const auto openers_end = static_cast<std::uint32_t>(pool.size());
    const std::uint32_t count = local.end[k] - local.begin[k];
    // A leaf of one body is sent with its body even when accepted: the receiver's walk
    // then takes it as the one-process walk does (a lone body is a pair, not a cell).
    if (local.is_leaf(k) && (count == 1 || opened)) {
      rec.first_child = -1;
      rec.begin = static_cast<std::uint32_t>(bodies.size());
      for (std::uint32_t b = local.begin[k]; b < local.end[k]; ++b) {
        bodies.push_back({local.x[b], local.y[b], local.z[b], local.m[b]});
      }
      rec.end = static_cast<std::uint32_t>(bodies.size());
    } else if (!local.is_leaf(k) && opened) {
      rec.first_child = static_cast<std::int32_t>(sent.size());
      rec.child_count = std::uint16_t(local.child_count[k]);
      const auto first = static_cast<std::size_t>(local.first_child[k]);
      for (std::size_t ch = first; ch < first + local.child_count[k]; ++ch) {
        sent.push_back(static_cast<std::int32_t>(ch));
        from.push_back(first_opener);
        to.push_back(openers_end);
      }
    }
    records.push_back(rec);
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

}  // namespace nbody::tree
