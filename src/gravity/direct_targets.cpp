// add_forces_from(): the direct sum of one set of bodies (the sources) on another (the
// targets), in float64 with the SIMD kernel: the test particles' forces
// (test_particle_gravity.cpp). The targets are packed apart from the sources, so a target
// is never a source and no self term is left out (KernelArgs::self_first past the sources).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/aligned_vector.hpp"
#include "gravity/direct_simd_kernels.hpp"
#include "gravity/test_particle_gravity.hpp"
#include "gravity/unit_scaling.hpp"

namespace nbody {

namespace {

/// Target k (0 <= k < nt) is body target(k).
template <class Target>
void add_forces(ParticleSystem& ps, std::size_t nt, Target target, ShareRange sources, double G,
                double softening, int threads, bool potential) {
  using simd::kBlock;
  const std::size_t ns = sources.last - sources.first;
  if (nt == 0 || ns == 0) return;
  // The kernels' power-of-two scaling (exact), as the direct sum's for these bodies.
  const Scaling scale = bodies_scaling(ps, softening);
  const double sp = scale.position, sm = scale.mass;

  thread_local AlignedVector<double> x, y, z, m, tx, ty, tz, ax, ay, az, phi;
  for (auto* v : {&x, &y, &z, &m}) v->resize(ns);
  for (std::size_t j = 0; j < ns; ++j) {
    x[j] = ps.x[sources.first + j] * sp;
    y[j] = ps.y[sources.first + j] * sp;
    z[j] = ps.z[sources.first + j] * sp;
    m[j] = ps.mass[sources.first + j] * sm;
  }
  const std::size_t padded = (nt + kBlock - 1) / kBlock * kBlock;
  for (auto* v : {&tx, &ty, &tz, &ax, &ay, &az}) v->resize(padded);
  if (potential) phi.resize(padded);
  for (std::size_t k = 0; k < padded; ++k) {
    const std::size_t i = target(std::min(k, nt - 1));  // padding repeats the last target
    tx[k] = ps.x[i] * sp;
    ty[k] = ps.y[i] * sp;
    tz[k] = ps.z[i] * sp;
  }
  const double eps = softening * sp;
  const simd::KernelArgs<double> args{.x = x.data(),
                                      .y = y.data(),
                                      .z = z.data(),
                                      .m = m.data(),
                                      .n = ns,
                                      .eps2 = eps * eps,
                                      .ax = ax.data(),
                                      .ay = ay.data(),
                                      .az = az.data(),
                                      .tx = tx.data(),
                                      .ty = ty.data(),
                                      .tz = tz.data(),
                                      .phi = potential ? phi.data() : nullptr,
                                      .self_first = ns};  // past every source: no self term
  simd::run_blocks(simd::body_kernel<double>(simd::best_isa()), args, 0,
                   static_cast<std::ptrdiff_t>(padded / kBlock), threads);
  for (std::size_t k = 0; k < nt; ++k) {
    const std::size_t i = target(k);
    ps.ax[i] += G * ax[k] * scale.acceleration;
    ps.ay[i] += G * ay[k] * scale.acceleration;
    ps.az[i] += G * az[k] * scale.acceleration;
  }
  if (!potential) return;
  for (std::size_t k = 0; k < nt; ++k) ps.potential[target(k)] += G * phi[k] * scale.potential;
}

}  // namespace

namespace {
/// Share `part` of n targets in whole kernel blocks, so that a target sits at the same
/// place of its block as in one process (the kernel's lanes may take 1/sqrt differently).
ShareRange block_share(std::size_t n, int part, int parts) {
  const ShareRange blocks = share_range((n + simd::kBlock - 1) / simd::kBlock, part, parts);
  return {std::min(n, blocks.first * simd::kBlock), std::min(n, blocks.last * simd::kBlock)};
}
}  // namespace

void add_forces_from(ParticleSystem& ps, ShareRange targets, ShareRange sources, double G,
                     double softening, int threads, bool potential, int part, int parts) {
  const ShareRange mine = block_share(targets.last - targets.first, part, parts);
  const std::size_t t0 = targets.first + mine.first;
  add_forces(
      ps, mine.last - mine.first, [t0](std::size_t k) { return t0 + k; }, sources, G, softening,
      threads, potential);
}

void add_forces_from(ParticleSystem& ps, const std::vector<std::uint32_t>& targets,
                     ShareRange sources, double G, double softening, int threads, bool potential,
                     int part, int parts) {
  const ShareRange mine = block_share(targets.size(), part, parts);
  const std::uint32_t* first = targets.data() + mine.first;
  add_forces(
      ps, mine.last - mine.first, [first](std::size_t k) { return std::size_t(first[k]); }, sources,
      G, softening, threads, potential);
}

}  // namespace nbody
