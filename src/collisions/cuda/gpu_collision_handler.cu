// The GPU collision handler as a per-call CollisionHandler (tests, benchmarks, CPU-side
// callers): the bodies go to the device, through the engine, and back. `nbody run
// --device gpu` instead runs the engine on the resident state (simulation/cuda).
#include <cuda_runtime.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "collisions/collisions_cuda.hpp"
#include "collisions/cuda/collision_engine.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/launch.cuh"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody::collisions {
namespace {

using gpu::DeviceBuffer;

/// The bodies of a ParticleSystem in device memory.
class DeviceCopy {
 public:
  cuda_collisions::BodyArrays upload(const ParticleSystem& ps, cudaStream_t stream) {
    const std::size_t n = std::max<std::size_t>(ps.size(), 1);
    for (auto* a : {&x_, &y_, &z_, &vx_, &vy_, &vz_, &m_, &r_}) a->reserve(n, "collision bodies");
    id_.reserve(n, "collision ids");
    const std::pair<const std::vector<double>*, double*> copies[] = {
        {&ps.x, x_.data()},   {&ps.y, y_.data()},   {&ps.z, z_.data()},    {&ps.vx, vx_.data()},
        {&ps.vy, vy_.data()}, {&ps.vz, vz_.data()}, {&ps.mass, m_.data()}, {&ps.radius, r_.data()}};
    for (const auto& [from, to] : copies) {
      NBODY_CUDA_CHECK(cudaMemcpyAsync(to, from->data(), ps.size() * sizeof(double),
                                       cudaMemcpyHostToDevice, stream));
    }
    NBODY_CUDA_CHECK(cudaMemcpyAsync(id_.data(), ps.id.data(), ps.size() * sizeof(std::uint64_t),
                                     cudaMemcpyHostToDevice, stream));
    return {x_.data(),  y_.data(), z_.data(), vx_.data(), vy_.data(),
            vz_.data(), m_.data(), r_.data(), id_.data()};
  }
  void download(ParticleSystem& ps, std::size_t n, cudaStream_t stream) {
    if (n < ps.size()) {
      for (auto* v : {&ps.x, &ps.y, &ps.z, &ps.vx, &ps.vy, &ps.vz, &ps.ax, &ps.ay, &ps.az,
                      &ps.potential, &ps.mass, &ps.radius}) {
        if (v->size() > n) v->resize(n);
      }
      ps.id.resize(n);
      ps.invalidate_potentials();  // they included the removed bodies
    }
    const std::pair<const double*, std::vector<double>*> copies[] = {
        {x_.data(), &ps.x},   {y_.data(), &ps.y},   {z_.data(), &ps.z},    {vx_.data(), &ps.vx},
        {vy_.data(), &ps.vy}, {vz_.data(), &ps.vz}, {m_.data(), &ps.mass}, {r_.data(), &ps.radius}};
    for (const auto& [from, to] : copies) {
      NBODY_CUDA_CHECK(
          cudaMemcpyAsync(to->data(), from, n * sizeof(double), cudaMemcpyDeviceToHost, stream));
    }
    NBODY_CUDA_CHECK(cudaMemcpyAsync(ps.id.data(), id_.data(), n * sizeof(std::uint64_t),
                                     cudaMemcpyDeviceToHost, stream));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

 private:
  DeviceBuffer<double> x_, y_, z_, vx_, vy_, vz_, m_, r_;
  DeviceBuffer<std::uint64_t> id_;
};

cudaStream_t make_stream() {
  std::string reason;
  if (gpu_devices(&reason).empty()) throw input_error("--device", reason, "gpu");
  gpu::select_gpu();
  cudaStream_t s = nullptr;
  NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

class GpuCollisionHandler final : public CollisionHandler {
 public:
  explicit GpuCollisionHandler(const CollisionOptions& o)
      : stream_(make_stream()), options_(o), engine_(o) {}
  ~GpuCollisionHandler() override { cudaStreamDestroy(stream_); }
  GpuCollisionHandler(const GpuCollisionHandler&) = delete;
  GpuCollisionHandler& operator=(const GpuCollisionHandler&) = delete;

  [[nodiscard]] std::string name() const override {
    return fmt::format("{}-{}-gpu", to_string(options_.model), to_string(options_.search));
  }

  CollisionStats resolve(ParticleSystem& ps, const ContactGate& gate) override {
    if (ps.dim != options_.dim) {
      throw Error(
          fmt::format("collisions: the handler is set up for dim {} but the bodies have dim {}",
                      options_.dim, ps.dim));
    }
    std::size_t n = ps.size();
    cuda_collisions::BodyArrays b = copy_.upload(ps, stream_);
    if (gate.bins) {
      ids_before_ = ps.id;
      bins_.reserve(std::max<std::size_t>(n, 1), "collision gate");
      NBODY_CUDA_CHECK(
          cudaMemcpyAsync(bins_.data(), gate.bins, n, cudaMemcpyHostToDevice, stream_));
      b.bin = bins_.data();
      b.ready_bin = gate.ready_bin;
    }
    const CollisionStats stats = engine_.resolve(b, n, stream_);
    copy_.download(ps, n, stream_);
    if (gate.bins) return_gate(ps, gate);
    if (stats.contacts > 0 || stats.merges > 0) ps.invalidate_accelerations();
    return stats;
  }

 private:
  /// The bins with their contact marks back into the gate, at the bodies' places before
  /// the stage (merges removed bodies on the device; the survivors kept their order).
  void return_gate(const ParticleSystem& ps, const ContactGate& gate) {
    returned_.resize(ps.size());
    NBODY_CUDA_CHECK(cudaMemcpyAsync(returned_.data(), bins_.data(), ps.size(),
                                     cudaMemcpyDeviceToHost, stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::size_t j = 0;
    for (std::size_t i = 0; i < ps.size(); ++i, ++j) {
      while (ids_before_[j] != ps.id[i]) ++j;
      gate.bins[j] = returned_[i];
    }
  }

  cudaStream_t stream_;
  CollisionOptions options_;
  cuda_collisions::CollisionEngine engine_;
  DeviceCopy copy_;
  DeviceBuffer<std::uint8_t> bins_;  // the gate's bins (ContactGate)
  std::vector<std::uint8_t> returned_;
  std::vector<std::uint64_t> ids_before_;
};

}  // namespace

std::unique_ptr<CollisionHandler> make_gpu_collision_handler(const CollisionOptions& options) {
  return std::make_unique<GpuCollisionHandler>(options);
}

std::vector<IndexPair> find_contact_pairs_gpu(const ParticleSystem& ps, double skin,
                                              CollisionSearch search) {
  CollisionOptions o;
  o.model = CollisionModel::Bounce;
  o.search = search;
  o.dim = ps.dim;
  cudaStream_t stream = make_stream();
  std::vector<IndexPair> pairs;
  try {
    DeviceCopy copy;
    cuda_collisions::CollisionEngine engine(o);
    pairs = engine.find_pairs(copy.upload(ps, stream), ps.size(), skin, stream);
  } catch (...) {
    cudaStreamDestroy(stream);
    throw;
  }
  cudaStreamDestroy(stream);
  return pairs;
}

}  // namespace nbody::collisions
