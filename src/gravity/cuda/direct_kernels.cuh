#pragma once
// CUDA direct-sum kernels (naive, tiled, fast) and their launchers, and DirectForces, the
// direct sum behind the DeviceForces interface. Only .cu files include this. Every kernel
// evaluates nbody::accumulate_pair_acceleration (physics/pair_force.hpp), or its
// *_potential version when the potentials are asked for (gravity/cuda/pair_terms.cuh),
// with a device math policy; the formula lives there alone.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/vec4.cuh"
#include "gravity/cuda/device_forces.cuh"
#include "nbody/gravity.hpp"

namespace nbody::cuda_direct {

enum class Kernel { Naive, Tiled, Fast };

/// Bodies each thread of the fast kernel owns (register blocking: every shared-memory
/// load of a j-body feeds this many interactions): 4 up to kFastMaxBlockForK4 threads per
/// block, else 2 (at 1024 threads 64 registers per thread is all there is). Measured on an
/// H200 at N = 2^20: float with 4 at block 512 gives 2.06e12 kernel interactions/s against
/// 1.97e12 with 2; double with 4 at block 512 is slower (0.72e12 against 0.80e12), so
/// double keeps 4 only up to 256.
template <class Real>
inline constexpr int kFastMaxBlockForK4 = sizeof(Real) == 4 ? 512 : 256;
template <class Real>
inline constexpr int fast_bodies_per_thread(int block) {
  return block <= kFastMaxBlockForK4<Real> ? 4 : 2;
}

/// What one launch needs. bodies: n_padded entries (padding has mass 0).
template <class Real>
struct LaunchArgs {
  const gpu::Vec4<Real>* bodies = nullptr;
  unsigned n = 0;         // real bodies
  unsigned n_padded = 0;  // bodies in the array: multiple of the tile (tiled, fast)
  Real eps2 = 0;
  int block = 256;
  unsigned splits = 1;                 // fast: j-range split over this many blocks per i-block
  unsigned j_per_split = 0;            // fast: bodies per split (multiple of block)
  gpu::Vec4<Real>* partial = nullptr;  // fast, splits > 1: splits * n_padded entries
  gpu::Vec4<Real>* out = nullptr;      // n_padded accelerations (per unit G, scaled units)
  bool potential = false;              // also the potentials, in out[i].w
};

/// Launches the kernel (and the fast kernel's reduction) on `stream`; checks each launch
/// and throws nbody::Error naming the kernel on failure.
template <class Real>
void launch(Kernel kernel, const LaunchArgs<Real>& args, cudaStream_t stream);

/// Largest number of fast-kernel blocks resident at once on the current device for this
/// block size (for choosing the number of j-splits).
template <class Real>
int fast_blocks_per_sm(int block);

// ---- Active targets (hierarchical time steps, DirectForces::launch_active) ---------------

/// Threads per block of the active-target kernel (one target each, sources in tiles of this
/// many through shared memory).
inline constexpr int kActiveBlock = 256;

/// What one active-target launch needs.
template <class Real>
struct ActiveArgs {
  const gpu::Vec4<Real>* bodies = nullptr;  // the sources: bodies [0, n)
  unsigned n = 0;
  const unsigned* targets = nullptr;  // body indices (device), n_targets of them
  unsigned n_targets = 0;
  Real eps2 = 0;
  bool fast_math = true;               // the fast kernel's rsqrt (else the tiled kernel's)
  unsigned splits = 1;                 // the sources split over this many blocks per target block
  unsigned j_per_split = 0;            // sources per split (a multiple of kActiveBlock)
  gpu::Vec4<Real>* partial = nullptr;  // splits > 1: splits * n_targets entries
  gpu::Vec4<Real>* out = nullptr;      // out[targets[k]]; other entries untouched
  bool potential = false;              // also the potentials, in .w
};

/// Launches the active-target kernel (and, with splits, its in-order reduction) on `stream`.
template <class Real>
void launch_active(const ActiveArgs<Real>& args, cudaStream_t stream);

/// Blocks of the active-target kernel resident at once per SM (for the split plan).
template <class Real>
int active_blocks_per_sm();

/// out[active[k]] = 0 for k in [0, n_active) outside [begin, end): the active bodies of the
/// other processes' shares.
template <class Real>
void launch_zero_others(gpu::Vec4<Real>* out, const unsigned* active, unsigned n_active,
                        unsigned begin, unsigned end, cudaStream_t stream);

// ---- The fast kernel for large N: each pair once (direct_mutual.cu) ---------------------

/// One block's work: band `band` (kMutualBand i-bodies from band * kMutualBand) against
/// the j-bodies [j_begin, j_end) after it, or (kind 1) against itself.
struct MutualTask {
  unsigned band, j_begin, j_end, kind;
};
/// Warps per block, i-bodies per lane, j-bodies per lane. Double carries half the
/// j-bodies: its 64-bit values need two shuffles each and twice the registers.
template <class Real>
inline constexpr int kMutualWarps = sizeof(Real) == 4 ? 8 : 4;
template <class Real>
inline constexpr int kMutualKI = 4;
template <class Real>
inline constexpr int kMutualKJ = sizeof(Real) == 4 ? 4 : 2;
template <class Real>
inline constexpr unsigned kMutualBand = unsigned(kMutualWarps<Real> * 32 * kMutualKI<Real>);
template <class Real>
inline constexpr unsigned kMutualTile = unsigned(32 * kMutualKJ<Real>);
/// From this many bodies the fast kernel evaluates each pair once. Measured on an H200
/// (float, kernel time, 16384 / 32768 / 65536 / 131072 bodies): 2.08 / 2.38 / 2.57 /
/// 2.63e12 interactions/s against 1.84 / 1.99 / 2.04 / 2.05e12 for the one-sided kernel
/// with j-splits; smaller N were not measured and keep the one-sided kernel.
inline constexpr std::size_t kMutualMinBodies = 16384;

/// The tasks for n_padded (a multiple of kMutualBand) bodies, largest first.
template <class Real>
std::vector<MutualTask> plan_mutual(unsigned n_padded, std::size_t concurrent_blocks);
/// Adds the accelerations into out (which must be zero: n_padded entries), and with
/// `potential` the potentials into out[i].w.
template <class Real>
void launch_mutual(const gpu::Vec4<Real>* bodies, const MutualTask* tasks, unsigned n_tasks,
                   Real eps2, bool potential, gpu::Vec4<Real>* out, cudaStream_t stream);
template <class Real>
int mutual_blocks_per_sm();

// ---- The kernel choice and DirectForces (direct_cuda.cu) ----------------------------------

[[nodiscard]] const char* kernel_name(Kernel k);

/// The kernel and threads per block that GravityOptions::kernel and ::block_size ask for
/// (block 0 = the kernel's default); throws nbody::Error naming the option when invalid.
/// each_pair_once: the fast kernel may take the each-pair-once path (direct_mutual.cu,
/// fixed 256 threads) for N >= kMutualMinBodies; false when --block-size was given, so
/// that the block size asked for is the one that runs (the block-size sweeps), and false
/// when `deterministic` is set: the each-pair-once kernel adds its partial sums with
/// floating-point atomics, so its last bits vary from run to run; the one-sided kernels sum
/// each body's forces in a fixed order.
struct KernelChoice {
  Kernel kernel = Kernel::Fast;
  int block = 512;
  bool each_pair_once = true;
};
[[nodiscard]] KernelChoice choose_kernel(ForceKernel kernel, int block_size,
                                         bool deterministic = false);

/// The force evaluation on bodies already in device memory, in the kernels' layout:
/// owns the body array (padded to whole tiles, padding with mass 0), the output and the
/// fast kernel's partial sums, and plans the fast kernel's j-splits (about one full wave
/// of the GPU). The per-call solver (DeviceForcesSolver) fills bodies() from the host; the
/// resident stepper fills it on the device.
template <class Real>
class DirectForces final : public cuda_gravity::DeviceForces<Real> {
 public:
  /// Needs the current device set (queries its SM count and the fast kernel's occupancy).
  /// each_pair_once: see KernelChoice.
  DirectForces(Kernel kernel, int block, bool each_pair_once = true);
  /// Bodies the arrays hold for n bodies: a whole number of tiles (of bands when mutual).
  [[nodiscard]] std::size_t padded(std::size_t n) const override;
  /// Whether n bodies go through the each-pair-once kernel (fast kernel, large N).
  [[nodiscard]] bool mutual(std::size_t n) const;
  /// Makes room for n bodies (bodies(), out(): padded(n) entries).
  void reserve(std::size_t n) override;
  [[nodiscard]] gpu::Vec4<Real>* bodies() const override { return bodies_.data(); }
  [[nodiscard]] gpu::Vec4<Real>* out() const override { return out_.data(); }
  [[nodiscard]] std::string name() const override {
    return std::string("direct-cuda-") + kernel_name(kernel_);
  }
  /// Throws nbody::Error above kMaxBodies (direct_cuda.hpp: 32-bit indices).
  void check_size(std::size_t n) const override;
  [[nodiscard]] Kernel kernel() const { return kernel_; }
  [[nodiscard]] int block() const { return block_; }
  /// Launches the kernel for n bodies (bodies() filled, padding included) on `stream`:
  /// out()[i] = the acceleration of body i per unit G, in scaled units, and with
  /// `potential` its potential in .w (DeviceForces::launch). eps = scaled softening.
  void launch(std::size_t n, Real eps, cudaStream_t stream, bool potential) override;
  /// The active bodies alone (DeviceForces::launch_active): one thread per active body,
  /// every source through shared-memory tiles, the sources split over several blocks (and
  /// the partial sums added in split order: deterministic) when the active bodies fill
  /// too few blocks for the GPU. With shares: a contiguous slice of the active list.
  void launch_active(std::size_t n, Real eps, cudaStream_t stream, bool potential,
                     const unsigned* active, std::size_t n_active) override;
  /// Several processes: each launches every parts-th task of the each-pair-once plan
  /// (largest first, so the shares are even), at any N; partial sums of a body come from
  /// several processes. The one-sided kernels do not split (false).
  bool set_share(int part, int parts) override {
    if (parts > 1 && !(kernel_ == Kernel::Fast && each_pair_once_)) return false;
    part_ = part;
    parts_ = parts;
    planned_for_ = 0;  // re-plan with this share
    return true;
  }
  /// n of the last launch: every body meets every body, whichever kernel (each pair once
  /// or one-sided) computes the sum.
  [[nodiscard]] double interactions_per_body() const override { return double(launched_); }

 private:
  Kernel kernel_;
  int block_;
  int part_ = 0, parts_ = 1;
  int sms_ = 1;
  int fast_blocks_per_sm_ = 1;
  int mutual_blocks_per_sm_ = 1;
  int active_blocks_per_sm_ = 1;
  bool each_pair_once_ = true;
  gpu::DeviceBuffer<gpu::Vec4<Real>> bodies_, out_, partial_;
  gpu::DeviceBuffer<gpu::Vec4<Real>> active_partial_;  // launch_active's split sums
  gpu::DeviceBuffer<MutualTask> tasks_;
  std::size_t planned_for_ = 0;  // n_padded of the tasks in tasks_ (0: none)
  unsigned n_tasks_ = 0;
  std::size_t launched_ = 0;  // n of the last launch
};

}  // namespace nbody::cuda_direct
