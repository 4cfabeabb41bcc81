// The force walk: one interaction list per group of contiguous tree-ordered bodies,
// evaluated with the direct sum's SIMD kernel.
//
// Per group (a cell of <= max_group bodies, see make_groups): walk the tree from the
// root with the group-conservative opening test (opening_criterion.hpp: distance from a
// cell's centre of mass to the nearest point of the group's bounding box, and cells that
// overlap the group's box always opened), collecting accepted cells as pseudo-bodies
// (centre of mass, mass) and the bodies of opened leaves into per-thread aligned SoA
// arrays; then all group bodies against the whole list in the SIMD kernel (targets in
// the lanes, list entries broadcast). With --quadrupole the accepted cells go to a list
// of their own (centre of mass, mass, quadrupole: simd::CellSource), which a second SIMD
// kernel (direct_simd_cells.hpp) sweeps after the bodies' list, each cell's monopole and
// quadrupole from one 1/sqrt, adding into the same accelerations. Potentials, when asked
// for, come from the same kernels (one more add or two per interaction).
//
// Other sources (walk_forces with a sources tree: a rank's received essential trees,
// essential_tree.hpp): the same walk and kernels; no self term; pruned cells used whole.
//
// Determinism: a group's list order and its sums depend only on the tree, never on which
// thread runs it, so the forces are bitwise identical for any number of threads.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/omp_team.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "nbody/physics/multipole.hpp"
#include "nbody/physics/opening_criterion.hpp"
#include "tree/essential_tree.hpp"
#include "tree/tree.hpp"
#include "tree/tree_walk_setup.hpp"

namespace nbody::tree {
namespace {

using walk_detail::Scratch;
using walk_detail::WalkSetup;

/// A group's bounding box: centre and half extents.
struct Box {
  double x, y, z, hx, hy, hz;
};

Box bounding_box(const Tree& t, std::uint32_t gb, std::uint32_t ge) {
  double lx = t.x[gb], hx = lx, ly = t.y[gb], hy = ly, lz = t.z[gb], hz = lz;
  for (std::uint32_t k = gb + 1; k < ge; ++k) {
    lx = std::min(lx, t.x[k]);
    hx = std::max(hx, t.x[k]);
    ly = std::min(ly, t.y[k]);
    hy = std::max(hy, t.y[k]);
    lz = std::min(lz, t.z[k]);
    hz = std::max(hz, t.z[k]);
  }
  return {0.5 * (lx + hx), 0.5 * (ly + hy), 0.5 * (lz + hz),
          0.5 * (hx - lx), 0.5 * (hy - ly), 0.5 * (hz - lz)};
}

/// A group's interaction list: its length, where the group's own bodies start in it, and
/// the length of its cell list (Quad).
struct ListInfo {
  std::size_t length = 0, self_first = 0, cells = 0;
  std::size_t forced = 0;  // Foreign: pruned cells the group's test would have opened
};

/// Walks the tree for the group whose first body is gb and whose box is g: fills s.jx..
/// with the interaction list; with Quad, s.jx.. with the opened bodies (and accepted cells
/// of one body) only, and s.cells with the other accepted cells. The group's own bodies
/// form one run of the list, in order (every cell holding one of them overlaps
/// the group's box, so it is opened, and the depth-first walk visits them in tree order):
/// the kernel leaves each body's own term out of its potential by where that run starts,
/// which this finds when FindSelf (only then: one more value live in the walk's loop,
/// which has no register to spare, made the float tree ~1.5% slower).
/// Relative: the relative criterion, a cell opened when its M s^2 > alpha_a d^4 (alpha_a
/// = alpha |a_old| / G, the group's smallest); otherwise open >= theta^2 d^2 (geometric or
/// bmax, by what set_opening() stored). Flattened: with the Quad instances GCC stopped
/// inlining distance2_point_box into some of them (12% more instructions in the walk).
/// t: the sources. Foreign: not the group's tree; its pruned cells are used whole whatever
/// the test says (essential_tree.cpp: the sender's test was monotone), counted in `forced`.
template <bool FindSelf, bool Relative, bool Quad, bool Foreign, class Real>
[[gnu::flatten]] ListInfo collect_interactions(const Tree& t, const WalkSetup<Real>& w,
                                               std::uint32_t gb, Box g, double alpha_a,
                                               Scratch<Real>& s) {
  static_assert(!(FindSelf && Foreign), "no target is a source of another tree");
  // Copies in registers: the stores into the list below could alias the setup's doubles
  // for all the compiler knows, and would then make it reload them every time.
  const double sp = w.sp, sm = w.sm, theta2 = w.theta2, slack = w.slack;
  const bool planar = w.planar;
  ListInfo info;
  std::size_t list = 0;  // entries so far
  auto reserve = [&s](std::size_t need) {
    if (need <= s.jx.size()) return;
    for (auto* v : {&s.jx, &s.jy, &s.jz, &s.jm}) v->resize(std::max(need, 2 * v->size()));
  };
  auto append = [&](double x, double y, double z, double m) {
    s.jx[list] = Real((x - g.x) * sp);
    s.jy[list] = Real((y - g.y) * sp);
    s.jz[list] = Real((z - g.z) * sp);
    s.jm[list] = Real(m * sm);
    ++list;
  };
  std::size_t cells = 0;  // Quad: the cell list's entries so far
  const simd::CellSource<Real>* const moments = w.moments.data();
  // Stackless depth-first walk over the packed records: a cell that is accepted, or
  // an opened leaf, continues at `next`; an opened inner cell at its first child.
  const Tree::WalkNode* const nodes = t.walk_nodes.data();
  for (std::int32_t c = 0; c >= 0;) {
    const Tree::WalkNode& nd = nodes[c];
    const double h = nd.half;
    bool open = boxes_overlap(nd.cx, nd.cy, nd.cz, h, h, planar ? 0.0 : h, g.x, g.y, g.z, g.hx,
                              g.hy, g.hz, slack);
    if (!open) {
      const double d2 =
          distance2_point_box(nd.comx, nd.comy, nd.comz, g.x, g.y, g.z, g.hx, g.hy, g.hz);
      if constexpr (Relative) {
        open = relative_must_open(nd.open, alpha_a, d2, 4 * h * h);
      } else {
        open = bh_must_open(nd.open, theta2, d2);
      }
    }
    if constexpr (Foreign) {
      if (open && nd.first_child == Tree::kPrunedCell) {
        ++info.forced;
        open = false;
      }
    }
    if (!open) {
      if constexpr (Quad) {
        // A lone body: its quadrupole is 0, the pair suffices. Not a cell whose moments are
        // more than its one body's here (a shared top cell, Tree::silent, or its whole).
        if (nd.end - nd.begin == 1 && nd.mass == t.m[nd.begin]) {
          reserve(list + 1);
          append(t.x[nd.begin], t.y[nd.begin], t.z[nd.begin], t.m[nd.begin]);
        } else {
          if (cells == s.cells.size()) s.cells.resize(std::max<std::size_t>(64, 2 * cells));
          simd::CellSource<Real>& e = s.cells[cells++];
          e = moments[c];
          e.x = Real((nd.comx - g.x) * sp);
          e.y = Real((nd.comy - g.y) * sp);
          e.z = Real((nd.comz - g.z) * sp);
        }
      } else {
        reserve(list + 1);
        append(nd.comx, nd.comy, nd.comz, nd.mass);
      }
      c = nd.next;
    } else if (nd.first_child < 0) {
      reserve(list + (nd.end - nd.begin));
      if constexpr (FindSelf) {
        if (nd.begin <= gb && gb < nd.end) info.self_first = list + (gb - nd.begin);
      }
      for (std::uint32_t k = nd.begin; k < nd.end; ++k) append(t.x[k], t.y[k], t.z[k], t.m[k]);
      c = nd.next;
    } else {
      c = nd.first_child;
    }
  }
  info.length = list;
  info.cells = cells;
  return info;
}

/// The group's bodies as the kernel's targets, scaled like the list, padded to the
/// kernel's step with copies at the group centre (their results are dropped); zeroed
/// outputs.
template <class Real>
std::size_t pack_targets(const Tree& t, const WalkSetup<Real>& w, std::uint32_t gb,
                         std::uint32_t ge, Box g, bool potential, Scratch<Real>& s) {
  const double sp = w.sp;
  const std::size_t count = ge - gb;
  const std::size_t padded = (count + simd::kStep - 1) / simd::kStep * simd::kStep;
  for (auto* v : {&s.tx, &s.ty, &s.tz, &s.ax, &s.ay, &s.az}) v->assign(padded, Real(0));
  if (potential) s.phi.assign(padded, Real(0));
  for (std::size_t k = 0; k < count; ++k) {
    s.tx[k] = Real((t.x[gb + k] - g.x) * sp);
    s.ty[k] = Real((t.y[gb + k] - g.y) * sp);
    s.tz[k] = Real((t.z[gb + k] - g.z) * sp);
  }
  return padded;
}

/// The kernels' results of the group, scaled back, into the tree-ordered outputs.
template <class Real>
void finish_group(const WalkSetup<Real>& w, std::uint32_t gb, std::uint32_t ge, bool potential,
                  const Scratch<Real>& s, WalkOutput& out) {
  const double back = w.back_acceleration, back_phi = w.back_potential;
  const bool planar = w.planar;
  for (std::size_t k = 0; k < ge - gb; ++k) {
    const std::size_t i = gb + k;
    out.ax[i] = double(s.ax[k]) * back;
    out.ay[i] = double(s.ay[k]) * back;
    out.az[i] = planar ? 0.0 : double(s.az[k]) * back;
    if (potential) out.phi[i] = double(s.phi[k]) * back_phi;
  }
}

/// collect_interactions for the setup's --quadrupole.
template <bool FindSelf, bool Relative, bool Foreign, class Real>
ListInfo collect_for(const Tree& t, const WalkSetup<Real>& w, std::uint32_t gb, Box g,
                     double alpha_a, Scratch<Real>& s) {
  return w.quad ? collect_interactions<FindSelf, Relative, true, Foreign>(t, w, gb, g, alpha_a, s)
                : collect_interactions<FindSelf, Relative, false, Foreign>(t, w, gb, g, alpha_a, s);
}

/// The interaction list of a group (first body gb, box g) from `sources`.
template <bool Foreign, bool Relative, class Real>
ListInfo collect_list(const Tree& sources, const WalkSetup<Real>& w, std::uint32_t gb, Box g,
                      double alpha_a, bool potential, Scratch<Real>& s) {
  if constexpr (Foreign) {
    ListInfo list = collect_for<false, Relative, true>(sources, w, gb, g, alpha_a, s);
    list.self_first = list.length;  // past the list: the kernel leaves no term out
    return list;
  } else {
    return potential ? collect_for<true, Relative, false>(sources, w, gb, g, alpha_a, s)
                     : collect_for<false, Relative, false>(sources, w, gb, g, alpha_a, s);
  }
}

/// One group of t's walk over `sources` (t unless Foreign), kernel, results; its interactions.
template <bool Foreign, class Real>
std::uint64_t walk_group(const Tree& t, const Tree& sources, const WalkSetup<Real>& w, Group group,
                         bool potential, bool count, Scratch<Real>& s, WalkOutput& out,
                         std::uint64_t& forced) {
  const Box g = group.box_end != 0 ? bounding_box(t, group.box_begin, group.box_end)
                                   : bounding_box(t, group.begin, group.end);
  ListInfo list;
  if (w.a_old) {  // the relative criterion: the group's smallest |a|
    double a_min = INFINITY;
    const std::uint32_t b = group.box_end != 0 ? group.box_begin : group.begin;
    const std::uint32_t e = group.box_end != 0 ? group.box_end : group.end;
    for (std::uint32_t k = b; k < e; ++k) a_min = std::min(a_min, w.a_old[k]);
    const double alpha_a = w.alpha * a_min;
    list = collect_list<Foreign, true>(sources, w, group.begin, g, alpha_a, potential, s);
  } else {
    list = collect_list<Foreign, false>(sources, w, group.begin, g, 0.0, potential, s);
  }
  forced += list.forced;
  const std::size_t padded = pack_targets(t, w, group.begin, group.end, g, potential, s);
  const simd::KernelArgs<Real> args{.x = s.jx.data(),
                                    .y = s.jy.data(),
                                    .z = s.jz.data(),
                                    .m = s.jm.data(),
                                    .n = list.length,
                                    .eps2 = w.eps2_scaled,
                                    .ax = s.ax.data(),
                                    .ay = s.ay.data(),
                                    .az = s.az.data(),
                                    .tx = s.tx.data(),
                                    .ty = s.ty.data(),
                                    .tz = s.tz.data(),
                                    .phi = potential ? s.phi.data() : nullptr,
                                    .self_first = list.self_first};
  w.kernel(args, 0, padded);
  if (list.cells != 0) {  // --quadrupole: the cells, added to the bodies' sums (same targets)
    const simd::CellArgs<Real> cells{s.cells.data(), list.cells, args.eps2, args.ax, args.ay,
                                     args.az,        args.tx,    args.ty,   args.tz, args.phi};
    w.cell_kernel(cells, 0, group.end - group.begin);  // rounded up to its own step
  }
  finish_group(w, group.begin, group.end, potential, s, out);
  if (count) {
    std::fill(out.interactions.begin() + group.begin, out.interactions.begin() + group.end,
              static_cast<std::uint32_t>(list.length + list.cells));
  }
  return std::uint64_t(group.counted != 0 ? group.counted : group.end - group.begin) *
         (list.length + list.cells);
}

/// walk_forces, both kinds: sources is targets (not Foreign) or another tree.
template <bool Foreign, class Real>
std::uint64_t walk_all(const Tree& targets, const std::vector<Group>& groups, const Tree& sources,
                       const WalkOptions& options, bool potential, WalkOutput& out) {
  const std::size_t n = targets.bodies();
  for (auto* v : {&out.ax, &out.ay, &out.az}) v->assign(n, 0.0);
  if (potential) out.phi.assign(n, 0.0);
  const bool count = options.count_interactions;
  if (count) out.interactions.assign(n, 0);
  out.forced_accepts = 0;
  if (n == 0 || sources.cells() == 0) return 0;
  const WalkSetup<Real> setup(sources, options);

  const auto ngroups = static_cast<std::ptrdiff_t>(groups.size());
  std::uint64_t interactions = 0, forced = 0;
  [[maybe_unused]] const int team = team_size(options.threads);
  // The scratch buffers grow as the walks need: a failed allocation is carried out of
  // the team (core/omp_team.hpp) and thrown here; the other threads skip their groups.
  RegionErrors errors;
#pragma omp parallel num_threads(team)
  {
    Scratch<Real> s;
#pragma omp for schedule(dynamic, 1) reduction(+ : interactions, forced)
    for (std::ptrdiff_t g = 0; g < ngroups; ++g) {
      if (errors.failed()) continue;
      std::uint64_t walked = 0, group_forced = 0;  // the reductions' variables stay out
      errors.run([&] {
        walked = walk_group<Foreign>(targets, sources, setup, groups[static_cast<std::size_t>(g)],
                                     potential, count, s, out, group_forced);
      });
      interactions += walked;
      forced += group_forced;
    }
  }
  errors.rethrow();
  out.forced_accepts = forced;
  return interactions;
}

}  // namespace

template <class Real>
std::uint64_t walk_forces(const Tree& t, const std::vector<Group>& groups,
                          const WalkOptions& options, bool potential, WalkOutput& out) {
  return walk_all<false, Real>(t, groups, t, options, potential, out);
}

template <class Real>
std::uint64_t walk_forces(const Tree& targets, const std::vector<Group>& groups,
                          const Tree& sources, const WalkOptions& options, bool potential,
                          WalkOutput& out) {
  check_sources(targets, sources, options);
  return walk_all<true, Real>(targets, groups, sources, options, potential, out);
}

template std::uint64_t walk_forces<float>(const Tree&, const std::vector<Group>&,
                                          const WalkOptions&, bool, WalkOutput&);
template std::uint64_t walk_forces<double>(const Tree&, const std::vector<Group>&,
                                           const WalkOptions&, bool, WalkOutput&);
template std::uint64_t walk_forces<float>(const Tree&, const std::vector<Group>&, const Tree&,
                                          const WalkOptions&, bool, WalkOutput&);
template std::uint64_t walk_forces<double>(const Tree&, const std::vector<Group>&, const Tree&,
                                           const WalkOptions&, bool, WalkOutput&);

}  // namespace nbody::tree
