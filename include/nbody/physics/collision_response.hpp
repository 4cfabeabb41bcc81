#pragma once
// The collision response, written once: contact geometry, the hard-sphere impulse with
// restitution, the positional push-apart, and the merge. The CPU handler
// (src/collisions/) calls these; the CUDA engine (src/collisions/cuda/) calls the same
// functions from its kernels.
//
// The pair functions return changes (PairChange) instead of writing the bodies, so a GPU
// kernel can sum each body's changes over its contacts (the CUDA engine's Jacobi
// push-apart) while a sequential solver applies them at once (apply_* below). Every change keeps
// the pair's momentum and centre of mass: body a moves by -s * w_a * n and body b by +s * w_b * n,
// with the mass shares w_a = m_b / (m_a + m_b), w_b = m_a / (m_a + m_b), so m_a w_a = m_b w_b.
#include <cmath>

#include "nbody/host_device.hpp"
#include "nbody/physics/pair_force.hpp"

namespace nbody {

/// What the response needs of one body (a gathered copy; 64 bytes in double).
template <class Real>
struct CollisionBody {
  Real x, y, z;
  Real vx, vy, vz;
  Real mass;
  Real radius;
};

/// The line of centres of a pair.
template <class Real>
struct Contact {
  Real nx, ny, nz;  // unit normal from a to b
  Real distance;    // |x_b - x_a|
  Real overlap;     // r_a + r_b - distance: > 0 when the bodies overlap
};

/// A change to add to body a and to body b (positions or velocities).
template <class Real>
struct PairChange {
  Real ax, ay, az;
  Real bx, by, bz;
};

/// Contact geometry of a and b. Coincident centres have no line of centres; the normal
/// is then +x, which lies in the plane of a 2D run and is the same on every thread and
/// device, so such a pair is still separated, deterministically.
template <class Real>
NBODY_HD Contact<Real> contact_between(const CollisionBody<Real>& a, const CollisionBody<Real>& b) {
  const Real dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
  const Real d = std::sqrt(dx * dx + dy * dy + dz * dz);
  Contact<Real> c;
  if (d > Real(0)) {
    c.nx = dx / d;
    c.ny = dy / d;
    c.nz = dz / d;
  } else {
    c.nx = Real(1);
    c.ny = c.nz = Real(0);
  }
  c.distance = d;
  c.overlap = a.radius + b.radius - d;
  return c;
}

/// True when |x_b - x_a| < (r_a + r_b) * scale: the contact search's test (scale = 1 + skin)
/// and the cheap reject before contact_between (scale = 1): no sqrt, no division.
template <class Real>
NBODY_HD bool within_reach(const CollisionBody<Real>& a, const CollisionBody<Real>& b, Real scale) {
  const Real dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
  const Real s = (a.radius + b.radius) * scale;
  return dx * dx + dy * dy + dz * dz < s * s;
}

/// A push-apart leaves a pair touching up to rounding, often overlapping by an ulp. Such
/// residues are not contacts to resolve again (else every later pass would find
/// "overlaps" and the passes could never stop early): an overlap counts above this
/// fraction of r_a + r_b.
inline constexpr double kOverlapRoundoff = 1e-9;

template <class Real>
NBODY_HD bool resolvable_overlap(const Contact<Real>& c, const CollisionBody<Real>& a,
                                 const CollisionBody<Real>& b) {
  return c.overlap > Real(kOverlapRoundoff) * (a.radius + b.radius);
}

/// Overlap as a fraction of the smaller radius (of the larger one when the smaller is 0,
/// so that a point inside a sphere gives a finite number).
template <class Real>
NBODY_HD Real overlap_fraction(Real overlap, Real ra, Real rb) {
  const Real small = ra < rb ? ra : rb;
  const Real ref = small > Real(0) ? small : (ra > rb ? ra : rb);
  return ref > Real(0) ? overlap / ref : Real(0);
}

/// The share m_other / (m_a + m_b) of a pair's change that a body takes; half each for two
/// massless bodies (test particles, particles.hpp), which have no centre of mass to keep.
template <class Real>
NBODY_HD Real mass_share(Real m_other, Real total) {
  return total > Real(0) ? m_other / total : Real(0.5);
}

/// Hard-sphere impulse along the line of centres with coefficient of restitution e
/// (0 <= e <= 1), applied only when the bodies approach: u = (v_b - v_a) . n < 0.
/// Afterwards u' = -e u; with e = 1 momentum and kinetic energy are conserved (seed 004,
/// eq. 2.5-2.8). Returns the velocity changes; `lost` receives the kinetic energy
/// removed, (1 - e^2) mu u^2 / 2 with mu = m_a m_b / (m_a + m_b) (exactly 0 for e = 1).
template <class Real>
NBODY_HD PairChange<Real> bounce_velocity_change(const CollisionBody<Real>& a,
                                                 const CollisionBody<Real>& b,
                                                 const Contact<Real>& c, Real e, Real& lost) {
  const Real u = (b.vx - a.vx) * c.nx + (b.vy - a.vy) * c.ny + (b.vz - a.vz) * c.nz;
  if (!(u < Real(0))) {
    lost = Real(0);
    return {Real(0), Real(0), Real(0), Real(0), Real(0), Real(0)};
  }
  const Real total = a.mass + b.mass;
  const Real wa = mass_share(b.mass, total), wb = mass_share(a.mass, total);
  const Real du = -(Real(1) + e) * u;  // > 0: the change of the normal relative speed
  lost = Real(0.5) * (a.mass * wa) * u * u * (Real(1) - e * e);
  const Real sa = du * wa, sb = du * wb;
  return {-sa * c.nx, -sa * c.ny, -sa * c.nz, sb * c.nx, sb * c.ny, sb * c.nz};
}

/// Position changes that move an overlapping pair apart along the line of centres until
/// the bodies touch, in mass-weighted shares (the heavier body moves less; the pair's
/// centre of mass stays put). Seed 001 §1.2 moves each body by half the overlap, which is
/// the equal-mass case. Zero when the bodies do not overlap.
template <class Real>
NBODY_HD PairChange<Real> push_apart_shift(const CollisionBody<Real>& a,
                                           const CollisionBody<Real>& b, const Contact<Real>& c) {
  if (!(c.overlap > Real(0))) return {Real(0), Real(0), Real(0), Real(0), Real(0), Real(0)};
  const Real total = a.mass + b.mass;
  const Real sa = c.overlap * mass_share(b.mass, total), sb = c.overlap * mass_share(a.mass, total);
  return {-sa * c.nx, -sa * c.ny, -sa * c.nz, sb * c.nx, sb * c.ny, sb * c.nz};
}

/// The softened mutual potential energy of a pair, -G m_a m_b / sqrt(d^2 + eps^2) (0 for
/// G = 0): what a push-apart changes and a merge removes.
template <class Real>
NBODY_HD Real pair_potential_energy(const CollisionBody<Real>& a, const CollisionBody<Real>& b,
                                    Real G, Real eps2) {
  if (G == Real(0)) return Real(0);
  return G * a.mass * pair_potential<Real>(b.x - a.x, b.y - a.y, b.z - a.z, b.mass, eps2);
}

/// Under gravity a push-apart raises the pair's potential energy by dW (> 0): the
/// velocity change along n that takes dW out of the pair's separating normal motion
/// u = (v_b - v_a) . n, so that the push-apart injects no energy (u'^2 = u^2 - 2 dW / mu).
/// When the pair has less normal kinetic energy than that (a resting contact), u' = 0 and
/// `unabsorbed` receives the rest of dW, which the caller books as energy gained. `removed`
/// receives the kinetic energy taken (min(dW, mu u^2 / 2)). Momentum is kept.
template <class Real>
NBODY_HD PairChange<Real> push_apart_compensation(const CollisionBody<Real>& a,
                                                  const CollisionBody<Real>& b,
                                                  const Contact<Real>& c, Real dW, Real& removed,
                                                  Real& unabsorbed) {
  removed = unabsorbed = Real(0);
  const PairChange<Real> none{Real(0), Real(0), Real(0), Real(0), Real(0), Real(0)};
  if (!(dW > Real(0))) return none;
  const Real u = (b.vx - a.vx) * c.nx + (b.vy - a.vy) * c.ny + (b.vz - a.vz) * c.nz;
  const Real total = a.mass + b.mass;
  const Real wa = mass_share(b.mass, total), wb = mass_share(a.mass, total);
  const Real mu = a.mass * wa;
  if (!(u > Real(0))) {  // not separating: nothing to take the energy from
    unabsorbed = dW;
    return none;
  }
  const Real kinetic = Real(0.5) * mu * u * u;
  const Real u_new = kinetic > dW ? std::sqrt(u * u - Real(2) * dW / mu) : Real(0);
  removed = kinetic > dW ? dW : kinetic;
  unabsorbed = dW - removed;
  const Real du = u_new - u;  // < 0: slower apart
  const Real sa = du * wa, sb = du * wb;
  return {-sa * c.nx, -sa * c.ny, -sa * c.nz, sb * c.nx, sb * c.ny, sb * c.nz};
}

template <class Real>
NBODY_HD void apply_velocity_change(CollisionBody<Real>& a, CollisionBody<Real>& b,
                                    const PairChange<Real>& d) {
  a.vx += d.ax;
  a.vy += d.ay;
  a.vz += d.az;
  b.vx += d.bx;
  b.vy += d.by;
  b.vz += d.bz;
}

template <class Real>
NBODY_HD void apply_position_change(CollisionBody<Real>& a, CollisionBody<Real>& b,
                                    const PairChange<Real>& d) {
  a.x += d.ax;
  a.y += d.ay;
  a.z += d.az;
  b.x += d.bx;
  b.y += d.by;
  b.z += d.bz;
}

/// One bounce contact resolved in place, in seed 001's order: the impulse (when
/// approaching), then the push-apart (when overlapping); c = contact_between(a, b).
/// Returns the kinetic energy lost.
template <class Real>
NBODY_HD Real resolve_bounce(CollisionBody<Real>& a, CollisionBody<Real>& b, const Contact<Real>& c,
                             Real e) {
  if (!(c.overlap > Real(0))) return Real(0);
  Real lost = Real(0);
  apply_velocity_change(a, b, bounce_velocity_change(a, b, c, e, lost));
  apply_position_change(a, b, push_apart_shift(a, b, c));
  return lost;
}

template <class Real>
NBODY_HD Real resolve_bounce(CollisionBody<Real>& a, CollisionBody<Real>& b, Real e) {
  return resolve_bounce(a, b, contact_between(a, b), e);
}

/// Under gravity, overlaps deeper than this fraction of the smaller radius are pushed apart
/// (resolve_bounce_under_gravity).
inline constexpr double kDeepOverlap = 0.5;

/// resolve_bounce under gravity (G, eps2 = softening^2; with G = 0 it is resolve_bounce).
/// The impulse (when approaching), as REBOUND's hard spheres: a shallow overlap (at most
/// the approach speed times the time since the last stage) goes by itself as the pair
/// separates, and moving the bodies apart would change their potential energy at first
/// order in the step. An overlap deeper than kDeepOverlap of the smaller radius (a resting
/// contact that gravity presses on at each step, in a pile) is pushed apart, and the push's
/// rise of the pair's potential energy is taken out of the pair's separating motion
/// (push_apart_compensation). Returns the energy lost: the impulse's kinetic loss, less
/// the potential energy the pair gained unpaid.
template <class Real>
NBODY_HD Real resolve_bounce_under_gravity(CollisionBody<Real>& a, CollisionBody<Real>& b,
                                           const Contact<Real>& c, Real e, Real G, Real eps2) {
  if (G == Real(0)) return resolve_bounce(a, b, c, e);
  if (!(c.overlap > Real(0))) return Real(0);
  Real lost = Real(0);
  apply_velocity_change(a, b, bounce_velocity_change(a, b, c, e, lost));
  if (!(overlap_fraction(c.overlap, a.radius, b.radius) > Real(kDeepOverlap))) return lost;
  const Real w_before = pair_potential_energy(a, b, G, eps2);
  apply_position_change(a, b, push_apart_shift(a, b, c));
  const Real dW = pair_potential_energy(a, b, G, eps2) - w_before;
  Real removed = Real(0), unabsorbed = Real(0);
  apply_velocity_change(a, b, push_apart_compensation(a, b, c, dW, removed, unabsorbed));
  return lost - unabsorbed;
}

/// Radius of a merged body from conserved volume: cbrt(r_a^3 + r_b^3) in 3D,
/// sqrt(r_a^2 + r_b^2) in 2D (area).
template <class Real>
NBODY_HD Real merged_radius(Real ra, Real rb, int dim) {
  return dim == 2 ? std::sqrt(ra * ra + rb * rb) : std::cbrt(ra * ra * ra + rb * rb * rb);
}

/// One component of a merged body's acceleration (hierarchical steps need it before the
/// next force evaluation): the mass-weighted mean of its parts', in which their mutual
/// forces cancel, written as merge_bodies() writes the position.
template <class Real>
NBODY_HD Real merged_acceleration(Real a, Real b, Real mass_a, Real mass_b) {
  return a + mass_share(mass_b, mass_a + mass_b) * (b - a);
}

/// Kinetic energy a perfectly inelastic merge removes: mu |v_a - v_b|^2 / 2.
template <class Real>
NBODY_HD Real merge_kinetic_loss(const CollisionBody<Real>& a, const CollisionBody<Real>& b) {
  const Real dvx = a.vx - b.vx, dvy = a.vy - b.vy, dvz = a.vz - b.vz;
  const Real mu = a.mass * mass_share(b.mass, a.mass + b.mass);
  return Real(0.5) * mu * (dvx * dvx + dvy * dvy + dvz * dvz);
}

/// The body a and b merge into: masses add, momentum is kept (velocity of the centre of
/// mass), it sits at the centre of mass, and its radius keeps the volume.
template <class Real>
NBODY_HD CollisionBody<Real> merge_bodies(const CollisionBody<Real>& a,
                                          const CollisionBody<Real>& b, int dim) {
  // a + w_b (b - a) rather than w_a a + w_b b: exact when a and b agree (z = 0 in 2D).
  const Real total = a.mass + b.mass;
  const Real wb = mass_share(b.mass, total);
  CollisionBody<Real> m;
  m.x = a.x + wb * (b.x - a.x);
  m.y = a.y + wb * (b.y - a.y);
  m.z = a.z + wb * (b.z - a.z);
  m.vx = a.vx + wb * (b.vx - a.vx);
  m.vy = a.vy + wb * (b.vy - a.vy);
  m.vz = a.vz + wb * (b.vz - a.vz);
  m.mass = total;
  m.radius = merged_radius(a.radius, b.radius, dim);
  return m;
}

}  // namespace nbody
