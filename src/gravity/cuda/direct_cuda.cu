// The CUDA direct-sum solver: keeps device buffers between calls (grown, never shrunk),
// and per call uploads (x, y, z, m) as float4/double4-like bodies, runs one of the
// kernels of direct_kernels.cu, downloads the accelerations, multiplies by G and writes
// ps.ax/ay/az. stats().walk_seconds is the kernel time (CUDA events), for benchmarks.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gravity/cuda/cuda_check.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "gravity/direct_cuda.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"

namespace nbody {
namespace cuda_direct {

namespace {

std::string bytes_text(std::size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu bytes (%.2f GiB)", bytes, double(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

/// cudaMalloc that says how much was asked for and how much the device has free.
void* device_allocate(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaSuccess) return p;
  cudaGetLastError();
  std::size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  cudaGetLastError();
  throw Error(std::string("CUDA direct sum: cannot allocate ") + what + ": needs " + bytes_text(bytes) +
              " of GPU memory, the device has " + bytes_text(free) + " free of " + bytes_text(total) + " (" +
              cudaGetErrorString(status) + ")");
}

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

// The same power-of-two scaling as the CPU SIMD solver: positions and softening times
// 2^-p, masses times 2^-q (both O(1)), accelerations back by 2^(q-2p). Exact in binary,
// and it keeps float r^2 and masses in range whatever the units.
double largest_magnitude(const std::vector<double>& values, double largest) {
  for (double v : values) {
    if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
  }
  return largest;
}
int scale_exponent(double largest, int limit) {
  if (!(largest > 0) || !std::isfinite(largest)) return 0;
  int e = 0;
  (void)std::frexp(largest, &e);
  return std::clamp(e, -limit, limit);
}
struct Scaling {
  double position = 1, mass = 1, acceleration = 1;
};
Scaling kernel_scaling(const ParticleSystem& ps, double softening) {
  double extent = std::isfinite(softening) ? std::abs(softening) : 0.0;
  for (const auto* v : {&ps.x, &ps.y, &ps.z}) extent = largest_magnitude(*v, extent);
  const int p = scale_exponent(extent, 400);
  const int q = scale_exponent(largest_magnitude(ps.mass, 0.0), 200);
  return {std::ldexp(1.0, -p), std::ldexp(1.0, -q), std::ldexp(1.0, q - 2 * p)};
}

const char* kernel_name(Kernel k) {
  return k == Kernel::Naive ? "naive" : k == Kernel::Tiled ? "tiled" : "fast";
}

/// Default threads per block: 256 for naive and tiled (GPU Gems 3); 512 for fast, best in
/// the block-size sweeps on an H200 (float and double, N = 16384 and 262144).
int default_block(Kernel k) { return k == Kernel::Fast ? 512 : 256; }

bool power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

/// Bodies the arrays hold for n bodies: a whole number of tiles (of block * K for fast).
std::size_t padded_count(Kernel k, std::size_t n, int block) {
  const std::size_t unit = k == Kernel::Naive ? 1
                           : k == Kernel::Tiled ? std::size_t(block)
                                                : std::size_t(block) * fast_bodies_per_thread(block);
  return (n + unit - 1) / unit * unit;
}

template <class Real>
class DirectSumCuda final : public GravitySolver {
 public:
  DirectSumCuda(Kernel kernel, int block, double G, double softening)
      : kernel_(kernel), block_(block), G_(G), softening_(softening) {
    NBODY_CUDA_CHECK(cudaSetDevice(0));
    NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
    NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    NBODY_CUDA_CHECK(cudaEventCreate(&start_));
    NBODY_CUDA_CHECK(cudaEventCreate(&stop_));
    if (kernel_ == Kernel::Fast) fast_blocks_per_sm_ = fast_blocks_per_sm<Real>(block_);
  }
  ~DirectSumCuda() override {
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  DirectSumCuda(const DirectSumCuda&) = delete;
  DirectSumCuda& operator=(const DirectSumCuda&) = delete;

  [[nodiscard]] std::string name() const override {
    return std::string("direct-cuda-") + kernel_name(kernel_) + (std::is_same_v<Real, float> ? "-float" : "-double");
  }

  [[nodiscard]] SolverStats stats() const override { return stats_; }

  void compute_accelerations(ParticleSystem& ps) override {
    const std::size_t n = ps.size();
    for (auto* a : {&ps.ax, &ps.ay, &ps.az}) a->resize(n);
    stats_ = {};
    if (n == 0) {
      ps.set_accelerations_valid();
      return;
    }
    if (n > kMaxBodies) {
      check_capacity(n, std::is_same_v<Real, float> ? Precision::Float : Precision::Double);  // throws
    }
    const std::size_t padded = padded_count(kernel_, n, block_);

    // Splits of the j-range (fast): enough blocks for about one full wave of the GPU.
    unsigned splits = 1;
    std::size_t j_per_split = padded;
    if (kernel_ == Kernel::Fast) {
      const std::size_t i_blocks = padded / (std::size_t(block_) * fast_bodies_per_thread(block_));
      const std::size_t tiles = padded / std::size_t(block_);
      const std::size_t wanted = std::size_t(sms_) * std::size_t(fast_blocks_per_sm_);
      std::size_t s = std::clamp<std::size_t>((wanted + i_blocks - 1) / i_blocks, 1, tiles);
      const std::size_t tiles_per_split = (tiles + s - 1) / s;
      s = (tiles + tiles_per_split - 1) / tiles_per_split;
      splits = unsigned(s);
      j_per_split = tiles_per_split * std::size_t(block_);
    }

    bodies_.reserve(padded, "bodies");
    out_.reserve(padded, "accelerations");
    if (splits > 1) partial_.reserve(std::size_t(splits) * padded, "partial sums");
    host_bodies_.reserve(padded);
    host_out_.reserve(padded);

    const Scaling scale = kernel_scaling(ps, softening_);
    Vec4<Real>* hb = host_bodies_.data();
    for (std::size_t i = 0; i < n; ++i) {
      hb[i] = {Real(ps.x[i] * scale.position), Real(ps.y[i] * scale.position), Real(ps.z[i] * scale.position),
               Real(ps.mass[i] * scale.mass)};
    }
    for (std::size_t i = n; i < padded; ++i) {  // padding: on the last body, mass 0
      hb[i] = hb[n - 1];
      hb[i].w = Real(0);
    }
    const Real eps = Real(softening_ * scale.position);

    LaunchArgs<Real> args;
    args.bodies = bodies_.data();
    args.n = unsigned(n);
    args.n_padded = unsigned(padded);
    args.eps2 = eps * eps;
    args.block = block_;
    args.splits = splits;
    args.j_per_split = unsigned(j_per_split);
    args.partial = partial_.data();
    args.out = out_.data();

    NBODY_CUDA_CHECK(cudaMemcpyAsync(bodies_.data(), hb, padded * sizeof(Vec4<Real>), cudaMemcpyHostToDevice, stream_));
    NBODY_CUDA_CHECK(cudaEventRecord(start_, stream_));
    launch<Real>(kernel_, args, stream_);
    NBODY_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(host_out_.data(), out_.data(), n * sizeof(Vec4<Real>), cudaMemcpyDeviceToHost, stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    float ms = 0;
    NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    stats_.walk_seconds = double(ms) * 1e-3;
    stats_.interactions_per_body = double(n);

    const Vec4<Real>* ho = host_out_.data();
    for (std::size_t i = 0; i < n; ++i) {
      ps.ax[i] = G_ * double(ho[i].x) * scale.acceleration;
      ps.ay[i] = G_ * double(ho[i].y) * scale.acceleration;
      ps.az[i] = G_ * double(ho[i].z) * scale.acceleration;
    }
    ps.set_accelerations_valid();
  }

 private:
  Kernel kernel_;
  int block_;
  double G_;
  double softening_;
  int sms_ = 1;
  int fast_blocks_per_sm_ = 1;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceBuffer<Vec4<Real>> bodies_, out_, partial_;
  PinnedBuffer<Vec4<Real>> host_bodies_, host_out_;
  SolverStats stats_;
};

}  // namespace

void check_capacity(std::size_t n, Precision precision) {
  if (n > kMaxBodies) {
    throw Error("CUDA direct sum: N = " + std::to_string(n) + " bodies is too many (at most 2^31 = " +
                std::to_string(kMaxBodies) + ": the kernels index bodies with 32 bits)");
  }
  const std::size_t per_body = precision == Precision::Float ? 2 * sizeof(Vec4<float>) : 2 * sizeof(Vec4<double>);
  const std::size_t needed = n * per_body;
  std::size_t free = 0, total = 0;
  NBODY_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  if (needed > free) {
    throw Error("CUDA direct sum: N = " + std::to_string(n) + " bodies needs " + bytes_text(needed) +
                " of GPU memory, the device has " + bytes_text(free) + " free of " + bytes_text(total));
  }
}

void try_device_allocation(std::size_t bytes) {
  NBODY_CUDA_CHECK(cudaSetDevice(0));
  void* p = device_allocate(bytes, "test buffer");
  NBODY_CUDA_CHECK(cudaFree(p));
}

}  // namespace cuda_direct

std::unique_ptr<GravitySolver> make_direct_cuda(const GravityOptions& o) {
  using cuda_direct::Kernel;
  Kernel kernel = Kernel::Fast;
  if (o.kernel == "naive") {
    kernel = Kernel::Naive;
  } else if (o.kernel == "tiled") {
    kernel = Kernel::Tiled;
  } else if (o.kernel != "fast" && !o.kernel.empty()) {
    throw Error("--kernel " + o.kernel + ": not a GPU direct-sum kernel (GPU kernels: naive, tiled, fast)");
  }
  const int block = o.block_size == 0 ? cuda_direct::default_block(kernel) : o.block_size;
  if (kernel == Kernel::Naive) {
    if (block < 1 || block > 1024) {
      throw Error("--block-size " + std::to_string(o.block_size) +
                  ": the naive kernel takes 1 to 1024 threads per block (0 = its default, 256)");
    }
  } else if (!cuda_direct::power_of_two(block) || block < 8 || block > 1024) {
    throw Error("--block-size " + std::to_string(o.block_size) + ": the " + cuda_direct::kernel_name(kernel) +
                " kernel needs a power of two from 8 to 1024 threads per block (0 = its default, " +
                std::to_string(cuda_direct::default_block(kernel)) + ")");
  }
  std::string reason;
  if (gpu_devices(&reason).empty()) throw Error("--device gpu: " + reason);
  if (o.precision == Precision::Float) {
    return std::make_unique<cuda_direct::DirectSumCuda<float>>(kernel, block, o.G, o.softening);
  }
  return std::make_unique<cuda_direct::DirectSumCuda<double>>(kernel, block, o.G, o.softening);
}

}  // namespace nbody
