// The CPU tree's SIMD quadrupole (src/tree/tree_walk.cpp with direct_simd_cells.hpp)
// against a float64 scalar reference of the same terms: the cell kernel of every ISA on
// random cells, and the whole walk (3D and 2D, accelerations and potentials) against the
// walk written plainly from the same tree. The quadrupole's accuracy against the direct sum
// is in test_tree.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "gravity/direct_simd_kernels.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics/multipole.hpp"
#include "nbody/physics/opening_criterion.hpp"
#include "nbody/physics/pair_force.hpp"
#include "test_helpers.hpp"
#include "tree/tree.hpp"

namespace nbody {
namespace {
/// Where a SIMD result may differ from the float64 reference: |a - a_ref| against the sum
/// of the magnitudes of the terms (so cancellation in a small net force does not count).
struct Deviation {
  double median = 0, max = 0;
};

Deviation deviation(std::vector<double> d) {
  std::sort(d.begin(), d.end());
  return d.empty() ? Deviation{} : Deviation{d[d.size() / 2], d.back()};
}

/// A float64 reference of the terms of one target: accelerations, potential, the sum of
/// the terms' magnitudes m / (r^2 + eps^2), and the quadrupole terms' part alone.
struct ReferenceSums {
  double ax = 0, ay = 0, az = 0, phi = 0, scale = 0, qx = 0, qy = 0, qz = 0;
  void cell(double dx, double dy, double dz, double m, const Quadrupole<double>& q, double eps2) {
    accumulate_pair_acceleration_potential<double>(dx, dy, dz, m, eps2, ax, ay, az, phi);
    accumulate_quadrupole_acceleration_potential<double>(dx, dy, dz, q, eps2, ax, ay, az, phi);
    double unused = 0;
    accumulate_quadrupole_acceleration_potential<double>(dx, dy, dz, q, eps2, qx, qy, qz, unused);
    scale += m / (dx * dx + dy * dy + dz * dz + eps2);
  }
  void body(double dx, double dy, double dz, double m, double eps2) {
    accumulate_pair_acceleration_potential<double>(dx, dy, dz, m, eps2, ax, ay, az, phi);
    scale += m / (dx * dx + dy * dy + dz * dz + eps2);
  }
};

/// tree_walk.cpp's walk written plainly, in float64, from the same tree: per group the
/// bounding box of its bodies, the same opening test (opening_criterion.hpp, the walk
/// records' `open`), accepted cells as monopole + quadrupole (multipole.hpp), the bodies of
/// opened leaves as pairs (a body's own term left out). Tree order.
std::vector<ReferenceSums> reference_walk(const tree::Tree& t,
                                          const std::vector<tree::Group>& groups, double theta,
                                          double eps) {
  std::vector<ReferenceSums> sums(t.bodies());
  const double eps2 = eps * eps, theta2 = theta * theta, slack = t.root_half * 0x1p-40;
  for (const tree::Group& g : groups) {
    double lo[3] = {t.x[g.begin], t.y[g.begin], t.z[g.begin]}, hi[3] = {lo[0], lo[1], lo[2]};
    for (std::uint32_t k = g.begin; k < g.end; ++k) {
      const double p[3] = {t.x[k], t.y[k], t.z[k]};
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], p[a]), hi[a] = std::max(hi[a], p[a]);
    }
    double c[3], h[3];
    for (int a = 0; a < 3; ++a) c[a] = 0.5 * (lo[a] + hi[a]), h[a] = 0.5 * (hi[a] - lo[a]);
    std::vector<std::size_t> accepted, bodies, stack{0};
    while (!stack.empty()) {
      const std::size_t cell = stack.back();
      stack.pop_back();
      const double s = t.half[cell];
      bool open = boxes_overlap(t.cx[cell], t.cy[cell], t.cz[cell], s, s, t.dim == 2 ? 0.0 : s,
                                c[0], c[1], c[2], h[0], h[1], h[2], slack);
      open = open || bh_must_open(t.walk_nodes[cell].open, theta2,
                                  distance2_point_box(t.comx[cell], t.comy[cell], t.comz[cell],
                                                      c[0], c[1], c[2], h[0], h[1], h[2]));
      if (!open) {
        accepted.push_back(cell);
      } else if (t.is_leaf(cell)) {
        for (std::uint32_t k = t.begin[cell]; k < t.end[cell]; ++k) bodies.push_back(k);
      } else {
        const auto first = static_cast<std::size_t>(t.first_child[cell]);
        for (std::size_t ch = first; ch < first + t.child_count[cell]; ++ch) stack.push_back(ch);
      }
    }
    for (std::uint32_t i = g.begin; i < g.end; ++i) {
      ReferenceSums& r = sums[i];
      for (const std::size_t a : accepted) {
        r.cell(t.comx[a] - t.x[i], t.comy[a] - t.y[i], t.comz[a] - t.z[i], t.mass[a], t.quad[a],
               eps2);
      }
      for (const std::size_t k : bodies) {
        if (k != i) r.body(t.x[k] - t.x[i], t.y[k] - t.y[i], t.z[k] - t.z[i], t.m[k], eps2);
      }
    }
  }
  return sums;
}

/// The cell kernel of one ISA against the float64 sums of the same (rounded) inputs:
/// 200 random cells with traceless quadrupoles, 13 targets (not a whole kernel step; the
/// arrays padded to kStep as the walk pads them), results added to what the outputs held.
template <class Real>
void check_cell_kernel(simd::Isa isa, bool potential, double tolerance_median,
                       double tolerance_max) {
  std::mt19937_64 rng(42);
  auto u = [&](double lo, double hi) { return lo + (hi - lo) * double(rng() >> 11) * 0x1.0p-53; };
  const double eps2 = 1e-4;
  std::vector<simd::CellSource<Real>> cells(200);
  for (auto& c : cells) {
    const double xx = u(-1e-4, 1e-4), yy = u(-1e-4, 1e-4);
    c = {Real(u(-1, 1)),
         Real(u(-1, 1)),
         Real(u(-1, 1)),
         Real(u(0, 1e-2)),
         Real(xx),
         Real(yy),
         Real(-(xx + yy)),
         Real(u(-1e-4, 1e-4)),
         Real(u(-1e-4, 1e-4)),
         Real(u(-1e-4, 1e-4)),
         Real(u(0, 3e-4))};
  }
  const std::size_t count = 13, padded = simd::kStep, guard = 8;
  std::vector<Real> tx(padded), ty(padded), tz(padded);
  std::vector<Real> ax(padded + guard), ay(padded + guard), az(padded + guard), phi(padded + guard);
  for (std::size_t i = 0; i < padded; ++i) {
    tx[i] = Real(u(-0.2, 0.2)), ty[i] = Real(u(-0.2, 0.2)), tz[i] = Real(u(-0.2, 0.2));
  }
  for (auto* v : {&ax, &ay, &az, &phi}) {
    for (Real& x : *v) x = Real(u(-1, 1));
  }
  const std::vector<Real> before_ax = ax, before_ay = ay, before_az = az, before_phi = phi;
  const simd::CellArgs<Real> args{
      cells.data(), cells.size(), Real(eps2), ax.data(), ay.data(),
      az.data(),    tx.data(),    ty.data(),  tz.data(), potential ? phi.data() : nullptr};
  simd::cell_kernel<Real>(isa)(args, 0, count);
  std::vector<double> dev_a, dev_phi;
  for (std::size_t i = 0; i < count; ++i) {
    ReferenceSums r;
    for (const auto& c : cells) {
      const Quadrupole<double> q{c.xx, c.yy, c.zz, c.xy, c.xz, c.yz, c.tr};
      r.cell(double(c.x) - double(tx[i]), double(c.y) - double(ty[i]), double(c.z) - double(tz[i]),
             c.m, q, eps2);
    }
    dev_a.push_back(std::hypot(double(ax[i]) - double(before_ax[i]) - r.ax,
                               double(ay[i]) - double(before_ay[i]) - r.ay,
                               double(az[i]) - double(before_az[i]) - r.az) /
                    r.scale);
    if (potential) {
      dev_phi.push_back(std::abs(double(phi[i]) - double(before_phi[i]) - r.phi) / std::abs(r.phi));
    }
  }
  for (std::size_t i = padded; i < padded + guard; ++i) {  // nothing beyond the padding
    ASSERT_EQ(ax[i], before_ax[i]);
    ASSERT_EQ(phi[i], before_phi[i]);
  }
  if (!potential) {
    EXPECT_EQ(phi, before_phi);
  }
  for (const auto& d : {deviation(dev_a), deviation(dev_phi)}) {
    EXPECT_LE(d.median, tolerance_median);
    EXPECT_LE(d.max, tolerance_max);
  }
}
TEST(Tree, QuadrupoleCellKernelMatchesFloat64Reference) {
  // Measured (float / double, both ISAs): median 2.7e-7 / 7e-16, max 4.9e-7 / 1.5e-15 of the
  // terms' magnitudes; potentials (relative) median 1.1e-7 / 7e-16, max 4.6e-7 / 1.4e-15.
  std::vector<simd::Isa> isas{simd::Isa::Baseline};
  if (simd::isa_supported(simd::Isa::Avx2)) isas.push_back(simd::Isa::Avx2);
  for (const simd::Isa isa : isas) {
    for (const bool potential : {false, true}) {
      SCOPED_TRACE(std::string(simd::to_string(isa)) + (potential ? " with potentials" : ""));
      check_cell_kernel<float>(isa, potential, 1e-6, 3e-6);
      check_cell_kernel<double>(isa, potential, 5e-15, 2e-14);
    }
  }
}

TEST(Tree, QuadrupoleWalkMatchesFloat64Reference) {
  // The whole walk with --quadrupole (cells in the SIMD cell kernel, bodies in the pair
  // kernel) against reference_walk on the same tree, 3D and 2D, accelerations and
  // potentials. Deviations against the terms' magnitudes, measured: float median 2.7e-7 (3D)
  // and 6e-8 (2D), max 2.2e-6 and 6e-7; double 8e-16 and 5e-15 at most; potentials (relative)
  // float 3e-6 at most, double 1e-14. The quadrupole terms are themselves 2.4e-4 (3D) and
  // 1.5e-3 (2D) of that scale (median), so a missing or wrong quadrupole would show. The
  // scalar double loop the cell kernel replaced gave the same figures.
  const double eps = 0.01, theta = 0.5;
  for (const int dim : {3, 2}) {
    const ParticleSystem ps = dim == 3 ? generate({.model = "plummer", .n = 6000, .seed = 12})
                                       : test::random_system(6000, 13, 2);
    tree::Tree t;
    tree::BuildScratch scratch;
    tree::build_tree(ps, dim, 8, 2, t, scratch);
    tree::compute_moments(t, true);
    std::vector<tree::Group> groups;
    tree::make_groups(t, 64, groups);
    const std::vector<ReferenceSums> ref = reference_walk(t, groups, theta, eps);
    std::vector<double> quad_part;
    for (const ReferenceSums& r : ref) quad_part.push_back(std::hypot(r.qx, r.qy, r.qz) / r.scale);
    EXPECT_GT(deviation(quad_part).median, 1e-4) << "dim " << dim;
    auto check = [&](auto real, double tol_median, double tol_max, double tol_phi) {
      using Real = decltype(real);
      SCOPED_TRACE("dim " + std::to_string(dim) + (sizeof(Real) == 4 ? " float" : " double"));
      tree::WalkOutput out;
      tree::walk_forces<Real>(t, groups, {.theta = theta, .quadrupole = true, .softening = eps},
                              true, out);
      std::vector<double> dev_a, dev_phi;
      for (std::size_t i = 0; i < t.bodies(); ++i) {
        const ReferenceSums& r = ref[i];
        dev_a.push_back(std::hypot(out.ax[i] - r.ax, out.ay[i] - r.ay, out.az[i] - r.az) / r.scale);
        dev_phi.push_back(std::abs(out.phi[i] - r.phi) / std::abs(r.phi));
        if (dim == 2) {
          ASSERT_EQ(out.az[i], 0.0);
        }
      }
      const Deviation a = deviation(dev_a), phi = deviation(dev_phi);
      std::printf(
          "[ measured ] dim %d %s: acceleration median %.2e max %.2e, potential median "
          "%.2e max %.2e\n",
          dim, sizeof(Real) == 4 ? "float" : "double", a.median, a.max, phi.median, phi.max);
      EXPECT_LE(a.median, tol_median);
      EXPECT_LE(a.max, tol_max);
      EXPECT_LE(phi.max, tol_phi);
    };
    check(float{}, 1e-6, 1e-5, 1e-5);
    check(double{}, 1e-14, 1e-13, 1e-13);
  }
}
}  // namespace
}  // namespace nbody
