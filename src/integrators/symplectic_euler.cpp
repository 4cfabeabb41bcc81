#include "integrators/integrators.hpp"

namespace nbody {

void symplectic_euler_step(ParticleSystem& ps, GravitySolver& gravity, double dt, double damping) {
  ensure_accelerations(ps, gravity);
  kick(ps, dt);  // v_{n+1} = v_n + a(x_n) dt
  apply_damping(ps, damping);
  drift(ps, dt);                      // x_{n+1} = x_n + v_{n+1} dt
  gravity.compute_accelerations(ps);  // a(x_{n+1}): next step's kick, and diagnostics
  ps.time += dt;
}

}  // namespace nbody
