// The force walk: one interaction list per group of contiguous tree-ordered bodies,
// evaluated with the direct sum's SIMD kernel.
//
// Per group (a cell of <= max_group bodies, see make_groups): walk the tree from the
// root with the group-conservative opening test (opening_criterion.hpp: distance from a
// cell's centre of mass to the nearest point of the group's bounding box, and cells that
// overlap the group's box always opened), collecting accepted cells as pseudo-bodies
// (centre of mass, mass) and the bodies of opened leaves into per-thread aligned SoA
// arrays; then all group bodies against the whole list in the SIMD kernel (targets in
// the lanes, list entries broadcast), and for --quadrupole a second, scalar double loop
// over the accepted cells adds the quadrupole terms (multipole.hpp).
//
// Why groups: the walk itself (pointer-free but branchy) costs about as much per visited
// cell as ~20 kernel interactions, so sharing one walk among ~30-60 bodies makes it
// negligible, and the kernel runs on long lists at full vector speed. The price is a
// longer list per body (the group test opens more): see the measurements in
// tree_solver.cpp. Measured split at N = 1e5 (perf): kernel 52%, walk + list filling 40%.
//
// Determinism: a group's list order and its sums depend only on the tree, never on which
// thread runs it, so the forces are bitwise identical for any number of threads.
#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "gravity/direct_simd_kernels.hpp"
#include "nbody/physics/multipole.hpp"
#include "nbody/physics/opening_criterion.hpp"
#include "tree/tree.hpp"

namespace nbody::tree {
namespace {

template <class Real>
using KernelFn = void (*)(const simd::KernelArgs<Real>&, std::size_t, std::size_t);

template <class Real>
KernelFn<Real> best_kernel() {
#if defined(NBODY_HAVE_AVX2_KERNEL)
  if (simd::best_isa() == simd::Isa::Avx2) return &simd::avx2::accelerations;
#endif
  return &simd::baseline::accelerations;
}

/// 2^-e with 2^-e * v in [0.5, 1) (1 for v == 0 or non-finite), clamped like the direct
/// sum's scaling so every factor stays a normal double.
double power_of_two_scale(double v, int limit) {
  if (!(v > 0) || !std::isfinite(v)) return 1.0;
  int e = 0;
  (void)std::frexp(v, &e);
  return std::ldexp(1.0, -std::clamp(e, -limit, limit));
}

/// One thread's scratch: the interaction list and the group's targets (SoA, aligned).
template <class Real>
struct Scratch {
  AlignedVector<Real> jx, jy, jz, jm;
  AlignedVector<Real> tx, ty, tz, ax, ay, az;
  std::vector<std::int32_t> quad_cells;
};

}  // namespace

void make_groups(const Tree& t, std::size_t max_group, std::vector<Group>& groups) {
  groups.clear();
  if (t.cells() == 0) return;
  max_group = std::max<std::size_t>(max_group, 1);
  auto emit_chunks = [&](std::uint32_t b, std::uint32_t e) {
    // A leaf at maximum depth may hold more than max_group bodies: cut it in chunks.
    for (std::uint32_t s = b; s < e; s += static_cast<std::uint32_t>(max_group)) {
      groups.push_back({s, static_cast<std::uint32_t>(std::min<std::size_t>(e, s + max_group))});
    }
  };
  std::vector<std::int32_t> stack{0};
  while (!stack.empty()) {
    const auto c = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    if (t.end[c] - t.begin[c] <= max_group || t.is_leaf(c)) {
      emit_chunks(t.begin[c], t.end[c]);
      continue;
    }
    // Consecutive small children are merged while the run fits: siblings are adjacent in
    // tree order and share the parent's box. Without merging the octree's groups held 19
    // bodies on average (Plummer, max 64) and the kernel, padded to 32 targets, did
    // 1.9x the useful work.
    std::uint32_t run_b = 0, run_e = 0;
    const auto first = static_cast<std::size_t>(t.first_child[c]);
    for (std::size_t ch = first; ch < first + t.child_count[c]; ++ch) {
      const std::uint32_t count = t.end[ch] - t.begin[ch];
      if (count > max_group) {
        stack.push_back(static_cast<std::int32_t>(ch));
        continue;
      }
      if (run_e > run_b && run_e == t.begin[ch] && run_e - run_b + count <= max_group) {
        run_e = t.end[ch];
        continue;
      }
      if (run_e > run_b) emit_chunks(run_b, run_e);
      run_b = t.begin[ch];
      run_e = t.end[ch];
    }
    if (run_e > run_b) emit_chunks(run_b, run_e);
  }
}

template <class Real>
std::uint64_t walk_forces(const Tree& t, const std::vector<Group>& groups,
                          const WalkOptions& options, std::vector<double>& ax,
                          std::vector<double>& ay, std::vector<double>& az) {
  const std::size_t n = t.bodies();
  for (auto* v : {&ax, &ay, &az}) v->assign(n, 0.0);
  if (n == 0) return 0;

  // The kernel works on scaled data, as the direct sum's (direct_simd.cpp): positions
  // relative to the group's centre times 2^-p (|r| <= ~4), masses times 2^-q, so float
  // never overflows and the double kernel's float rsqrt seed stays in range whatever the
  // units; powers of two scale exactly. Accelerations scale back by 2^(q-2p).
  const double sp = power_of_two_scale(t.root_half, 400);
  const double sm = power_of_two_scale(t.mass[0], 200);
  const double back = sp * sp / sm;
  const Real eps_scaled = Real(options.softening * sp);
  const double eps2 = options.softening * options.softening;
  const double theta2 = options.theta * options.theta;
  const double slack = t.root_half * 0x1p-40;  // a body on a cell face counts as inside
  const bool quad = options.quadrupole && !t.quad.empty();
  const bool planar = t.dim == 2;
  const KernelFn<Real> kernel = best_kernel<Real>();

  const auto ngroups = static_cast<std::ptrdiff_t>(groups.size());
  std::uint64_t interactions = 0;
#if defined(_OPENMP)
  const int team = options.threads > 0 ? options.threads : omp_get_max_threads();
#endif
#pragma omp parallel num_threads(team)
  {
    Scratch<Real> s;
#pragma omp for schedule(dynamic, 1) reduction(+ : interactions)
    for (std::ptrdiff_t g = 0; g < ngroups; ++g) {
      const std::uint32_t gb = groups[static_cast<std::size_t>(g)].begin;
      const std::uint32_t ge = groups[static_cast<std::size_t>(g)].end;
      // The group's bounding box.
      double lx = t.x[gb], hx = lx, ly = t.y[gb], hy = ly, lz = t.z[gb], hz = lz;
      for (std::uint32_t k = gb + 1; k < ge; ++k) {
        lx = std::min(lx, t.x[k]);
        hx = std::max(hx, t.x[k]);
        ly = std::min(ly, t.y[k]);
        hy = std::max(hy, t.y[k]);
        lz = std::min(lz, t.z[k]);
        hz = std::max(hz, t.z[k]);
      }
      const double gx = 0.5 * (lx + hx), gy = 0.5 * (ly + hy), gz = 0.5 * (lz + hz);
      const double ghx = 0.5 * (hx - lx), ghy = 0.5 * (hy - ly), ghz = 0.5 * (hz - lz);

      s.quad_cells.clear();
      std::size_t list = 0;  // entries in the interaction list
      auto reserve = [&s](std::size_t need) {
        if (need <= s.jx.size()) return;
        for (auto* v : {&s.jx, &s.jy, &s.jz, &s.jm}) v->resize(std::max(need, 2 * v->size()));
      };
      // Stackless depth-first walk over the packed records: a cell that is accepted, or
      // an opened leaf, continues at `next`; an opened inner cell at its first child.
      const Tree::WalkNode* const nodes = t.walk_nodes.data();
      for (std::int32_t c = 0; c >= 0;) {
        const Tree::WalkNode& nd = nodes[c];
        const double h = nd.half;
        const double cell_size = 2 * h;
        const bool open =
            boxes_overlap(nd.cx, nd.cy, nd.cz, h, h, planar ? 0.0 : h, gx, gy, gz, ghx, ghy, ghz,
                          slack) ||
            bh_must_open(cell_size * cell_size, theta2,
                         distance2_point_box(nd.comx, nd.comy, nd.comz, gx, gy, gz, ghx, ghy, ghz));
        if (!open) {
          reserve(list + 1);
          s.jx[list] = Real((nd.comx - gx) * sp);
          s.jy[list] = Real((nd.comy - gy) * sp);
          s.jz[list] = Real((nd.comz - gz) * sp);
          s.jm[list] = Real(nd.mass * sm);
          ++list;
          if (quad) s.quad_cells.push_back(c);
          c = nd.next;
        } else if (nd.first_child < 0) {
          reserve(list + (nd.end - nd.begin));
          for (std::uint32_t k = nd.begin; k < nd.end; ++k, ++list) {
            s.jx[list] = Real((t.x[k] - gx) * sp);
            s.jy[list] = Real((t.y[k] - gy) * sp);
            s.jz[list] = Real((t.z[k] - gz) * sp);
            s.jm[list] = Real(t.m[k] * sm);
          }
          c = nd.next;
        } else {
          c = nd.first_child;
        }
      }

      // Targets, padded to the kernel's step with copies at the group centre (their
      // results are dropped).
      const std::size_t count = ge - gb;
      const std::size_t padded = (count + simd::kStep - 1) / simd::kStep * simd::kStep;
      for (auto* v : {&s.tx, &s.ty, &s.tz, &s.ax, &s.ay, &s.az}) v->assign(padded, Real(0));
      for (std::size_t k = 0; k < count; ++k) {
        s.tx[k] = Real((t.x[gb + k] - gx) * sp);
        s.ty[k] = Real((t.y[gb + k] - gy) * sp);
        s.tz[k] = Real((t.z[gb + k] - gz) * sp);
      }
      const simd::KernelArgs<Real> args{
          s.jx.data(), s.jy.data(), s.jz.data(), s.jm.data(), list,        eps_scaled * eps_scaled,
          s.ax.data(), s.ay.data(), s.az.data(), s.tx.data(), s.ty.data(), s.tz.data()};
      kernel(args, 0, padded);
      interactions += std::uint64_t(count) * list;

      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t i = gb + k;
        double qx = 0, qy = 0, qz = 0;
        // Quadrupole terms in double, unscaled (a short list: accepted cells only).
        for (const std::int32_t c : s.quad_cells) {
          const auto u = static_cast<std::size_t>(c);
          accumulate_quadrupole_acceleration<double>(t.comx[u] - t.x[i], t.comy[u] - t.y[i],
                                                     t.comz[u] - t.z[i], t.quad[u], eps2, qx, qy,
                                                     qz);
        }
        ax[i] = double(s.ax[k]) * back + qx;
        ay[i] = double(s.ay[k]) * back + qy;
        az[i] = planar ? 0.0 : double(s.az[k]) * back + qz;
      }
    }
  }
  return interactions;
}

template std::uint64_t walk_forces<float>(const Tree&, const std::vector<Group>&,
                                          const WalkOptions&, std::vector<double>&,
                                          std::vector<double>&, std::vector<double>&);
template std::uint64_t walk_forces<double>(const Tree&, const std::vector<Group>&,
                                           const WalkOptions&, std::vector<double>&,
                                           std::vector<double>&, std::vector<double>&);

}  // namespace nbody::tree
