#pragma once
// The device stepper's copies between the host's ParticleSystem and the resident state
// (device_stepper.cu, whose friend this is): upload() once at the start, download() for
// output, download_positions() for drawing; and migrate(), the bodies' moves between the
// ranks of a decomposed run (parallel/cuda/device_domain.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/host_download.cuh"
#include "gravity/cuda/force_scaling.cuh"
#include "gravity/direct_cuda.hpp"
#include "gravity/unit_scaling.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"
#include "parallel/cuda/device_domain.cuh"
#include "simulation/cuda/integration_kernels.cuh"

namespace nbody::cuda_resident {

struct StateCopies {
  template <class S>
  static void upload(S& s, ParticleSystem& ps) {
    using Real = typename S::RealType;
    const std::size_t n = ps.size();
    if (n > cuda_direct::kMaxBodies) {
      cuda_direct::check_capacity(
          n, std::is_same_v<Real, float> ? Precision::Float : Precision::Double);  // throws
    }
    // The potentials (phi()) when first computed; the radii only when a body has one or
    // collisions may give them (8 bytes a body each that most runs never read).
    s.radii_ = s.collisions_ || ps.has_radii();
    if (s.domain_forces_) s.radii_ = s.reducer_->max(s.radii_ ? 1 : 0) > 0;  // one layout
    for (auto* a : {&s.x_, &s.y_, &s.z_, &s.vx_, &s.vy_, &s.vz_, &s.ax_, &s.ay_, &s.az_, &s.m_})
      a->reserve(std::max<std::size_t>(n, 1), "state");
    if (s.radii_) s.r_.reserve(std::max<std::size_t>(n, 1), "state");
    s.id_.reserve(std::max<std::size_t>(n, 1), "state");
    if (s.domain_) s.work_.reserve(std::max<std::size_t>(n, 1), "work per body");
    if (s.integrator_.timestep == TimestepMode::Adaptive) s.blocks_.reserve(n);
    s.forces_->reserve(std::max<std::size_t>(n, 1));
    s.n_ = n;
    s.time_ = ps.time;
    s.tests_.set(ps.n_active, ps.test_particle_type);
    const std::size_t bytes = n * sizeof(double);
    const std::pair<const std::vector<double>*, double*> copies[] = {
        {&ps.x, s.x_.data()},    {&ps.y, s.y_.data()},
        {&ps.z, s.z_.data()},    {&ps.vx, s.vx_.data()},
        {&ps.vy, s.vy_.data()},  {&ps.vz, s.vz_.data()},
        {&ps.mass, s.m_.data()}, {&ps.radius, s.radii_ ? s.r_.data() : nullptr}};
    for (const auto& [from, to] : copies) {
      if (to == nullptr) continue;  // no radii held
      NBODY_CUDA_CHECK(cudaMemcpyAsync(to, from->data(), bytes, cudaMemcpyHostToDevice, s.stream_));
    }
    NBODY_CUDA_CHECK(cudaMemcpyAsync(s.id_.data(), ps.id.data(), n * sizeof(std::uint64_t),
                                     cudaMemcpyHostToDevice, s.stream_));
    s.accelerations_valid_ =
        ps.accelerations_valid() && ps.ax.size() == n && ps.ay.size() == n && ps.az.size() == n;
    // Uploaded accelerations are an evaluation of these bodies (a checkpoint's: the tree's
    // relative criterion opens after a restart as in the uninterrupted run).
    if (s.accelerations_valid_) s.evaluated_ = n;
    s.potentials_valid_ = false;  // evaluated again when asked for (never uploaded)
    const std::pair<const std::vector<double>*, double*> accelerations[] = {
        {&ps.ax, s.ax_.data()}, {&ps.ay, s.ay_.data()}, {&ps.az, s.az_.data()}};
    for (const auto& [from, to] : accelerations) {
      if (s.accelerations_valid_)
        NBODY_CUDA_CHECK(
            cudaMemcpyAsync(to, from->data(), bytes, cudaMemcpyHostToDevice, s.stream_));
    }
    // The scaling the per-call solvers would use for these bodies.
    double extent = std::isfinite(s.softening_) ? std::abs(s.softening_) : 0.0;
    for (const auto* v : {&ps.x, &ps.y, &ps.z}) extent = largest_finite_magnitude(*v, extent);
    s.set_position_exponent(extent);
    if (s.domain_forces_) s.position_exponent_ = s.reducer_->max(s.position_exponent_);
    s.mass_exponent_ = cuda_gravity::scale_exponent(largest_finite_magnitude(ps.mass, 0.0),
                                                    cuda_gravity::kMassExponentLimit);
    if (s.domain_forces_)
      s.mass_exponent_ = s.reducer_->max(s.mass_exponent_);  // one scaling for all
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s.stream_));  // the host arrays may change after this
  }

  template <class S>
  static void download(S& s, ParticleSystem& ps) {
    const std::size_t n = s.n_;
    // A decomposed run's share changes in number: grown arrays are replaced with room, not
    // copied (at 2^29 bodies a rank, vectors grown by resize() took 34 s of new memory).
    ps.resize_for_overwrite(n);
    const std::size_t bytes = n * sizeof(double);
    const std::pair<const double*, std::vector<double>*> copies[] = {
        {s.x_.data(), &ps.x},    {s.y_.data(), &ps.y},
        {s.z_.data(), &ps.z},    {s.vx_.data(), &ps.vx},
        {s.vy_.data(), &ps.vy},  {s.vz_.data(), &ps.vz},
        {s.m_.data(), &ps.mass}, {s.radii_ ? s.r_.data() : nullptr, &ps.radius},
        {s.ax_.data(), &ps.ax},  {s.ay_.data(), &ps.ay},
        {s.az_.data(), &ps.az}};
    if (n > 0) {
      if (!s.radii_) std::fill(ps.radius.begin(), ps.radius.end(), 0.0);
      std::vector<gpu::HostCopy> jobs;
      for (const auto& [from, to] : copies) {
        if (to == &ps.ax && !s.accelerations_valid_) break;
        if (from == nullptr) continue;  // no radii held: all 0
        jobs.push_back({to->data(), from, bytes});
      }
      jobs.push_back({ps.id.data(), s.id_.data(), n * sizeof(std::uint64_t)});
      if (s.potentials_valid_) jobs.push_back({ps.potential.data(), s.phi_.data(), bytes});
      s.host_download_.run(jobs, s.stream_);  // staged, the host side on threads
    }
    ps.time = s.time_;
    ps.n_active = s.tests_.n_active();
    ps.test_particle_type = s.tests_.type();
    if (s.accelerations_valid_) {
      ps.set_accelerations_valid();
    } else {
      ps.invalidate_accelerations();
    }
    if (s.potentials_valid_) {
      ps.set_potentials_valid();
    } else {
      ps.invalidate_potentials();
    }
  }

  template <class S>
  static void download_positions(S& s, std::vector<float>& xyz) {
    xyz.resize(3 * s.n_);
    if (s.n_ == 0) return;
    s.positions_.reserve(3 * s.n_, "positions for drawing");
    s.positions_host_.reserve(3 * s.n_);
    launch_positions_to_float(s.state(), s.positions_.data(), s.stream_);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(s.positions_host_.data(), s.positions_.data(),
                                     3 * s.n_ * sizeof(float), cudaMemcpyDeviceToHost, s.stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(s.stream_));
    std::memcpy(xyz.data(), s.positions_host_.data(), 3 * s.n_ * sizeof(float));
  }

  /// A decomposed run: every body to the rank that owns it (the state's arrays may grow, the
  /// bodies change in number and order), the trees' root box, the stats. `move` false: the
  /// root box alone, from where the bodies are (block steps' substeps keep their order).
  template <class S>
  static void migrate(S& s, bool move = true) {
    parallel::DeviceBodies b;
    b.doubles = {&s.x_,
                 &s.y_,
                 &s.z_,
                 &s.vx_,
                 &s.vy_,
                 &s.vz_,
                 &s.ax_,
                 &s.ay_,
                 &s.az_,
                 &s.m_,
                 s.radii_ ? &s.r_ : nullptr};
    b.id = &s.id_;
    b.work = &s.work_;
    b.key_room = s.domain_forces_->key_room(b.key_room_capacity);
    if (move) {
      s.domain_->update(b, s.n_, s.last_work_, s.stream_);
    } else {
      s.domain_->refresh_root_box(b, s.n_, s.stream_);
    }
    s.domain_->root_box(s.root_.lo, s.root_.hi);
    const double scale = std::ldexp(1.0, -s.position_exponent_);  // exact: the tree's units
    for (int k = 0; k < 3; ++k) s.root_.lo[k] *= scale, s.root_.hi[k] *= scale;
    if (!move) return;
    if (s.accelerations_valid_) s.evaluated_ = s.n_;  // a moved with its bodies
    s.potentials_valid_ = false;                      // phi did not
    if (s.integrator_.timestep == TimestepMode::Adaptive) s.blocks_.reserve(s.n_);
    const parallel::DomainStats& d = s.domain_->stats();
    DecompositionStats& sum = s.times_.decomposition;
    sum.recuts += d.recut ? 1 : 0;
    sum.migrated += d.migration.received;
    sum.bytes_sent += d.migration.bytes_sent;
    sum.imbalance = d.imbalance;
    sum.owned = d.bodies;
  }
};

}  // namespace nbody::cuda_resident
