// The CUDA direct sum's host side: the kernel choice (choose_kernel), DirectForces (the
// launch plan: padding, the fast kernel's j-splits, device buffers), shared by the per-call
// solver and the device-resident stepper (simulation/cuda/device_stepper.cu), and
// make_direct_cuda, the per-call solver: DeviceForcesSolver (device_forces_solver.cuh)
// around DirectForces, timing the kernels with CUDA events (stats().walk_seconds).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/launch.cuh"
#include "gravity/cuda/device_forces_solver.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "gravity/direct_cuda.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"

namespace nbody {
namespace cuda_direct {

using gpu::Vec4;

const char* kernel_name(Kernel k) {
  return k == Kernel::Naive ? "naive" : k == Kernel::Tiled ? "tiled" : "fast";
}

namespace {

/// Default threads per block: 256 for naive and tiled (Nyland, Harris, Prins, "Fast N-Body
/// Simulation with CUDA", GPU Gems 3); 512 for fast, best in the block-size sweeps on an
/// H200 (float and double, N = 16384 and 262144).
int default_block(Kernel k) {
  return k == Kernel::Fast ? 512 : 256;
}

bool power_of_two(int v) {
  return v > 0 && (v & (v - 1)) == 0;
}

}  // namespace

KernelChoice choose_kernel(ForceKernel name, int block_size, bool deterministic) {
  Kernel kernel = Kernel::Fast;
  if (name == ForceKernel::Naive) {
    kernel = Kernel::Naive;
  } else if (name == ForceKernel::Tiled) {
    kernel = Kernel::Tiled;
  } else if (name != ForceKernel::Fast) {
    throw Error("--kernel " + std::string(to_string(name)) +
                ": not a GPU direct-sum kernel (GPU kernels: naive, tiled, fast)");
  }
  const int block = block_size == 0 ? default_block(kernel) : block_size;
  const bool each_pair_once = block_size == 0 && !deterministic;
  if (kernel == Kernel::Naive) {
    if (block < 1 || block > 1024) {
      throw Error("--block-size " + std::to_string(block_size) +
                  ": the naive kernel takes 1 to 1024 threads per block (0 = its default, 256)");
    }
  } else if (!power_of_two(block) || block < 8 || block > 1024) {
    throw Error("--block-size " + std::to_string(block_size) + ": the " + kernel_name(kernel) +
                " kernel needs a power of two from 8 to 1024 threads per block (0 = its default, " +
                std::to_string(default_block(kernel)) + ")");
  }
  return {kernel, block, each_pair_once};
}

// ---- DirectForces: the launch plan shared by the solver and the resident stepper -------

template <class Real>
DirectForces<Real>::DirectForces(Kernel kernel, int block, bool each_pair_once)
    : kernel_(kernel), block_(block), each_pair_once_(each_pair_once) {
  int device = 0;
  NBODY_CUDA_CHECK(cudaGetDevice(&device));
  NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device));
  if (kernel_ == Kernel::Fast) {
    fast_blocks_per_sm_ = fast_blocks_per_sm<Real>(block_);
    mutual_blocks_per_sm_ = mutual_blocks_per_sm<Real>();
  }
  active_blocks_per_sm_ = active_blocks_per_sm<Real>();
}

template <class Real>
bool DirectForces<Real>::mutual(std::size_t n) const {
  return kernel_ == Kernel::Fast && each_pair_once_ && (n >= kMutualMinBodies || parts_ > 1);
}

template <class Real>
std::size_t DirectForces<Real>::padded(std::size_t n) const {
  if (mutual(n)) return (n + kMutualBand<Real> - 1) / kMutualBand<Real> * kMutualBand<Real>;
  const std::size_t unit = kernel_ == Kernel::Naive ? 1
                           : kernel_ == Kernel::Tiled
                               ? std::size_t(block_)
                               : std::size_t(block_) * fast_bodies_per_thread<Real>(block_);
  return (n + unit - 1) / unit * unit;
}

namespace {
/// Splits of the j-range (fast): enough blocks for about one full wave of the GPU.
struct SplitPlan {
  unsigned splits = 1;
  std::size_t j_per_split = 0;
};
SplitPlan plan_splits(Kernel kernel, int block, int bodies_per_thread, std::size_t padded, int sms,
                      int blocks_per_sm) {
  SplitPlan plan{1, padded};
  if (kernel != Kernel::Fast) return plan;
  const std::size_t i_blocks = padded / (std::size_t(block) * std::size_t(bodies_per_thread));
  const std::size_t tiles = padded / std::size_t(block);
  const std::size_t wanted = std::size_t(sms) * std::size_t(blocks_per_sm);
  std::size_t s = std::clamp<std::size_t>((wanted + i_blocks - 1) / i_blocks, 1, tiles);
  // The last wave: i_blocks * s blocks over `wanted` slots leave the last wave partly idle
  // (N = 2^20, block 512: 3.88 waves, 3% lost). A few more splits can fill it; each split
  // costs one more partial-sum pass over N bodies, negligible at this size.
  auto wave_fill = [&](std::size_t splits) {
    const double waves = double(i_blocks * splits) / double(wanted);
    return waves / std::ceil(waves);
  };
  for (std::size_t c = s + 1; c <= std::min(tiles, s + 12); ++c) {
    if (wave_fill(c) > wave_fill(s) + 0.01) s = c;
  }
  const std::size_t tiles_per_split = (tiles + s - 1) / s;
  s = (tiles + tiles_per_split - 1) / tiles_per_split;
  plan.splits = unsigned(s);
  plan.j_per_split = tiles_per_split * std::size_t(block);
  return plan;
}
}  // namespace

template <class Real>
void DirectForces<Real>::reserve(std::size_t n) {
  const std::size_t p = padded(n);
  bodies_.reserve(p, "bodies");
  out_.reserve(p, "accelerations");
  if (mutual(n)) return;
  const SplitPlan plan = plan_splits(kernel_, block_, fast_bodies_per_thread<Real>(block_), p, sms_,
                                     fast_blocks_per_sm_);
  if (plan.splits > 1) partial_.reserve(std::size_t(plan.splits) * p, "partial sums");
}

template <class Real>
void DirectForces<Real>::launch(std::size_t n, Real eps, cudaStream_t stream, bool potential) {
  launched_ = n;
  if (n == 0) return;
  const std::size_t p = padded(n);
  if (mutual(n)) {
    if (planned_for_ != p) {
      std::vector<MutualTask> tasks =
          plan_mutual<Real>(unsigned(p), std::size_t(sms_) * std::size_t(mutual_blocks_per_sm_));
      if (parts_ > 1) {  // this process's tasks: every parts-th of the largest-first list
        std::vector<MutualTask> mine;
        for (std::size_t k = std::size_t(part_); k < tasks.size(); k += std::size_t(parts_))
          mine.push_back(tasks[k]);
        tasks.swap(mine);
      }
      tasks_.reserve(std::max<std::size_t>(tasks.size(), 1), "kernel tasks");
      // On the launch's stream. A cudaMemcpy from pageable memory may return before its data
      // reach the device, and the launch's stream (non-blocking) does not wait for the legacy
      // one: a kernel that ran first read zeroed tasks and summed nothing (every acceleration
      // exactly 0, once in a test suite of processes sharing a GPU). An async copy from
      // pageable memory is staged before it returns, so `tasks` may go.
      NBODY_CUDA_CHECK(cudaMemcpyAsync(tasks_.data(), tasks.data(),
                                       tasks.size() * sizeof(MutualTask), cudaMemcpyHostToDevice,
                                       stream));
      planned_for_ = p;
      n_tasks_ = unsigned(tasks.size());
    }
    NBODY_CUDA_CHECK(cudaMemsetAsync(out_.data(), 0, p * sizeof(Vec4<Real>), stream));
    if (n_tasks_ > 0)
      launch_mutual<Real>(bodies_.data(), tasks_.data(), n_tasks_, eps * eps, potential,
                          out_.data(), stream);
    return;
  }
  const SplitPlan plan = plan_splits(kernel_, block_, fast_bodies_per_thread<Real>(block_), p, sms_,
                                     fast_blocks_per_sm_);
  LaunchArgs<Real> args;
  args.bodies = bodies_.data();
  args.n = unsigned(n);
  args.n_padded = unsigned(p);
  args.eps2 = eps * eps;
  args.block = block_;
  args.splits = plan.splits;
  args.j_per_split = unsigned(plan.j_per_split);
  args.partial = partial_.data();
  args.out = out_.data();
  args.potential = potential;
  cuda_direct::launch<Real>(kernel_, args, stream);
}

template <class Real>
void DirectForces<Real>::launch_active(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                                       const unsigned* active, std::size_t n_active) {
  launched_ = n;
  if (n == 0 || n_active == 0) return;
  // This process's slice of the active list, zeros at the others' (exchange() sums them).
  std::size_t begin = 0, end = n_active;
  if (parts_ > 1) {
    begin = n_active * std::size_t(part_) / std::size_t(parts_);
    end = n_active * std::size_t(part_ + 1) / std::size_t(parts_);
    launch_zero_others<Real>(out_.data(), active, unsigned(n_active), unsigned(begin),
                             unsigned(end), stream);
  }
  const std::size_t m = end - begin;
  if (m == 0) return;
  // Splits of the sources: about one full wave of blocks when the targets fill fewer.
  const std::size_t tiles = (n + kActiveBlock - 1) / kActiveBlock;
  const std::size_t target_blocks = (m + kActiveBlock - 1) / kActiveBlock;
  const std::size_t wanted = std::size_t(sms_) * std::size_t(active_blocks_per_sm_);
  std::size_t splits =
      std::clamp<std::size_t>((wanted + target_blocks - 1) / target_blocks, 1, tiles);
  const std::size_t tiles_per_split = (tiles + splits - 1) / splits;
  splits = (tiles + tiles_per_split - 1) / tiles_per_split;
  ActiveArgs<Real> args;
  args.bodies = bodies_.data();
  args.n = unsigned(n);
  args.targets = active + begin;
  args.n_targets = unsigned(m);
  args.eps2 = eps * eps;
  args.fast_math = kernel_ == Kernel::Fast;
  args.splits = unsigned(splits);
  args.j_per_split = unsigned(tiles_per_split * kActiveBlock);
  if (splits > 1) {
    active_partial_.reserve(splits * m, "partial sums of the active bodies");
    args.partial = active_partial_.data();
  }
  args.out = out_.data();
  args.potential = potential;
  cuda_direct::launch_active<Real>(args, stream);
}

template <class Real>
void DirectForces<Real>::check_size(std::size_t n) const {
  if (n > kMaxBodies)
    check_capacity(n, std::is_same_v<Real, float> ? Precision::Float : Precision::Double);
}

template class DirectForces<float>;
template class DirectForces<double>;

void check_capacity(std::size_t n, Precision precision) {
  if (n > kMaxBodies) {
    throw Error("CUDA direct sum: N = " + std::to_string(n) +
                " bodies is too many (at most 2^31 = " + std::to_string(kMaxBodies) +
                ": the kernels index bodies with 32 bits)");
  }
  const std::size_t per_body =
      precision == Precision::Float ? 2 * sizeof(Vec4<float>) : 2 * sizeof(Vec4<double>);
  const std::size_t needed = n * per_body;
  std::size_t free = 0, total = 0;
  NBODY_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (needed > free) {
    throw Error("CUDA direct sum: N = " + std::to_string(n) + " bodies needs " +
                gpu::bytes_text(needed) + " of GPU memory, the device has " +
                gpu::bytes_text(free) + " free of " + gpu::bytes_text(total));
  }
}

void try_device_allocation(std::size_t bytes) {
  gpu::select_gpu();
  gpu::device_release(gpu::device_allocate(bytes, "test buffer"));
}

}  // namespace cuda_direct

std::unique_ptr<GravitySolver> make_direct_cuda(const GravityOptions& o) {
  const cuda_direct::KernelChoice choice =
      cuda_direct::choose_kernel(o.kernel, o.block_size, o.deterministic);
  std::string reason;
  if (gpu_devices(&reason).empty()) throw input_error("--device", reason, "gpu");
  auto make = [&](auto real) -> std::unique_ptr<GravitySolver> {
    using Real = decltype(real);
    gpu::select_gpu();  // before DirectForces queries the device
    auto forces = std::make_unique<cuda_direct::DirectForces<Real>>(choice.kernel, choice.block,
                                                                    choice.each_pair_once);
    return std::make_unique<cuda_gravity::DeviceForcesSolver<Real>>(
        std::move(forces), cuda_gravity::SolverSetup{o.G, o.softening});
  };
  if (o.precision == Precision::Float) return make(float{});
  return make(double{});
}

}  // namespace nbody
