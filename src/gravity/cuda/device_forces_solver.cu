// DeviceForcesSolver (device_forces_solver.cuh): the host side of the per-call GPU
// solvers. Device buffers (the forces') and pinned host buffers are kept between calls,
// grown and never shrunk.
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>

#include "core/cuda/cuda_check.cuh"
#include "gravity/cuda/device_forces_solver.cuh"
#include "gravity/cuda/force_scaling.cuh"
#include "gravity/unit_scaling.hpp"

namespace nbody::cuda_gravity {

namespace {

using gpu::Vec4;

/// The power-of-two factors of a system (unit_scaling.hpp: the CPU SIMD solver's).
Scaling kernel_scaling(const ParticleSystem& ps, double softening) {
  double extent = std::isfinite(softening) ? std::abs(softening) : 0.0;
  for (const auto* v : {&ps.x, &ps.y, &ps.z}) extent = largest_finite_magnitude(*v, extent);
  return power_of_two_scaling(extent, largest_finite_magnitude(ps.mass, 0.0));
}

/// ps's (x, y, z, m) scaled into out[0, n), z = 0 when planar.
template <class Real>
void pack_host_bodies(const ParticleSystem& ps, const Scaling& s, bool planar, Vec4<Real>* out) {
  for (std::size_t i = 0; i < ps.size(); ++i) {
    out[i] = {Real(ps.x[i] * s.position), Real(ps.y[i] * s.position),
              planar ? Real(0) : Real(ps.z[i] * s.position), Real(ps.mass[i] * s.mass)};
  }
}

/// ps.a = G * in * s.acceleration for body i (az = 0 when planar), and with `potential`
/// ps.potential = G * in.w * s.potential.
template <class Real>
void unpack_body(const Vec4<Real>* in, double G, const Scaling& s, bool planar, bool potential,
                 std::size_t i, ParticleSystem& ps) {
  ps.ax[i] = G * double(in[i].x) * s.acceleration;
  ps.ay[i] = G * double(in[i].y) * s.acceleration;
  ps.az[i] = planar ? 0.0 : G * double(in[i].z) * s.acceleration;
  if (potential) ps.potential[i] = G * double(in[i].w) * s.potential;
}

}  // namespace

template <class Real>
DeviceForcesSolver<Real>::DeviceForcesSolver(std::unique_ptr<DeviceForces<Real>> forces,
                                             SolverSetup setup)
    : forces_(std::move(forces)), setup_(std::move(setup)) {
  NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  NBODY_CUDA_CHECK(cudaEventCreate(&start_));
  NBODY_CUDA_CHECK(cudaEventCreate(&stop_));
}

template <class Real>
DeviceForcesSolver<Real>::~DeviceForcesSolver() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

template <class Real>
std::string DeviceForcesSolver<Real>::name() const {
  return forces_->name() + (std::is_same_v<Real, float> ? "-float" : "-double") +
         setup_.name_suffix;
}

template <class Real>
void DeviceForcesSolver<Real>::compute_forces(ParticleSystem& ps, bool potential) {
  evaluate(ps, potential, nullptr);
}

template <class Real>
void DeviceForcesSolver<Real>::compute_forces_active(ParticleSystem& ps, bool potential,
                                                     const std::vector<std::uint32_t>& active) {
  evaluate(ps, potential, &active);
}

template <class Real>
void DeviceForcesSolver<Real>::evaluate(ParticleSystem& ps, bool potential,
                                        const std::vector<std::uint32_t>* active) {
  const std::size_t n = ps.size();
  // The tree's relative criterion: as the CPU tree (tree_solver.cpp), ps's accelerations
  // when this solver evaluated these bodies last or ps says they are theirs (a checkpoint).
  const bool old_accelerations = (evaluated_ == n || ps.accelerations_valid()) &&
                                 ps.ax.size() == n && ps.ay.size() == n && ps.az.size() == n;
  for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
  if (potential) ps.potential.resize(n);
  stats_ = {};
  if (active && (n == 0 || active->empty())) return;
  // Set valid again below only when this call computes them.
  if (!active) ps.invalidate_potentials();
  if (n == 0) {
    evaluated_ = 0;
    if (potential) {
      ps.potential.clear();
      ps.set_potentials_valid();
    }
    ps.set_accelerations_valid();
    return;
  }
  forces_->check_size(n);  // throws
  const std::size_t padded = forces_->padded(n);
  forces_->reserve(n);
  host_bodies_.reserve(padded);
  host_out_.reserve(padded);

  const Scaling scale = kernel_scaling(ps, setup_.softening);
  Vec4<Real>* hb = host_bodies_.data();
  pack_host_bodies(ps, scale, setup_.planar, hb);
  for (std::size_t i = n; i < padded; ++i) {  // padding: on the last body, mass 0
    hb[i] = hb[n - 1];
    hb[i].w = Real(0);
  }
  const Real eps = Real(setup_.softening * scale.position);

  NBODY_CUDA_CHECK(cudaMemcpyAsync(forces_->bodies(), hb, padded * sizeof(Vec4<Real>),
                                   cudaMemcpyHostToDevice, stream_));
  if (old_accelerations) offer_old_accelerations(ps, scale.acceleration);
  if (active) {
    active_.reserve(active->size(), "active bodies");
    NBODY_CUDA_CHECK(cudaMemcpyAsync(active_.data(), active->data(),
                                     active->size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice,
                                     stream_));
  }
  NBODY_CUDA_CHECK(cudaEventRecord(start_, stream_));
  if (active) {
    forces_->launch_active(n, eps, stream_, potential, active_.data(), active->size());
  } else {
    forces_->launch(n, eps, stream_, potential);
  }
  NBODY_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  NBODY_CUDA_CHECK(cudaMemcpyAsync(host_out_.data(), forces_->out(), n * sizeof(Vec4<Real>),
                                   cudaMemcpyDeviceToHost, stream_));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (active) {
    for (const std::uint32_t i : *active)
      unpack_body(host_out_.data(), setup_.G, scale, setup_.planar, potential, i, ps);
  } else {
    for (std::size_t i = 0; i < n; ++i)
      unpack_body(host_out_.data(), setup_.G, scale, setup_.planar, potential, i, ps);
  }

  const auto stages = forces_->stage_ms();
  if (stages.empty()) {  // one kernel (group): the timed launch is the walk
    float ms = 0;
    NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    stats_.walk_seconds = double(ms) * 1e-3;
  }
  for (const auto& [stage, ms] : stages) {
    (stage == "force" ? stats_.walk_seconds : stats_.build_seconds) += ms * 1e-3;
  }
  stats_.interactions_per_body = forces_->interactions_per_body();
  evaluated_ = n;
  if (active) return;  // the flags stay as they were
  ps.set_accelerations_valid();
  if (potential) ps.set_potentials_valid();
}

template <class Real>
void DeviceForcesSolver<Real>::offer_old_accelerations(const ParticleSystem& ps,
                                                       double acceleration_scale) {
  const std::size_t n = ps.size();
  Real* device = forces_->old_accelerations(n);
  if (!device) return;
  host_a_old_.reserve(n);
  Real* host = host_a_old_.data();
  const double to_scaled = 1.0 / (std::abs(setup_.G) * acceleration_scale);
  for (std::size_t i = 0; i < n; ++i) {
    host[i] = Real(std::sqrt(ps.ax[i] * ps.ax[i] + ps.ay[i] * ps.ay[i] + ps.az[i] * ps.az[i]) *
                   to_scaled);
  }
  NBODY_CUDA_CHECK(
      cudaMemcpyAsync(device, host, n * sizeof(Real), cudaMemcpyHostToDevice, stream_));
}

template class DeviceForcesSolver<float>;
template class DeviceForcesSolver<double>;

}  // namespace nbody::cuda_gravity
