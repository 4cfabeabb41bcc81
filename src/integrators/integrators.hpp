#pragma once
// The concrete integrators (private: callers use make_integrator()).
#include "nbody/integrator.hpp"

namespace nbody {

// Building blocks shared by the schemes (kick_drift.cpp). The z components are updated
// too: in 2D they stay exactly 0 because every a_z is exactly 0 (all dz are 0).

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
class LeapfrogKDK final : public Integrator {
 public:
  explicit LeapfrogKDK(double damping) : damping_(damping) {}
  [[nodiscard]] std::string name() const override { return "leapfrog"; }
  void step(ParticleSystem& ps, GravitySolver& gravity, double dt) override;

 private:
  double damping_;
};

/// Semi-implicit (symplectic) Euler, seed 001 eq. 1.5: v += a dt; x += v dt.
/// First order, but symplectic: the energy error stays bounded.
class SymplecticEuler final : public Integrator {
 public:
  explicit SymplecticEuler(double damping) : damping_(damping) {}
  [[nodiscard]] std::string name() const override { return "euler"; }
  void step(ParticleSystem& ps, GravitySolver& gravity, double dt) override;

 private:
  double damping_;
};

/// The kinematic update of seed 000 (eq. 2.5-2.6): x += (v + a dt/2) dt; v += a dt.
/// First order and not symplectic: energy drifts secularly. Kept for the seed's behaviour.
class KinematicUpdate final : public Integrator {
 public:
  explicit KinematicUpdate(double damping) : damping_(damping) {}
  [[nodiscard]] std::string name() const override { return "kinematic"; }
  void step(ParticleSystem& ps, GravitySolver& gravity, double dt) override;

 private:
  double damping_;
};

}  // namespace nbody
