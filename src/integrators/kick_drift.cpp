#include "integrators/integrators.hpp"

namespace nbody {

// The loops are memory-bound; threads pay off only for large N.
constexpr std::size_t kParallelThreshold = 100000;

void kick(ParticleSystem& ps, double h) {
  const std::size_t n = ps.size();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::size_t i = 0; i < n; ++i) {
    ps.vx[i] += ps.ax[i] * h;
    ps.vy[i] += ps.ay[i] * h;
    ps.vz[i] += ps.az[i] * h;
  }
}

void drift(ParticleSystem& ps, double dt) {
  const std::size_t n = ps.size();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::size_t i = 0; i < n; ++i) {
    ps.x[i] += ps.vx[i] * dt;
    ps.y[i] += ps.vy[i] * dt;
    ps.z[i] += ps.vz[i] * dt;
  }
}

void apply_damping(ParticleSystem& ps, double damping) {
  if (damping == 1.0) return;
  const std::size_t n = ps.size();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::size_t i = 0; i < n; ++i) {
    ps.vx[i] *= damping;
    ps.vy[i] *= damping;
    ps.vz[i] *= damping;
  }
}

void ensure_accelerations(ParticleSystem& ps, GravitySolver& gravity) {
  if (!ps.accelerations_valid()) gravity.compute_accelerations(ps);
}

}  // namespace nbody
