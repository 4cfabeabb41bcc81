#pragma once
// The O(N) diagnostics per body, written once: the CPU's compute_moments() and the GPU's
// reduction kernel add up these terms (each in its own order: a serial loop on the CPU,
// per-block partial sums on the GPU).
#include "nbody/host_device.hpp"

namespace nbody {

/// The sums the O(N) diagnostics need, in the order of body_moments()'s array.
enum MomentSum { kMass, kPx, kPy, kPz, kMx, kMy, kMz, kLx, kLy, kLz, kMomentSums };

/// Adds one body's mass, momentum m v, mass moment m x (for the centre of mass) and
/// angular momentum about the origin m (x × v) to the sums.
NBODY_HD void add_body_moments(double (&sum)[kMomentSums], double m, double x, double y, double z,
                               double vx, double vy, double vz) {
  sum[kMass] += m;
  sum[kPx] += m * vx;
  sum[kPy] += m * vy;
  sum[kPz] += m * vz;
  sum[kMx] += m * x;
  sum[kMy] += m * y;
  sum[kMz] += m * z;
  sum[kLx] += m * (y * vz - z * vy);
  sum[kLy] += m * (z * vx - x * vz);
  sum[kLz] += m * (x * vy - y * vx);
}

/// One body's kinetic energy m v^2 / 2.
NBODY_HD double body_kinetic_energy(double m, double vx, double vy, double vz) {
  return 0.5 * m * (vx * vx + vy * vy + vz * vz);
}

}  // namespace nbody
