#pragma once
// CUDA direct-sum kernels (naive, tiled, fast) and their launchers. Only .cu files
// include this. Every kernel evaluates nbody::accumulate_pair_acceleration
// (physics/pair_force.hpp) with a device math policy; the formula lives there alone.
#include "gravity/cuda/cuda_check.cuh"
#include "gravity/cuda/device_forces.cuh"
#include "gravity/cuda/vec4.cuh"
#include "nbody/build_info.hpp"
#include "nbody/gravity.hpp"
#include "nbody/particles.hpp"
#include <cuda_runtime.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

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
  const Vec4<Real>* bodies = nullptr;
  unsigned n = 0;         // real bodies
  unsigned n_padded = 0;  // bodies in the array: multiple of the tile (tiled, fast)
  Real eps2 = 0;
  int block = 256;
  unsigned splits = 1;           // fast: j-range split over this many blocks per i-block
  unsigned j_per_split = 0;      // fast: bodies per split (multiple of block)
  Vec4<Real>* partial = nullptr; // fast, splits > 1: splits * n_padded entries
  Vec4<Real>* out = nullptr;     // n_padded accelerations (per unit G, scaled units)
};

/// Launches the kernel (and the fast kernel's reduction) on `stream`; checks each launch
/// and throws nbody::Error naming the kernel on failure.
template <class Real>
void launch(Kernel kernel, const LaunchArgs<Real>& args, cudaStream_t stream);

/// Largest number of fast-kernel blocks resident at once on the current device for this
/// block size (for choosing the number of j-splits).
template <class Real>
int fast_blocks_per_sm(int block);

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
/// Adds the accelerations into out (which must be zero: n_padded entries).
template <class Real>
void launch_mutual(const Vec4<Real>* bodies, const MutualTask* tasks, unsigned n_tasks, Real eps2, Vec4<Real>* out,
                   cudaStream_t stream);
template <class Real>
int mutual_blocks_per_sm();

// ---- Shared by the solver (direct_cuda.cu) and the resident stepper (simulation/cuda) ----

/// "12345 bytes (0.00 GiB)".
std::string bytes_text(std::size_t bytes);

/// cudaMalloc that says how much was asked for and how much the device has free.
void* device_allocate(std::size_t bytes, const char* what);

/// A device array that only grows.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }
  void reserve(std::size_t count, const char* what) {
    if (count <= capacity_) return;
    cudaFree(data_);
    data_ = nullptr;
    capacity_ = 0;
    data_ = static_cast<T*>(device_allocate(count * sizeof(T), what));
    capacity_ = count;
  }
  [[nodiscard]] T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

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
[[nodiscard]] KernelChoice choose_kernel(ForceKernel kernel, int block_size, bool deterministic = false);

// The power-of-two scaling of the CPU SIMD solver: positions and softening times 2^-p,
// masses times 2^-q (both O(1)), accelerations back by 2^(q-2p). Exact in binary, and it
// keeps float r^2 and masses in range whatever the units.
inline constexpr int kPositionExponentLimit = 400;
inline constexpr int kMassExponentLimit = 200;

/// The exponent e with largest = f 2^e, f in [0.5, 1), clamped to [-limit, limit]; 0 for
/// 0, NaN or infinity. Host and device (the resident stepper scales on the device).
__host__ __device__ inline int scale_exponent(double largest, int limit) {
  if (!(largest > 0) || !(largest <= DBL_MAX)) return 0;
  int e = 0;
  (void)frexp(largest, &e);
  return e < -limit ? -limit : (e > limit ? limit : e);
}

/// The power-of-two factors of a system (positions and softening times `position`,
/// masses times `mass`, accelerations from the kernels times `acceleration`).
struct Scaling {
  double position = 1, mass = 1, acceleration = 1;
};
[[nodiscard]] Scaling kernel_scaling(const ParticleSystem& ps, double softening);

/// The host side of the per-call GPU solvers (direct sum and tree): ps's (x, y, z, m)
/// scaled into out[0, n), z = 0 when planar.
template <class Real>
void pack_host_bodies(const ParticleSystem& ps, const Scaling& s, bool planar, Vec4<Real>* out) {
  for (std::size_t i = 0; i < ps.size(); ++i) {
    out[i] = {Real(ps.x[i] * s.position), Real(ps.y[i] * s.position), planar ? Real(0) : Real(ps.z[i] * s.position),
              Real(ps.mass[i] * s.mass)};
  }
}

/// ps.a = G * in * s.acceleration for the n bodies of ps (az = 0 when planar).
template <class Real>
void unpack_accelerations(const Vec4<Real>* in, double G, const Scaling& s, bool planar, ParticleSystem& ps) {
  for (std::size_t i = 0; i < ps.size(); ++i) {
    ps.ax[i] = G * double(in[i].x) * s.acceleration;
    ps.ay[i] = G * double(in[i].y) * s.acceleration;
    ps.az[i] = planar ? 0.0 : G * double(in[i].z) * s.acceleration;
  }
}

/// The force evaluation on bodies already in device memory, in the kernels' layout:
/// owns the body array (padded to whole tiles, padding with mass 0), the output and the
/// fast kernel's partial sums, and plans the fast kernel's j-splits (about one full wave
/// of the GPU). DirectSumCuda fills bodies() from the host; the resident stepper fills it
/// on the device.
template <class Real>
class DirectForces final : public DeviceForces<Real> {
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
  [[nodiscard]] Vec4<Real>* bodies() const override { return bodies_.data(); }
  [[nodiscard]] Vec4<Real>* out() const override { return out_.data(); }
  [[nodiscard]] std::string name() const override { return std::string("direct-cuda-") + kernel_name(kernel_); }
  [[nodiscard]] Kernel kernel() const { return kernel_; }
  [[nodiscard]] int block() const { return block_; }
  /// Launches the kernel for n bodies (bodies() filled, padding included) on `stream`:
  /// out()[i] = the acceleration of body i per unit G, in scaled units. eps = scaled softening.
  void launch(std::size_t n, Real eps, cudaStream_t stream) override;
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

 private:
  Kernel kernel_;
  int block_;
  int part_ = 0, parts_ = 1;
  int sms_ = 1;
  int fast_blocks_per_sm_ = 1;
  int mutual_blocks_per_sm_ = 1;
  bool each_pair_once_ = true;
  DeviceBuffer<Vec4<Real>> bodies_, out_, partial_;
  DeviceBuffer<MutualTask> tasks_;
  std::size_t planned_for_ = 0;  // n_padded of the tasks in tasks_ (0: none)
  unsigned n_tasks_ = 0;
};

/// A pinned host array that only grows (faster transfers than pageable memory).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { cudaFreeHost(data_); }
  void reserve(std::size_t count) {
    if (count <= capacity_) return;
    cudaFreeHost(data_);
    data_ = nullptr;
    capacity_ = 0;
    NBODY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
    capacity_ = count;
  }
  [[nodiscard]] T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// Selects this process's GPU (gpu_in_use) and passes k through, so a constructor can do it in its member
/// initialiser list before the members that query the device are built.
inline Kernel on_device_0(Kernel k) {
  NBODY_CUDA_CHECK(cudaSetDevice(gpu_in_use()));
  return k;
}

}  // namespace nbody::cuda_direct
