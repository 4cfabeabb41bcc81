#include "integrators/integrators.hpp"

namespace nbody {

void leapfrog_kdk_step(ParticleSystem& ps, GravitySolver& gravity, double dt, double damping) {
  ensure_accelerations(ps, gravity);
  kick(ps, 0.5 * dt);
  drift(ps, dt);
  gravity.compute_accelerations(ps);
  kick(ps, 0.5 * dt);
  apply_damping(ps, damping);  // once per step, after the closing kick
  ps.time += dt;
}

}  // namespace nbody
