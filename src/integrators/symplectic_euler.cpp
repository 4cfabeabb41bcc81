#include "integrators/integrators.hpp"

namespace nbody {

void SymplecticEuler::step(ParticleSystem& ps, GravitySolver& gravity, double dt) {
  ensure_accelerations(ps, gravity);
  kick(ps, dt);  // v_{n+1} = v_n + a(x_n) dt
  apply_damping(ps, damping_);
  drift(ps, dt);                      // x_{n+1} = x_n + v_{n+1} dt
  gravity.compute_accelerations(ps);  // a(x_{n+1}): next step's kick, and diagnostics
  ps.time += dt;
}

}  // namespace nbody
