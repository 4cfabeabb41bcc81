#include "integrators/integrators.hpp"

namespace nbody {

void kinematic_step(ParticleSystem& ps, GravitySolver& gravity, double dt, double damping) {
  ensure_accelerations(ps, gravity);
  const std::size_t n = ps.size();
  const double half_dt2 = 0.5 * dt * dt;
  // x += (v + a dt/2) dt, then v += a dt: both use a(x_n).
#pragma omp parallel for simd schedule(static) if (n > 100000)
  for (std::size_t i = 0; i < n; ++i) {
    ps.x[i] += ps.vx[i] * dt + ps.ax[i] * half_dt2;
    ps.y[i] += ps.vy[i] * dt + ps.ay[i] * half_dt2;
    ps.z[i] += ps.vz[i] * dt + ps.az[i] * half_dt2;
  }
  kick(ps, dt);
  apply_damping(ps, damping);
  gravity.compute_accelerations(ps);
  ps.time += dt;
}

}  // namespace nbody
