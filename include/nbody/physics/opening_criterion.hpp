#pragma once
// The Barnes-Hut opening criterion, written once for the CPU and the CUDA walk.
//
// A cell of edge length s whose centre of mass is at distance d from the body is
// ACCEPTED (its multipole used instead of its bodies) when s/d < theta, i.e. it is
// OPENED when s >= theta d. Written on squares, s^2 >= theta^2 d^2, so no sqrt.
// theta = 0 opens every cell: the walk then reduces to the direct sum.
//
// For a group walk (one interaction list for a group of nearby bodies) d is the
// distance from the centre of mass to the NEAREST point of the group's bounding box:
// that is <= the distance to any body of the group, so the group opens at least every
// cell that one of its bodies would open, and its accuracy is at least the per-body one.
//
// Independently of theta, a cell whose box overlaps the group's box (in particular one
// that contains the body) is always opened: the guard against the "exploding cell",
// where the centre of mass of a big cell lies far from a body inside it and s/d < theta
// although the body sits among the cell's mass (GADGET does the same).
#include "nbody/host_device.hpp"

namespace nbody {

/// True when a cell of squared edge length s2 must be opened for a target at squared
/// distance d2 from its centre of mass, with theta2 = theta^2. Barnes' b_max variant (Barnes
/// 1994, "A modified tree code: don't laugh; it runs"; Salmon & Warren 1994, "Skeletons from
/// the treecode closet") passes b_max^2 as s2: the largest distance from the centre of mass
/// to a body of the cell, which bounds the multipole error where the edge does not (a cell
/// whose mass sits in one corner).
template <class Real>
NBODY_HD bool bh_must_open(Real s2, Real theta2, Real d2) {
  return s2 >= theta2 * d2;
}

/// The relative criterion (GADGET-4, Springel et al. 2021, "Simulating cosmic structure
/// formation with the GADGET-4 code", sec. 2.3): a cell of mass M and edge s at distance d
/// is used whole when G M / d^2 (s / d)^2 <= alpha |a_old|, the force error it may bring
/// against the body's acceleration of the last evaluation; opened otherwise. With
/// ms2 = M s^2 and alpha_a = alpha |a_old| / G: opened when ms2 > alpha_a d^4. A cell near a
/// weakly accelerated body opens more, one far from a strongly accelerated body less.
///
/// A cell smaller than kRelativeThetaMin times its distance is used whole all the same
/// (s2 = s^2 < kRelativeThetaMin^2 d^2): a guard for a body whose |a_old| is 0 or nearly
/// (the centre of a symmetric system), which would otherwise open the whole tree, a direct
/// sum of its own. The opening angle the criterion allows scales as (alpha |a|)^(1/4), so
/// the floor binds only where |a_old| is ~10^-4 of a typical body's, and there the error is
/// that of a theta = 0.1 walk. It changed no bit of the Plummer spheres measured (1M, alpha
/// 0.0005 to 0.005, H200): their central bodies keep |a| well above that.
inline constexpr double kRelativeThetaMin = 0.1;
template <class Real>
NBODY_HD bool relative_must_open(Real ms2, Real alpha_a, Real d2, Real s2) {
  return ms2 > alpha_a * d2 * d2 && s2 >= Real(kRelativeThetaMin * kRelativeThetaMin) * d2;
}

/// True when a cell of half edge `half` whose centre is (dx, dy, dz) from the centre of mass
/// holds it or borders it: its edge is at least that distance. The receivers' descriptions of
/// a decomposed run (NBODY_DOMAIN_PIECE_SPLIT=2; the GPU's select_pieces, the CPU's
/// receiver_boxes) split the runs of small children of such a cell: one box around them would
/// span the dense centre, and a sender would send all that the centre opens for it.
template <class Real>
NBODY_HD bool at_centre_of_mass(Real half, Real dx, Real dy, Real dz) {
  return Real(4) * half * half >= dx * dx + dy * dy + dz * dz;
}

/// Squared distance from point p to the axis-aligned box centre c, half-extents h
/// (0 when p is inside).
template <class Real>
NBODY_HD Real distance2_point_box(Real px, Real py, Real pz, Real cx, Real cy, Real cz, Real hx,
                                  Real hy, Real hz) {
  auto gap = [](Real p, Real c, Real h) {
    const Real a = (p > c ? p - c : c - p) - h;
    return a > Real(0) ? a : Real(0);
  };
  const Real dx = gap(px, cx, hx), dy = gap(py, cy, hy), dz = gap(pz, cz, hz);
  return dx * dx + dy * dy + dz * dz;
}

/// True when two axis-aligned boxes (centres a, b; half-extents ha, hb) overlap or
/// touch. `slack` widens the test (absolute), so that a body on a cell face, or one that
/// rounding put a hair outside its cell, still counts as inside.
template <class Real>
NBODY_HD bool boxes_overlap(Real ax, Real ay, Real az, Real hax, Real hay, Real haz, Real bx,
                            Real by, Real bz, Real hbx, Real hby, Real hbz, Real slack) {
  auto apart = [slack](Real a, Real b, Real ha, Real hb) {
    return (a > b ? a - b : b - a) > ha + hb + slack;
  };
  return !(apart(ax, bx, hax, hbx) || apart(ay, by, hay, hby) || apart(az, bz, haz, hbz));
}

}  // namespace nbody
