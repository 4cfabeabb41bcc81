#pragma once
// The per-call GPU solver (nbody accuracy, benchmarks, tests, the CPU-side Simulation with
// a GPU solver): a GravitySolver around any DeviceForces, the direct sum's and the tree's
// alike. Each call scales and packs the host bodies, copies them in, launches the forces,
// copies the accelerations (and, when asked, the potentials) out and multiplies by G.
// `nbody run --device gpu` instead keeps everything on the device
// (simulation/cuda/device_stepper.cu).
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/vec4.cuh"
#include "gravity/cuda/device_forces.cuh"
#include "nbody/gravity.hpp"

namespace nbody::cuda_gravity {

/// What the solver needs besides the forces.
struct SolverSetup {
  double G = 1.0;
  double softening = 0.0;
  bool planar = false;      // 2D: z packed as 0, az returned as 0
  std::string name_suffix;  // after the precision in name(), e.g. "-quadrupole"
};

/// name(): the forces' name, "-float" or "-double", then setup.name_suffix. stats(): the
/// forces' stage times (the "force" stage as walk_seconds, the others as build_seconds),
/// or for a one-kernel algorithm (no stages) the launch timed with CUDA events as
/// walk_seconds; interactions_per_body from the forces. Computes every body (the default
/// set_share: no shares). Forces that read the last accelerations (the tree's relative
/// criterion: DeviceForces::old_accelerations) get those in ps when this solver evaluated
/// the same number of bodies last, as the CPU tree.
template <class Real>
class DeviceForcesSolver final : public GravitySolver {
 public:
  /// `forces` must have been built on this process's GPU (gpu::select_gpu()), which stays
  /// current for the stream and events made here.
  DeviceForcesSolver(std::unique_ptr<DeviceForces<Real>> forces, SolverSetup setup);
  ~DeviceForcesSolver() override;
  DeviceForcesSolver(const DeviceForcesSolver&) = delete;
  DeviceForcesSolver& operator=(const DeviceForcesSolver&) = delete;

  [[nodiscard]] std::string name() const override;
  [[nodiscard]] SolverStats stats() const override { return stats_; }
  /// Milliseconds per stage of the last evaluation (empty for one-kernel algorithms).
  [[nodiscard]] std::vector<std::pair<std::string, double>> stage_ms() const {
    return forces_->stage_ms();
  }
  void compute_forces(ParticleSystem& ps, bool potential) override;
  /// The listed bodies alone (DeviceForces::launch_active); the others' entries and the
  /// validity flags stay as they were (GravitySolver::compute_forces_active).
  void compute_forces_active(ParticleSystem& ps, bool potential,
                             const std::vector<std::uint32_t>& active) override;

 private:
  /// compute_forces() (active null) or compute_forces_active().
  void evaluate(ParticleSystem& ps, bool potential, const std::vector<std::uint32_t>* active);
  /// |a| / G of ps's accelerations, in the kernels' scaled units (times 1 / acceleration
  /// scale), into forces_->old_accelerations() when the forces want them.
  void offer_old_accelerations(const ParticleSystem& ps, double acceleration_scale);

  std::unique_ptr<DeviceForces<Real>> forces_;
  SolverSetup setup_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  gpu::PinnedBuffer<gpu::Vec4<Real>> host_bodies_, host_out_;
  gpu::PinnedBuffer<Real> host_a_old_;  // offer_old_accelerations
  std::size_t evaluated_ = 0;           // bodies of the last evaluation
  gpu::DeviceBuffer<unsigned> active_;  // compute_forces_active's list
  SolverStats stats_;
};

extern template class DeviceForcesSolver<float>;
extern template class DeviceForcesSolver<double>;

}  // namespace nbody::cuda_gravity
