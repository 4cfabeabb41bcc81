#pragma once
// What one CPU tree walk (tree_walk.cpp) shares between its groups, and each thread's
// scratch: kept apart from the walk itself, which includes this header alone.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/aligned_vector.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "nbody/physics/multipole.hpp"
#include "tree/tree.hpp"

namespace nbody::tree::walk_detail {

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
inline double power_of_two_scale(double v, int limit) {
  if (!(v > 0) || !std::isfinite(v)) return 1.0;
  int e = 0;
  (void)std::frexp(v, &e);
  return std::ldexp(1.0, -std::clamp(e, -limit, limit));
}

/// One thread's scratch: the interaction list, with --quadrupole the accepted cells' list
/// (centre of mass, mass, quadrupole), and the group's targets (SoA, aligned).
template <class Real>
struct Scratch {
  AlignedVector<Real> jx, jy, jz, jm;
  AlignedVector<simd::CellSource<Real>> cells;
  AlignedVector<Real> tx, ty, tz, ax, ay, az, phi;
};

/// What one walk shares between its groups: the scaling, the opening test, the kernel.
/// The kernel works on scaled data, as the direct sum's (direct_simd.cpp): positions
/// relative to the group's centre times 2^-p (|r| <= ~4), masses times 2^-q, so float
/// never overflows and the double kernel's float rsqrt seed stays in range whatever the
/// units; powers of two scale exactly. Accelerations scale back by 2^(q-2p) (m/r^2),
/// potentials by 2^(q-p) (m/r). Quadrupoles scale by 2^(-q-2p) (m r^2), so theirs scale
/// back by the same factors (Q/r^4, Q/r^3); with --quadrupole every cell's scaled mass and
/// quadrupole are converted once per walk (`moments`), which the cell list copies.
template <class Real>
struct WalkSetup {
  double sp, sm, back_acceleration, back_potential;
  Real eps2_scaled;
  double theta2, slack;
  double alpha;         // relative criterion (a_old set)
  const double* a_old;  // |a| / G of the last evaluation, tree order; null: theta
  bool quad, planar;
  KernelFn<Real> kernel;
  simd::CellKernel<Real> cell_kernel;

  WalkSetup(const Tree& t, const WalkOptions& options)
      : sp(power_of_two_scale(t.root_half, 400)),
        sm(power_of_two_scale(t.mass[0], 200)),
        back_acceleration(sp * sp / sm),
        back_potential(sp / sm),
        eps2_scaled(Real(options.softening * sp) * Real(options.softening * sp)),
        theta2(options.theta * options.theta),
        slack(t.root_half * 0x1p-40),  // a body on a cell face counts as inside
        alpha(options.alpha),
        a_old(options.mac == OpeningCriterion::Relative ? options.a_old : nullptr),
        quad(options.quadrupole && !t.quad.empty()),
        planar(t.dim == 2),
        kernel(best_kernel<Real>()),
        cell_kernel(simd::cell_kernel<Real>(simd::best_isa())) {
    if (!quad) return;
    const double sq = sm * sp * sp;
    moments.resize(t.quad.size());
    for (std::size_t c = 0; c < moments.size(); ++c) {
      const Quadrupole<double>& q = t.quad[c];
      auto r = [sq](double v) { return Real(v * sq); };
      if (!t.silent.empty() && t.silent[c] != 0) {
        moments[c] = {};  // another rank's copy of a shared cell adds it (Tree::silent)
        continue;
      }
      const Real m = Real(t.mass[c] * sm);
      moments[c] = {0, 0, 0, m, r(q.xx), r(q.yy), r(q.zz), r(q.xy), r(q.xz), r(q.yz), r(q.tr)};
    }
  }
  std::vector<simd::CellSource<Real>> moments;  // quad: per cell, scaled (x, y, z unset)
};

}  // namespace nbody::tree::walk_detail
