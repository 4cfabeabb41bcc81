#pragma once
// The per-body updates of every integrator, written once: the CPU loops
// (src/integrators/) and the CUDA kernels (src/simulation/cuda/) call these functions.
//
// Exact float64 operations. The host code is compiled with -ffp-contract=off; on the device
// __dmul_rn and __dadd_rn keep nvcc from contracting a multiply and an add into one FMA.
// So, given equal accelerations, a GPU step gives the bits of a CPU step.
//
// A step is split around its one force evaluation: open_step() before (kick + drift, or
// the Euler or kinematic update), close_step() after (the leapfrog's closing kick). The
// damping factor (seed 002) multiplies the velocities once per step, after the step's
// velocity update; 1 leaves them untouched.
#include <cstddef>

#include "nbody/host_device.hpp"
#include "nbody/integrator.hpp"

namespace nbody {

NBODY_HD double exact_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

NBODY_HD double exact_add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// One body's position and velocity, loaded from the state and stored back.
struct BodyMotion {
  double x, y, z, vx, vy, vz;
};

/// Body i's position and velocity from any SoA state with arrays x y z vx vy vz (the host
/// ParticleSystem, the device stepper's State), and back.
template <class Arrays>
NBODY_HD BodyMotion load_motion(const Arrays& s, std::size_t i) {
  return {s.x[i], s.y[i], s.z[i], s.vx[i], s.vy[i], s.vz[i]};
}
template <class Arrays>
NBODY_HD void store_motion(Arrays& s, std::size_t i, const BodyMotion& b) {
  s.x[i] = b.x;
  s.y[i] = b.y;
  s.z[i] = b.z;
  s.vx[i] = b.vx;
  s.vy[i] = b.vy;
  s.vz[i] = b.vz;
}

/// The step's constants, computed once on the host: `half` is dt / 2 for the leapfrog's
/// half kicks and dt^2 / 2 for the kinematic update's a dt^2 / 2 term.
struct StepFactors {
  double dt = 0;
  double half = 0;
  double damping = 1;
};

[[nodiscard]] inline StepFactors step_factors(IntegratorScheme scheme, double dt, double damping) {
  switch (scheme) {
    case IntegratorScheme::Leapfrog:
      return {dt, 0.5 * dt, damping};
    case IntegratorScheme::Kinematic:
      return {dt, 0.5 * dt * dt, damping};
    case IntegratorScheme::Euler:
    case IntegratorScheme::Ias15:  // no fixed-step kernels: the host stepper drives it
      break;
  }
  return {dt, 0.0, damping};
}

/// v += a h.
NBODY_HD void kick(BodyMotion& b, double ax, double ay, double az, double h) {
  b.vx = exact_add(b.vx, exact_mul(ax, h));
  b.vy = exact_add(b.vy, exact_mul(ay, h));
  b.vz = exact_add(b.vz, exact_mul(az, h));
}

/// x += v dt.
NBODY_HD void drift(BodyMotion& b, double dt) {
  b.x = exact_add(b.x, exact_mul(b.vx, dt));
  b.y = exact_add(b.y, exact_mul(b.vy, dt));
  b.z = exact_add(b.z, exact_mul(b.vz, dt));
}

/// v *= damping (nothing for damping 1).
NBODY_HD void damp(BodyMotion& b, double damping) {
  if (damping == 1.0) return;
  b.vx = exact_mul(b.vx, damping);
  b.vy = exact_mul(b.vy, damping);
  b.vz = exact_mul(b.vz, damping);
}

/// The part of a step before the force evaluation, with a = a(x_n):
///   Leapfrog (kick-drift-kick)  v += a dt/2; x += v dt
///   Euler (semi-implicit)       v += a dt; v *= damping; x += v dt   (seed 001 eq. 1.5)
///   Kinematic                   x += v dt + a dt^2/2; v += a dt; v *= damping  (seed 000)
template <IntegratorScheme S>
NBODY_HD void open_step(BodyMotion& b, double ax, double ay, double az, const StepFactors& f) {
  if constexpr (S == IntegratorScheme::Leapfrog) {
    kick(b, ax, ay, az, f.half);
    drift(b, f.dt);
  } else if constexpr (S == IntegratorScheme::Euler) {
    kick(b, ax, ay, az, f.dt);
    damp(b, f.damping);
    drift(b, f.dt);
  } else {
    b.x = exact_add(b.x, exact_add(exact_mul(b.vx, f.dt), exact_mul(ax, f.half)));
    b.y = exact_add(b.y, exact_add(exact_mul(b.vy, f.dt), exact_mul(ay, f.half)));
    b.z = exact_add(b.z, exact_add(exact_mul(b.vz, f.dt), exact_mul(az, f.half)));
    kick(b, ax, ay, az, f.dt);
    damp(b, f.damping);
  }
}

/// Whether a scheme has work after the force evaluation (only the leapfrog's closing kick).
template <IntegratorScheme S>
inline constexpr bool kHasCloseStep = S == IntegratorScheme::Leapfrog;

/// The part of a step after the force evaluation, with a = a(x_{n+1}): the leapfrog's
/// closing kick v += a dt/2, then the damping.
template <IntegratorScheme S>
NBODY_HD void close_step(BodyMotion& b, double ax, double ay, double az, const StepFactors& f) {
  if constexpr (kHasCloseStep<S>) {
    kick(b, ax, ay, az, f.half);
    damp(b, f.damping);
  }
}

}  // namespace nbody
