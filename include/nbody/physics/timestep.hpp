#pragma once
// Hierarchical (block) time steps, written once: the host stepper and the CUDA kernels
// call these functions, so a body gets the same bin on the CPU and the GPU from the same
// acceleration (exact float64 operations, as in integration.hpp).
//
// The bins. A body in bin k takes steps of dt / 2^k, where dt (--dt) is the largest step;
// k = 0 ... kMaxTimestepBin. Time inside one step of dt is counted in integer ticks,
// kTicksPerStep of them, so bin k's steps are 2^(30 - k) ticks long and every boundary is
// exact. A body's step starts on a multiple of its own length, so it is active (its step
// ends) at tick T exactly when T is a multiple of that length.
//
// The step a body wants (GADGET-2/4, Springel 2005 eq. 34): dt_i = sqrt(2 eta eps / |a_i|),
// eps the softening. Without softening that length is 0, so the length scale is taken from
// the body's own potential instead, L_i = |phi_i| / |a_i| (for a Kepler orbit, the distance
// to the central mass): dt_i = sqrt(2 eta L_i / |a_i|) = sqrt(2 eta |phi_i|) / |a_i|, which
// scales with the local orbital time r^(3/2) / sqrt(G M) as the softened rule does in a
// smooth potential. A body with no acceleration wants no limit (bin 0).
#include <cmath>
#include <cstdint>

#include "nbody/host_device.hpp"
#include "nbody/physics/integration.hpp"

namespace nbody {

inline constexpr int kMaxTimestepBin = 30;
inline constexpr std::uint64_t kTicksPerStep = std::uint64_t(1) << kMaxTimestepBin;

NBODY_HD double exact_div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}

NBODY_HD double exact_sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

/// Ticks in one step of bin k.
NBODY_HD std::uint64_t bin_ticks(int k) {
  return kTicksPerStep >> k;
}

/// Half of bin k's step, dt / 2^k / 2: the kicks of the block steps.
NBODY_HD double bin_half_step(double dt, int k) {
  return exact_mul(0.5, ldexp(dt, -k));
}

/// Whether a body of bin k ends a step (and gets new forces) at tick t.
NBODY_HD bool bin_active_at(int k, std::uint64_t tick) {
  return tick % bin_ticks(k) == 0;
}

/// |a|^2, summed x, y, z (exact operations: the same bits on the CPU and the GPU).
NBODY_HD double squared_acceleration(double ax, double ay, double az) {
  return exact_add(exact_add(exact_mul(ax, ax), exact_mul(ay, ay)), exact_mul(az, az));
}

/// The step the body wants (infinity when its acceleration is 0): the rule above.
NBODY_HD double wanted_step(double eta, double softening, double ax, double ay, double az,
                            double phi) {
  const double a2 = squared_acceleration(ax, ay, az);
  if (!(a2 > 0)) return INFINITY;
  const double a = exact_sqrt(a2);
  if (softening > 0) return exact_sqrt(exact_div(exact_mul(2 * eta, softening), a));
  return exact_div(exact_sqrt(exact_mul(2 * eta, std::fabs(phi))), a);
}

// The jerk criterion (--timestep-criterion jerk): dt_i = eta |a_i| / |da_i/dt|, the first-order
// form of Aarseth's criterion, which Hermite codes use for a body's first step (Makino &
// Aarseth 1992, PASJ 44, 141; Aarseth 2003, "Gravitational N-Body Simulations"). It follows
// the rate at which a body's force changes, so a star feels its planets' periods in its own
// reflex motion, which |a| alone misses. For a circular Kepler orbit |da/dt| = omega |a|:
// eta is the step as a fraction of P / 2 pi, as for the dynamical criterion.
/// The step the jerk criterion wants (infinity when the jerk is 0).
NBODY_HD double wanted_step_jerk(double eta, double ax, double ay, double az, double jx, double jy,
                                 double jz) {
  const double j2 = squared_acceleration(jx, jy, jz);
  if (!(j2 > 0)) return INFINITY;
  return exact_div(exact_mul(eta, exact_sqrt(squared_acceleration(ax, ay, az))), exact_sqrt(j2));
}

// The dynamical criterion (--timestep-criterion dynamical): dt_i = eta / omega_i with
// omega_i^2 = G M_enc / r^3 the inverse square of the local dynamical time (Zemp et al.
// 2007, "An optimum time-stepping scheme for N-body simulations", MNRAS 376, 273: the step
// follows the enclosed density, not the softening). Two estimates, the larger kept:
//   - the neighbourhood: the mean density of the smallest octree cell around the body that
//     holds kDensityCellBodies bodies (integrators/cell_density.hpp), as G M / r^3 with r the
//     radius of the sphere of the cell's volume (softened: r^2 + eps^2), which is what sets
//     the time in a cusp, where |a| and phi stay finite (sqrt(eps / |a|) there is constant,
//     while orbits at radius r take a time ~ sqrt(r));
//   - the body's own orbit: |a|^2 / |phi|, which is G M / r^3 for a Kepler orbit (a planet
//     around a star, which no cell of kDensityCellBodies bodies resolves).
// For a circular Kepler orbit omega = 2 pi / P: eta is the step as a fraction of P / 2 pi.
inline constexpr int kDensityCellBodies = 32;

/// G m / (r^2 + eps^2)^(3/2) for a cell of mass m and side h, r = h (3 / (4 pi))^(1/3).
NBODY_HD double cell_omega2(double G, double m, double h, double eps) {
  const double r = exact_mul(h, 0.6203504908994000);  // (3 / (4 pi))^(1/3)
  const double s2 = exact_add(exact_mul(r, r), exact_mul(eps, eps));
  return exact_div(exact_mul(G, m), exact_mul(s2, exact_sqrt(s2)));
}

/// The step the dynamical criterion wants (infinity when omega is 0): eta / omega with
/// omega^2 = max(omega2_cell, |a|^2 / |phi|).
NBODY_HD double wanted_step_dynamical(double eta, double omega2_cell, double ax, double ay,
                                      double az, double phi) {
  const double a2 = squared_acceleration(ax, ay, az);
  double w2 = omega2_cell;
  const double p = std::fabs(phi);
  if (p > 0) {
    const double orbit = exact_div(a2, p);
    if (orbit > w2) w2 = orbit;
  }
  if (!(w2 > 0)) return INFINITY;
  return exact_div(eta, exact_sqrt(w2));
}

/// The bin of a body that wants `wanted` (wanted_step()) with largest step dt: the smallest
/// k whose step dt / 2^k is <= wanted, but at most k_limit (the bin of --dt-min, or
/// kMaxTimestepBin). *floored is set when the body wanted a smaller step than k_limit's.
/// Comparisons against exact powers of two: the same k on every machine.
NBODY_HD int timestep_bin(double wanted, double dt, int k_limit, bool* floored) {
  int k = 0;
  while (k < k_limit && !(ldexp(dt, -k) <= wanted)) ++k;
  *floored = !(ldexp(dt, -k) <= wanted);
  return k;
}

/// The deepest bin allowed by --dt-min (dt_min 0: kMaxTimestepBin): the largest k with
/// dt / 2^k >= dt_min.
NBODY_HD int bin_limit(double dt, double dt_min) {
  int k = 0;
  while (k < kMaxTimestepBin && ldexp(dt, -(k + 1)) >= dt_min) ++k;
  return k;
}

/// The bin a body of bin `old_bin`, whose step ended at tick t, takes next when it wants
/// bin `wanted_bin`: any smaller step, but a larger one only where the larger bin's steps
/// are synchronised with t (t a multiple of its length); otherwise the largest step that
/// is, never larger than `wanted_bin`'s.
NBODY_HD int next_bin(int wanted_bin, int old_bin, std::uint64_t tick) {
  int k = wanted_bin;
  while (k < old_bin && !bin_active_at(k, tick)) ++k;
  return k;
}

// Contacts (collisions with hierarchical steps). The leapfrog resolves a contact in the
// middle of the step's drift, where the velocities are centred in time. Between substeps
// only the bodies of the deepest populated bin are at the middle of their step (the
// substep is their step); a body of a longer step is elsewhere in its drift, and its
// velocity is off the true one by a (t - t_mid), first order in the step.
//
// Bounces keep their time symmetry through a gate (nbody::ContactGate): the collision
// stage resolves only pairs of two bodies of the deepest bin. It marks every body it finds
// overlapping another with kContactFlag in its bin byte; when the body's step ends, it
// takes at least the deepest bin (contact_bin()), and the pair meets there: a contact
// between bins waits at most one step of the longer bin.
//
// Merges do not wait (an overlap left to deepen brings two bodies close, where the forces
// are large, and a merge has no time symmetry to keep): every body's velocity is moved to
// the stage's time first, v += a (t_stage - t_mid) with the acceleration of its step's
// start, and back after (stage_offset()). The books then count the kinetic energy at one
// time, and a merged body keeps its parts' momentum at that time.
inline constexpr std::uint8_t kContactFlag = 0x80;

/// The bin in a bin byte (without kContactFlag).
NBODY_HD int bin_of(std::uint8_t byte) {
  return byte & 0x7f;
}

/// The next bin of a body whose bin byte is `byte`, given next_bin()'s `k` and the deepest
/// populated bin: a body marked in contact goes at least as deep (a smaller step is always
/// allowed).
NBODY_HD int contact_bin(int k, std::uint8_t byte, int deepest) {
  return (byte & kContactFlag) && deepest > k ? deepest : k;
}

/// t_stage - t_mid for a body of bin k at the collision stage of the substep [tick, next]
/// (the middle of that substep) of a step dt: 0 for the deepest bin, whose step the substep
/// is. Integer ticks, then one rounding: the same on every machine.
NBODY_HD double stage_offset(int k, std::uint64_t tick, std::uint64_t next, double dt) {
  const std::uint64_t len = bin_ticks(k);
  const std::uint64_t start = tick / len * len;  // the body's step started there
  const auto twice =
      static_cast<std::int64_t>(tick + next) - static_cast<std::int64_t>(2 * start + len);
  return exact_mul(dt, ldexp(double(twice), -kMaxTimestepBin - 1));
}

}  // namespace nbody
