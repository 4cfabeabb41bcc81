#include <vector>

#include "integrators/integrators.hpp"

namespace nbody {

namespace {
// The loops are memory-bound; threads pay off only for large N.
constexpr std::size_t kParallelThreshold = 100000;

/// (x, y, z) += (sx, sy, sz) * h, element-wise.
void add_scaled(std::vector<double>& x, std::vector<double>& y, std::vector<double>& z,
                const std::vector<double>& sx, const std::vector<double>& sy,
                const std::vector<double>& sz, double h) {
  const std::size_t n = x.size();
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (std::size_t i = 0; i < n; ++i) {
    x[i] += sx[i] * h;
    y[i] += sy[i] * h;
    z[i] += sz[i] * h;
  }
}
}  // namespace

void kick(ParticleSystem& ps, double h) { add_scaled(ps.vx, ps.vy, ps.vz, ps.ax, ps.ay, ps.az, h); }

void drift(ParticleSystem& ps, double dt) { add_scaled(ps.x, ps.y, ps.z, ps.vx, ps.vy, ps.vz, dt); }

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
