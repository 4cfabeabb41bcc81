#pragma once
// The softened pair interaction, written once. Used by the scalar reference, the
// SIMD/OpenMP path (instantiated with vector types) and the CUDA kernels.
//
// Plummer softening: a_i += G m_j r_ij / (|r_ij|^2 + eps^2)^{3/2}, r_ij = x_j - x_i,
//                    phi_i -= G m_j / (|r_ij|^2 + eps^2)^{1/2}.
// G is applied once per body by the caller, not per pair.
#include <cmath>

#include "nbody/host_device.hpp"

namespace nbody {

/// Arithmetic the pair functions need beyond + - *. Scalars use 1/sqrt; a SIMD
/// vector type specialises this (e.g. hardware rsqrt plus Newton steps). A struct
/// rather than overloads because GCC vector types have no namespace for ADL.
template <class Real>
struct PairMath {
  /// 1/sqrt(r2) for r2 > 0 and 0 for r2 == 0, so that the self term (and coincident
  /// bodies without softening) contributes nothing instead of 0 * inf = NaN.
  NBODY_HD static Real safe_rsqrt(Real r2) {
    return r2 > Real(0) ? Real(1) / std::sqrt(r2) : Real(0);
  }
};

/// The pair's jerk, d/dt of accumulate_pair_acceleration's term (per unit G), with
/// dv = v_j - v_i: j_i += m_j (dv / s^3 - 3 (dx . dv) dx / s^5), s^2 = r^2 + eps^2.
template <class Real>
NBODY_HD void accumulate_pair_jerk(Real dx, Real dy, Real dz, Real dvx, Real dvy, Real dvz, Real mj,
                                   Real eps2, Real& jx, Real& jy, Real& jz) {
  const Real s2 = eps2 + dx * dx + dy * dy + dz * dz;
  if (!(s2 > Real(0))) return;  // the body itself (or a coincident one without softening)
  const Real inv_s = Real(1) / std::sqrt(s2);
  const Real inv_s3 = mj * inv_s * inv_s * inv_s;
  const Real rv = Real(3) * (dx * dvx + dy * dvy + dz * dvz) * inv_s * inv_s;
  jx += inv_s3 * (dvx - rv * dx);
  jy += inv_s3 * (dvy - rv * dy);
  jz += inv_s3 * (dvz - rv * dz);
}

/// accumulate_pair_acceleration plus the pair's potential: phi -= m_j / sqrt(r^2 + eps^2)
/// (per unit G), from the same rsqrt: one more add per interaction. The acceleration is
/// computed by the same expressions in the same order, so it has the same bits whether or
/// not the potential is asked for (a run's trajectory never depends on its energy output).
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_pair_acceleration_potential(Real dx, Real dy, Real dz, Real mj, Real eps2,
                                                     Real& ax, Real& ay, Real& az, Real& phi) {
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;
  const Real inv_r = Math::safe_rsqrt(r2);
  const Real m_over_r = mj * inv_r;
  const Real s = m_over_r * (inv_r * inv_r);
  ax += s * dx;
  ay += s * dy;
  az += s * dz;
  phi -= m_over_r;
}

/// Adds body j's softened pull on body i to (ax, ay, az): the function above with the
/// potential discarded (the compiler drops its one add).
/// dx = x_j - x_i etc.; mj = m_j; eps2 = softening^2. Real is a scalar or a SIMD vector.
// cost: 3 FMA for r^2, one rsqrt, 3 MUL for m/r^3, 3 FMA to accumulate
/// Math chooses how 1/sqrt is computed (PairMath<Real> unless a kernel mixes methods).
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_pair_acceleration(Real dx, Real dy, Real dz, Real mj, Real eps2, Real& ax,
                                           Real& ay, Real& az) {
  Real unused_phi{};  // {} zeroes scalars and SIMD vectors alike
  accumulate_pair_acceleration_potential<Real, Math>(dx, dy, dz, mj, eps2, ax, ay, az, unused_phi);
}

/// accumulate_mutual_pair_acceleration plus both potentials: phi_i -= m_j / r and
/// phi_j -= m_i / r (softened r; per unit G); the accelerations have the same bits as
/// without the potentials.
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_mutual_pair_acceleration_potential(Real dx, Real dy, Real dz, Real mi,
                                                            Real mj, Real eps2, Real& axi,
                                                            Real& ayi, Real& azi, Real& phii,
                                                            Real& axj, Real& ayj, Real& azj,
                                                            Real& phij) {
  const Real r2 = eps2 + dx * dx + dy * dy + dz * dz;
  const Real inv_r = Math::safe_rsqrt(r2);
  const Real inv_r3 = inv_r * (inv_r * inv_r);
  const Real si = mj * inv_r3;
  const Real sj = mi * inv_r3;
  axi += si * dx;
  ayi += si * dy;
  azi += si * dz;
  axj -= sj * dx;
  ayj -= sj * dy;
  azj -= sj * dz;
  phii -= mj * inv_r;
  phij -= mi * inv_r;
}

/// Both halves of one pair (Newton's third law): body j's pull added to a_i and body i's
/// pull added to a_j, from one r^2 and one rsqrt: two interactions for the price of ~1.4.
/// dx = x_j - x_i etc. Used by the GPU fast kernel for large N (each pair visited once).
/// The function above with the potentials discarded.
// cost: 3 FMA for r^2, one rsqrt, 4 MUL, 6 FMA to accumulate
template <class Real, class Math = PairMath<Real>>
NBODY_HD void accumulate_mutual_pair_acceleration(Real dx, Real dy, Real dz, Real mi, Real mj,
                                                  Real eps2, Real& axi, Real& ayi, Real& azi,
                                                  Real& axj, Real& ayj, Real& azj) {
  Real unused_i{}, unused_j{};
  accumulate_mutual_pair_acceleration_potential<Real, Math>(dx, dy, dz, mi, mj, eps2, axi, ayi, azi,
                                                            unused_i, axj, ayj, azj, unused_j);
}

/// Softened pair potential -m_j / sqrt(r^2 + eps^2) (per unit G and per unit m_i);
/// 0 for the self term.
template <class Real>
NBODY_HD Real pair_potential(Real dx, Real dy, Real dz, Real mj, Real eps2) {
  const Real r2 = dx * dx + dy * dy + dz * dz + eps2;
  return -mj * PairMath<Real>::safe_rsqrt(r2);
}

}  // namespace nbody
