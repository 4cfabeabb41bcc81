#pragma once
// Cell multipoles for the tree solvers, written once for the CPU and the CUDA tree.
//
// Monopole: the cell acts as a point of its mass at its centre of mass, through the
// ordinary softened pair force (pair_force.hpp), so softening treats cells as pairs.
//
// Quadrupole: the traceless tensor about the centre of mass,
//   Q_ab = sum_k m_k (3 r_a r_b - |r|^2 delta_ab),  r = x_k - com
// (6 components; a planar system has z = 0, so Q_xz = Q_yz = 0 and Q_zz = -sum m r^2).
// The potential at separation r = x - com is -G [M/r + (r.Q.r) / (2 r^5)] (the
// *_potential functions add it beside the acceleration), so the
// acceleration's quadrupole part, written with the pair convention d = com - x = -r, is
//   a_q = G [ -(Q.d)/r^5 + (5/2) (d.Q.d) d / r^7 ].
// Softening: the exact second-order expansion of the Plummer-softened potential. With
// R^2 = r^2 + eps^2 and I_ab = sum_k m_k r_a r_b (so Q = 3 I - tr(I) delta), the bodies'
// potential is -G [M/R + (d.Q.d - tr(I) eps^2) / (2 R^5)] + O((s/R)^3): the unsoftened
// formula with r -> R and d.Q.d -> d.Q.d - tr(I) eps^2. The trace term matters where
// eps is not small against the distance: without it (the formula with r -> R alone) the
// quadrupole gained only 1.5x in the median force error over the monopole at eps = 0.05
// (Plummer, N = 50,000, theta = 0.5), against 3.7x at eps = 0.01. So a Quadrupole also
// carries tr = tr(I) = sum m |r|^2.
#include "nbody/host_device.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody {

/// Traceless quadrupole tensor (6 components) and the trace of the second moment, sum m r^2
/// (for the softening term).
template <class Real>
struct Quadrupole {
  Real xx = 0, yy = 0, zz = 0, xy = 0, xz = 0, yz = 0;
  Real tr = 0;
};

/// Adds the quadrupole of mass m at offset (x, y, z) from the centre of mass.
template <class Real>
NBODY_HD void add_point_quadrupole(Quadrupole<Real>& q, Real m, Real x, Real y, Real z) {
  const Real r2 = x * x + y * y + z * z;
  q.xx += m * (Real(3) * x * x - r2);
  q.yy += m * (Real(3) * y * y - r2);
  q.zz += m * (Real(3) * z * z - r2);
  q.xy += m * (Real(3) * x * y);
  q.xz += m * (Real(3) * x * z);
  q.yz += m * (Real(3) * y * z);
  q.tr += m * r2;
}

/// Adds a child's quadrupole (about its own centre of mass) shifted to the parent's
/// centre of mass: parallel-axis theorem, the child's mass m sitting at offset (x, y, z)
/// from the parent's centre of mass (the child's dipole about its own COM is zero).
template <class Real>
NBODY_HD void add_shifted_quadrupole(Quadrupole<Real>& q, const Quadrupole<Real>& child, Real m,
                                     Real x, Real y, Real z) {
  q.xx += child.xx;
  q.yy += child.yy;
  q.zz += child.zz;
  q.xy += child.xy;
  q.xz += child.xz;
  q.yz += child.yz;
  q.tr += child.tr;
  add_point_quadrupole(q, m, x, y, z);
}

/// What every quadrupole term needs: Q.d and the softened d.Q.d - tr(I) eps^2 (above).
template <class Real>
struct QuadrupoleProducts {
  Real qdx, qdy, qdz, dqd;
};
template <class Real>
NBODY_HD QuadrupoleProducts<Real> quadrupole_products(Real dx, Real dy, Real dz,
                                                      const Quadrupole<Real>& q, Real eps2) {
  const Real qdx = q.xx * dx + q.xy * dy + q.xz * dz;  // (Q.d)
  const Real qdy = q.xy * dx + q.yy * dy + q.yz * dz;
  const Real qdz = q.xz * dx + q.yz * dy + q.zz * dz;
  return {qdx, qdy, qdz, dx * qdx + dy * qdy + dz * qdz - q.tr * eps2};
}

/// The quadrupole part of a cell's pull (per unit G) added to (ax, ay, az), and of its
/// potential, phi -= (d.Q.d) / (2 r^5) (softened r as for the acceleration).
/// d = com - x_target (pair convention), eps2 = softening^2. 0 for d = 0 with eps = 0.
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_quadrupole_acceleration_potential(Real dx, Real dy, Real dz,
                                                           const Quadrupole<Real>& q, Real eps2,
                                                           Real& ax, Real& ay, Real& az,
                                                           Real& phi) {
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;
  const Real inv_r = Math::safe_rsqrt(r2);
  const Real inv_r2 = inv_r * inv_r;
  const Real inv_r5 = inv_r2 * inv_r2 * inv_r;
  const QuadrupoleProducts<Real> p = quadrupole_products(dx, dy, dz, q, eps2);
  const Real radial = Real(2.5) * p.dqd * inv_r2;
  ax += inv_r5 * (radial * dx - p.qdx);
  ay += inv_r5 * (radial * dy - p.qdy);
  az += inv_r5 * (radial * dz - p.qdz);
  phi -= Real(0.5) * p.dqd * inv_r5;
}

/// Adds the quadrupole part of a cell's pull (per unit G) to (ax, ay, az): the function
/// above with the potential discarded. d = com - x_target (pair convention), eps2 =
/// softening^2. 0 for d = 0 with eps = 0. Math chooses how 1/sqrt is computed, as in
/// accumulate_pair_acceleration.
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_quadrupole_acceleration(Real dx, Real dy, Real dz,
                                                 const Quadrupole<Real>& q, Real eps2, Real& ax,
                                                 Real& ay, Real& az) {
  Real unused_phi{};  // {} zeroes scalars and SIMD vectors alike
  accumulate_quadrupole_acceleration_potential<Real, Math>(dx, dy, dz, q, eps2, ax, ay, az,
                                                           unused_phi);
}

/// A cell's whole pull (per unit G) on a target: the monopole (the softened pair force of
/// its mass m, pair_force.hpp) plus the quadrupole term above, from one 1/sqrt and one
/// combined radial factor,
///   a += d (m / r^3 + (5/2) (d.Q.d) / r^7) - (Q.d) / r^5,
///   phi -= m / r + (d.Q.d) / (2 r^5),
/// the same sums as accumulate_pair_acceleration_potential followed by
/// accumulate_quadrupole_acceleration_potential, in ~30 operations instead of ~45 (the
/// tree walks' cost of a quadrupole entry). d = com - x_target (pair convention).
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_cell_acceleration_potential(Real dx, Real dy, Real dz, Real m,
                                                     const Quadrupole<Real>& q, Real eps2, Real& ax,
                                                     Real& ay, Real& az, Real& phi) {
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;
  const Real inv_r = Math::safe_rsqrt(r2);
  const Real inv_r2 = inv_r * inv_r;
  const Real m_over_r = m * inv_r;
  const Real inv_r5 = inv_r2 * inv_r2 * inv_r;
  const QuadrupoleProducts<Real> p = quadrupole_products(dx, dy, dz, q, eps2);
  const Real quad_phi = Real(0.5) * p.dqd * inv_r5;  // its potential / -1
  const Real radial = (m_over_r + Real(5) * quad_phi) * inv_r2;
  ax += radial * dx - inv_r5 * p.qdx;
  ay += radial * dy - inv_r5 * p.qdy;
  az += radial * dz - inv_r5 * p.qdz;
  phi -= m_over_r + quad_phi;
}

/// accumulate_cell_acceleration_potential with the potential discarded.
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_cell_acceleration(Real dx, Real dy, Real dz, Real m,
                                           const Quadrupole<Real>& q, Real eps2, Real& ax, Real& ay,
                                           Real& az) {
  Real unused_phi{};
  accumulate_cell_acceleration_potential<Real, Math>(dx, dy, dz, m, q, eps2, ax, ay, az,
                                                     unused_phi);
}

}  // namespace nbody
