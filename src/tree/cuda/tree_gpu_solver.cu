// The GPU tree as a per-call GravitySolver (nbody accuracy, nbody bench tree, tests):
// packs the bodies on the host (the direct sum's power-of-two scaling), copies them in,
// runs TreeForces, copies the accelerations out. `nbody run --device gpu` instead keeps
// everything on the device (simulation/cuda/cuda_stepper.cu).
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <string>
#include <type_traits>

#include "gravity/cuda/cuda_check.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "tree/tree_cuda.hpp"

namespace nbody {
namespace cuda_tree {
namespace {

/// Selects device 0 before the member that allocates on it is built.
int on_device_0(int dim) {
  NBODY_CUDA_CHECK(cudaSetDevice(gpu_in_use()));
  return dim;
}

template <class Real>
class TreeSolverCuda final : public GravitySolver {
 public:
  explicit TreeSolverCuda(const GravityOptions& o)
      : options_(o), forces_(on_device_0(o.dim), o.theta, o.quadrupole) {
    NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~TreeSolverCuda() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  TreeSolverCuda(const TreeSolverCuda&) = delete;
  TreeSolverCuda& operator=(const TreeSolverCuda&) = delete;

  [[nodiscard]] std::string name() const override {
    return forces_.name() + (std::is_same_v<Real, float> ? "-float" : "-double") +
           (options_.quadrupole ? "-quadrupole" : "");
  }
  [[nodiscard]] SolverStats stats() const override { return stats_; }
  /// Milliseconds per stage of the last evaluation.
  [[nodiscard]] std::vector<std::pair<std::string, double>> stage_ms() const { return forces_.stage_ms(); }

  void compute_accelerations(ParticleSystem& ps) override {
    const std::size_t n = ps.size();
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    stats_ = {};
    if (n == 0) {
      ps.set_accelerations_valid();
      return;
    }
    if (n >= (std::size_t(1) << 31)) {
      throw Error("GPU tree: N = " + std::to_string(n) + " bodies is too many (at most 2^31 - 1)");
    }
    forces_.reserve(n);
    host_bodies_.reserve(n);
    host_out_.reserve(n);
    const cuda_direct::Scaling scale = cuda_direct::kernel_scaling(ps, options_.softening);
    Vec4<Real>* hb = host_bodies_.data();
    const bool planar = options_.dim == 2;
    cuda_direct::pack_host_bodies(ps, scale, planar, hb);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(forces_.bodies(), hb, n * sizeof(Vec4<Real>), cudaMemcpyHostToDevice, stream_));
    forces_.launch(n, Real(options_.softening * scale.position), stream_);
    NBODY_CUDA_CHECK(cudaMemcpyAsync(host_out_.data(), forces_.out(), n * sizeof(Vec4<Real>), cudaMemcpyDeviceToHost, stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    cuda_direct::unpack_accelerations(host_out_.data(), options_.G, scale, planar, ps);
    for (const auto& [stage, ms] : forces_.stage_ms()) {
      (stage == "force" ? stats_.walk_seconds : stats_.build_seconds) += ms * 1e-3;
    }
    stats_.interactions_per_body = forces_.interactions_per_body();

    ps.set_accelerations_valid();
  }

 private:
  GravityOptions options_;
  TreeForces<Real> forces_;
  cudaStream_t stream_ = nullptr;
  cuda_direct::PinnedBuffer<Vec4<Real>> host_bodies_, host_out_;
  SolverStats stats_;
};

}  // namespace
}  // namespace cuda_tree

std::unique_ptr<GravitySolver> make_tree_cuda(const GravityOptions& o) {
  std::string reason;
  if (gpu_devices(&reason).empty()) throw Error("--device gpu: " + reason);
  if (o.precision == Precision::Double) return std::make_unique<cuda_tree::TreeSolverCuda<double>>(o);
  return std::make_unique<cuda_tree::TreeSolverCuda<float>>(o);
}

}  // namespace nbody
