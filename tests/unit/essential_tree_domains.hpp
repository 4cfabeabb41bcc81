#pragma once
// The tests' domain decomposition in one process (test_essential_tree*.cpp): the bodies cut
// into P Morton domains of the global cube, each domain's forces from its own tree plus the
// essential trees the others send it; and one tree of all the bodies, to compare with.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "nbody/error.hpp"
#include "nbody/force_error.hpp"
#include "nbody/initial_conditions.hpp"
#include "tree/essential_tree.hpp"
#include "tree/tree.hpp"

namespace nbody::tree::testing {

inline constexpr std::size_t kLeaf = 8, kGroup = 128;  // the CPU solver's (tree_solver.cpp)

struct Settings {
  int dim = 3;
  OpeningCriterion mac = OpeningCriterion::Geometric;
  bool quad = false;
  double theta = 0.5;
};

inline RootCube global_cube(const ParticleSystem& ps, int dim) {
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double p[3] = {ps.x[i], ps.y[i], dim == 2 ? 0.0 : ps.z[i]};
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], p[a]), hi[a] = std::max(hi[a], p[a]);
  }
  return root_cube_from_bounds(lo, hi);
}

/// A tree ready to walk: moments, the criterion's opening values, groups.
struct Walkable {
  Tree t;
  std::vector<Group> groups;
  std::vector<double> a_old;  // tree order
};

inline void prepare(Walkable& w, const Settings& s, OpeningCriterion effective,
                    const std::vector<double>& a_old_bodies, const std::vector<std::size_t>& ids) {
  compute_moments(w.t, s.quad);
  if (effective != OpeningCriterion::Geometric) set_opening(w.t, effective);
  make_groups(w.t, kGroup, w.groups);
  w.a_old.clear();
  for (std::size_t k = 0; k < w.t.bodies() && !a_old_bodies.empty(); ++k) {
    w.a_old.push_back(a_old_bodies[ids[w.t.order[k]]]);
  }
}

inline WalkOptions options_for(const Settings& s, const Walkable& w) {
  WalkOptions o;
  o.theta = s.theta;
  o.quadrupole = s.quad;
  o.mac = s.mac;
  o.alpha = 0.002;
  o.a_old = w.a_old.empty() ? nullptr : w.a_old.data();
  o.count_interactions = true;
  return o;
}

/// Forces (body order, per unit G) and potentials.
struct Forces {
  std::vector<double> ax, ay, az, phi;
  std::vector<std::uint64_t> interactions;
  std::uint64_t forced = 0, let_bytes = 0, let_cells = 0, let_bodies = 0;
  double let_seconds = 0, walk_seconds = 0;
  explicit Forces(std::size_t n) : ax(n), ay(n), az(n), phi(n), interactions(n) {}
};

inline void add(const Walkable& w, const WalkOutput& out, const std::vector<std::size_t>& ids,
                Forces& f) {
  for (std::size_t k = 0; k < w.t.bodies(); ++k) {
    const std::size_t i = ids[w.t.order[k]];
    f.ax[i] += out.ax[k];
    f.ay[i] += out.ay[k];
    f.az[i] += out.az[k];
    f.phi[i] += out.phi[k];
    f.interactions[i] += out.interactions[k];
  }
  f.forced += out.forced_accepts;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// One tree of all the bodies (its own bounding cube, as the solver builds it).
inline Forces one_tree(const ParticleSystem& ps, const Settings& s,
                       const std::vector<double>& a_old) {
  Walkable w;
  BuildScratch scratch;
  build_tree(ps, s.dim, kLeaf, 0, w.t, scratch);
  std::vector<std::size_t> ids(ps.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = i;
  const OpeningCriterion mac =
      s.mac == OpeningCriterion::Relative && a_old.empty() ? OpeningCriterion::Geometric : s.mac;
  prepare(w, s, mac, a_old, ids);
  WalkOutput out;
  walk_forces<float>(w.t, w.groups, options_for(s, w), true, out);
  Forces f(ps.size());
  add(w, out, ids, f);
  return f;
}

/// The domains: the bodies' Morton keys in the cube sorted, cut into P equal counts, each
/// cut rounded down to a boundary of the cells of `level` (every cell of that level or
/// deeper then lies in one domain). Returns each domain's body indices.
inline std::vector<std::vector<std::size_t>> domains(const ParticleSystem& ps, int dim,
                                                     const RootCube& cube, int parts, int level) {
  Tree t;
  reset_tree(t, 0, dim, kLeaf);
  t.root_x = cube.x, t.root_y = cube.y, t.root_z = cube.z, t.root_half = cube.half;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
  morton_keys(ps, dim, 1, t, keyed);
  std::sort(keyed.begin(), keyed.end());
  const int shift = dim * (key_bits_per_axis(dim) - level);
  std::vector<std::uint64_t> cuts{0};
  for (int p = 1; p < parts; ++p) {
    const std::uint64_t key = keyed[keyed.size() * std::size_t(p) / std::size_t(parts)].first;
    cuts.push_back(key >> shift << shift);
  }
  std::vector<std::vector<std::size_t>> d(static_cast<std::size_t>(parts));
  for (const auto& [key, i] : keyed) {
    const auto p = std::upper_bound(cuts.begin(), cuts.end(), key) - cuts.begin() - 1;
    d[static_cast<std::size_t>(p)].push_back(i);
  }
  return d;
}

/// The domain decomposition's forces: every domain's local tree in the global cube, its
/// own walk plus the walks of the essential trees of every other domain (split: as
/// receiver_boxes').
inline Forces decomposed(const ParticleSystem& ps, const Settings& s,
                         const std::vector<double>& a_old, int parts, int level,
                         std::size_t max_boxes = SIZE_MAX, int split = 0) {
  const RootCube cube = global_cube(ps, s.dim);
  const auto dom = domains(ps, s.dim, cube, parts, level);
  std::vector<Walkable> local(dom.size());
  std::vector<std::vector<ReceiverBox>> boxes;
  BuildScratch scratch;
  for (std::size_t p = 0; p < dom.size(); ++p) {
    ParticleSystem sub;
    sub.resize(dom[p].size());
    for (std::size_t k = 0; k < dom[p].size(); ++k) {
      const std::size_t i = dom[p][k];
      sub.x[k] = ps.x[i], sub.y[k] = ps.y[i], sub.z[k] = ps.z[i], sub.mass[k] = ps.mass[i];
    }
    build_tree(sub, s.dim, kLeaf, 0, cube, local[p].t, scratch);
    const bool relative = s.mac == OpeningCriterion::Relative && !a_old.empty();
    const OpeningCriterion mac =
        s.mac == OpeningCriterion::Relative && !relative ? OpeningCriterion::Geometric : s.mac;
    prepare(local[p], s, mac, a_old, dom[p]);
    boxes.push_back(receiver_boxes(local[p].t, local[p].groups,
                                   relative ? local[p].a_old.data() : nullptr, max_boxes, split));
    // What travels: the boxes as bytes.
    boxes.back() = read_receiver_boxes(receiver_boxes_bytes(boxes.back()));
  }
  Forces f(ps.size());
  for (std::size_t p = 0; p < dom.size(); ++p) {
    const WalkOptions o = options_for(s, local[p]);
    WalkOutput out;
    auto t0 = std::chrono::steady_clock::now();
    walk_forces<float>(local[p].t, local[p].groups, o, true, out);
    f.walk_seconds += seconds_since(t0);
    add(local[p], out, dom[p], f);
    for (std::size_t q = 0; q < dom.size(); ++q) {
      if (q == p) continue;
      t0 = std::chrono::steady_clock::now();
      const std::vector<char> bytes =
          essential_tree(local[q].t, boxes[p], options_for(s, local[q]));
      const Tree let = read_essential_tree(bytes);
      f.let_seconds += seconds_since(t0);
      f.let_bytes += bytes.size();
      f.let_cells += let.cells();
      f.let_bodies += let.bodies();
      t0 = std::chrono::steady_clock::now();
      walk_forces<float>(local[p].t, local[p].groups, let, o, true, out);
      f.walk_seconds += seconds_since(t0);
      add(local[p], out, dom[p], f);
    }
  }
  return f;
}

inline ParticleSystem plummer(std::size_t n, int dim) {
  ModelOptions model;
  model.n = n;
  model.seed = 11;
  model.dim = dim;
  return generate(model);
}

inline ParticleSystem with(const ParticleSystem& ps, const Forces& f) {
  ParticleSystem out = ps;
  out.ax = f.ax, out.ay = f.ay, out.az = f.az;
  return out;
}

/// |a|/G of a first (geometric) evaluation: the relative criterion's a_old.
inline std::vector<double> old_accelerations(const ParticleSystem& ps, const Settings& s) {
  Settings first = s;
  first.mac = OpeningCriterion::Geometric;
  const Forces f = one_tree(ps, first, {});
  std::vector<double> a(ps.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::hypot(f.ax[i], f.ay[i], f.az[i]);
  return a;
}

inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
  return v[v.size() / 2];
}

/// Median over `idx` of |a - b| / |b|.
inline double median_difference(const Forces& a, const Forces& b,
                                const std::vector<std::size_t>& idx) {
  std::vector<double> d;
  for (const std::size_t i : idx) {
    const double n = std::hypot(b.ax[i], b.ay[i], b.az[i]);
    d.push_back(std::hypot(a.ax[i] - b.ax[i], a.ay[i] - b.ay[i], a.az[i] - b.az[i]) / n);
  }
  return median(d);
}

inline double median_potential_difference(const Forces& a, const Forces& b) {
  std::vector<double> d;
  for (std::size_t i = 0; i < a.phi.size(); ++i)
    d.push_back(std::abs(a.phi[i] - b.phi[i]) / std::abs(b.phi[i]));
  return median(d);
}

}  // namespace nbody::tree::testing
