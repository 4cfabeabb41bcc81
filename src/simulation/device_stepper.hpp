#pragma once
// A simulation that lives on a device (private to Simulation): the particle state, the
// force evaluation, the integrator and the diagnostics all stay in device memory; the
// state crosses the bus only in upload() and download(), and diagnostics() returns scalars.
// Plain C++ (no CUDA types): defined in cuda/cuda_stepper.cu when the build has CUDA, else
// in device_stepper_none.cpp, whose factory throws the "built without CUDA" nbody::Error.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/distributed.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "nbody/particles.hpp"

namespace nbody {

class DeviceStepper {
 public:
  virtual ~DeviceStepper() = default;
  /// E.g. "direct-cuda-fast-float-resident".
  [[nodiscard]] virtual std::string solver_name() const = 0;
  /// Copies positions, velocities, masses, the time and (when valid) the accelerations in.
  /// Replaces whatever the device held; N may change.
  virtual void upload(const ParticleSystem& ps) = 0;
  /// One step of the integrator on the device (first computing accelerations when none
  /// are valid), with the damping factor applied exactly where src/integrators/*.cpp do.
  virtual void step(double dt) = 0;
  /// Copies x, v, a, masses, radii, ids and the time out into ps, resized to the device's
  /// bodies (fewer than uploaded after merges).
  virtual void download(ParticleSystem& ps) = 0;
  /// Energies, momenta, centre of mass, computed on the device; only scalars come back.
  [[nodiscard]] virtual Diagnostics diagnostics() = 0;
  /// Seconds of force evaluation since the last call (for the "gravity" phase).
  [[nodiscard]] virtual double take_gravity_seconds() = 0;
  /// Seconds per stage of the force evaluation since the last call, in pipeline order
  /// (the tree: bbox, sort, build, summarise, force); empty for the direct sum.
  [[nodiscard]] virtual std::vector<std::pair<std::string, double>> take_stage_seconds() = 0;
  /// The collision stages since the last call, summed (contacts, merges, energy lost and
  /// seconds added; max_overlap of the latest); all zero without collisions.
  [[nodiscard]] virtual CollisionStats take_collision_stats() = 0;
  /// The simulated time and the number of bodies, without copying the state back.
  [[nodiscard]] virtual double time() const = 0;
  [[nodiscard]] virtual std::size_t size() const = 0;
};

/// The stepper for options.device == Gpu: the direct sum (options.kernel, .precision,
/// .block_size, .G, .softening) or the tree (options.algorithm "tree": .theta,
/// .quadrupole, .dim) with integrator.scheme and .damping. Throws nbody::Error
/// like make_gravity_solver() and make_integrator() for bad options, a build without CUDA
/// or no usable device.
/// With collisions.model != None the collision stage runs on the device too, right
/// before every force evaluation, as on the CPU path.
/// With a reducer of several parts, the forces are computed in shares and summed across
/// the processes (NCCL) right after the force kernels (distributed.hpp).
[[nodiscard]] std::unique_ptr<DeviceStepper> make_device_stepper(const GravityOptions& gravity,
                                                                 const IntegratorOptions& integrator,
                                                                 const CollisionOptions& collisions = {},
                                                                 std::shared_ptr<ForceReducer> reducer = nullptr);

}  // namespace nbody
