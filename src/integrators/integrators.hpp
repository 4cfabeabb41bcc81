#pragma once
// The integration schemes (private: callers use make_integrator()). Each scheme is one
// free function; they share the kick/drift loops of kick_drift.cpp. The z components
// are updated too: in 2D they stay exactly 0 because every a_z is exactly 0.
#include "nbody/integrator.hpp"

namespace nbody {

/// v += a * h for every body.
void kick(ParticleSystem& ps, double h);
/// x += v * dt for every body.
void drift(ParticleSystem& ps, double dt);
/// Multiplies velocities by the damping factor (seed 002); 1 leaves them untouched.
void apply_damping(ParticleSystem& ps, double damping);
/// Makes sure ps.ax/ay/az match the current positions (first step, or after edits).
void ensure_accelerations(ParticleSystem& ps, GravitySolver& gravity);

/// Leapfrog kick-drift-kick: v += a dt/2; x += v dt; a = a(x); v += a dt/2.
/// Symplectic and time-reversible, second order: energy error bounded, O(dt^2).
void leapfrog_kdk_step(ParticleSystem& ps, GravitySolver& gravity, double dt, double damping);

/// Semi-implicit (symplectic) Euler, seed 001 eq. 1.5: v += a dt; x += v dt.
/// First order, but symplectic: the energy error stays bounded.
void symplectic_euler_step(ParticleSystem& ps, GravitySolver& gravity, double dt, double damping);

/// The kinematic update of seed 000 (eq. 2.5-2.6): x += (v + a dt/2) dt; v += a dt.
/// First order and not symplectic: energy drifts secularly. Kept for the seed's behaviour.
void kinematic_step(ParticleSystem& ps, GravitySolver& gravity, double dt, double damping);

}  // namespace nbody
