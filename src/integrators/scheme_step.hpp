#pragma once
// One step of a scheme on the CPU (private: callers use make_integrator()). The same
// shape for every scheme: open_step() over the bodies, the force evaluation, close_step()
// over the bodies; the per-body arithmetic is physics/integration.hpp's, shared with the
// CUDA kernels. The z components are updated too: in 2D they stay exactly 0 because every
// a_z is exactly 0.
#include <cstddef>

#include "nbody/integrator.hpp"
#include "nbody/physics/integration.hpp"

namespace nbody {

namespace detail {
// The loops are memory-bound; threads pay off only for large N. Below that no OpenMP
// region at all: entering one costs more than a few-body step (an `if` clause still
// enters it).
inline constexpr std::size_t kParallelThreshold = 100000;

/// body(i) for i < n: a team of threads above kParallelThreshold, else a plain loop.
template <class Body>
void for_bodies(std::size_t n, const Body& body) {
  if (n > kParallelThreshold) {
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) body(i);
  } else {
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) body(i);
  }
}

template <IntegratorScheme S, bool Open>
void update_bodies(ParticleSystem& ps, const StepFactors& f) {
  for_bodies(ps.size(), [&ps, &f](std::size_t i) {
    BodyMotion b = load_motion(ps, i);
    if constexpr (Open) {
      open_step<S>(b, ps.ax[i], ps.ay[i], ps.az[i], f);
    } else {
      close_step<S>(b, ps.ax[i], ps.ay[i], ps.az[i], f);
    }
    store_motion(ps, i, b);
  });
}

/// x += v h for every body (the second half of the leapfrog's drift around a collision stage).
inline void drift_bodies(ParticleSystem& ps, double h) {
  for_bodies(ps.size(), [&ps, h](std::size_t i) {
    BodyMotion b = load_motion(ps, i);
    drift(b, h);
    store_motion(ps, i, b);
  });
}
}  // namespace detail

/// Advances ps by dt with scheme S: forces first if ps has none valid (first step, or
/// after edits), then the scheme's updates around one force evaluation. With a collision
/// stage the leapfrog is kick(dt/2), drift(dt/2), collide, drift(dt/2), forces, kick(dt/2)
/// (REBOUND's leapfrog resolves its collisions at the same point, between its drift-kick-
/// drift steps); the other schemes collide after their position update.
template <IntegratorScheme S>
void scheme_step(ParticleSystem& ps, const ForceEvaluation& forces, const CollisionStage& collide,
                 double dt, double damping) {
  if (!ps.accelerations_valid()) forces(ps);
  const StepFactors f = step_factors(S, dt, damping);
  if constexpr (S == IntegratorScheme::Leapfrog) {
    if (collide) {
      const double h = 0.5 * dt;                                            // exact
      detail::update_bodies<S, true>(ps, StepFactors{h, f.half, damping});  // kick dt/2, drift h
      collide(ps);
      detail::drift_bodies(ps, h);
      forces(ps);
      detail::update_bodies<S, false>(ps, f);
      ps.time += dt;
      return;
    }
  }
  detail::update_bodies<S, true>(ps, f);
  if (collide) collide(ps);
  forces(ps);
  if constexpr (kHasCloseStep<S>) detail::update_bodies<S, false>(ps, f);
  ps.time += dt;
}

}  // namespace nbody
