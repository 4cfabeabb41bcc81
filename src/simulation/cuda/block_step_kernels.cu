// The kernels of hierarchical (block) time steps (block_step_kernels.cuh). Each body's
// update calls the functions of physics/timestep.hpp and physics/integration.hpp that the
// host stepper calls, in the same order: given equal accelerations, the same bins and the
// same bits.
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include <cfloat>

#include "core/cuda/cuda_check.cuh"
#include "nbody/physics/integration.hpp"
#include "simulation/cuda/block_step_kernels.cuh"
#include "simulation/cuda/integration_kernels.cuh"

namespace nbody::cuda_resident {

namespace {

using gpu::Vec4;

/// The half kick of a body of bin k: v += a (dt / 2^k) / 2.
__device__ __forceinline__ void half_kick(BodyMotion& b, double ax, double ay, double az, double dt,
                                          int k) {
  kick(b, ax, ay, az, bin_half_step(dt, k));
}

/// Adds the block's count to *total (one atomic per warp).
__device__ __forceinline__ void add_count(unsigned long long count, unsigned long long* total) {
  for (int offset = 16; offset > 0; offset >>= 1)
    count += __shfl_down_sync(0xffffffffu, count, offset);
  if ((threadIdx.x & 31u) == 0 && count > 0) atomicAdd(total, count);
}

__global__ void assign_bins_kernel(State s, const double* __restrict__ phi,
                                   std::uint8_t* __restrict__ bin, BlockStepParams p,
                                   unsigned long long* floored) {
  unsigned long long count = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    const double ax = s.ax[i], ay = s.ay[i], az = s.az[i];
    bool fl = false;
    const int k =
        timestep_bin(wanted_by(p, i, ax, ay, az, phi ? phi[i] : 0.0), p.dt, p.k_limit, &fl);
    count += fl ? 1 : 0;
    bin[i] = std::uint8_t(k);
    BodyMotion b{0.0, 0.0, 0.0, s.vx[i], s.vy[i], s.vz[i]};
    half_kick(b, ax, ay, az, p.dt, k);
    s.vx[i] = b.vx;
    s.vy[i] = b.vy;
    s.vz[i] = b.vz;
  }
  add_count(count, floored);
}

__global__ void move_velocities_kernel(State s, const std::uint8_t* __restrict__ bin, double dt,
                                       unsigned long long tick, unsigned long long next,
                                       double sign) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    const double offset = stage_offset(bin_of(bin[i]), tick, next, dt);
    if (offset == 0) continue;  // the deepest bin: already at the stage's time
    BodyMotion b{0.0, 0.0, 0.0, s.vx[i], s.vy[i], s.vz[i]};
    kick(b, s.ax[i], s.ay[i], s.az[i], exact_mul(sign, offset));
    s.vx[i] = b.vx;
    s.vy[i] = b.vy;
    s.vz[i] = b.vz;
  }
}

__global__ void histogram_kernel(const std::uint8_t* __restrict__ bin, unsigned n,
                                 unsigned* __restrict__ bins) {
  __shared__ unsigned local[kMaxTimestepBin + 1];
  for (unsigned k = threadIdx.x; k <= unsigned(kMaxTimestepBin); k += blockDim.x) local[k] = 0;
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[min(unsigned(bin_of(bin[i])), unsigned(kMaxTimestepBin))], 1u);
  __syncthreads();
  for (unsigned k = threadIdx.x; k <= unsigned(kMaxTimestepBin); k += blockDim.x) {
    if (local[k] > 0) atomicAdd(&bins[k], local[k]);
  }
}

__global__ void next_tick_kernel(SubstepCounts* counts, unsigned long long tick) {
  counts->next_tick = next_tick(counts->bins, tick);
}

/// The select predicate: body i's bin ends a step at *tick.
struct ActiveAt {
  const std::uint8_t* bin;
  const unsigned long long* tick;
  __device__ bool operator()(unsigned i) const { return bin_active_at(bin_of(bin[i]), *tick); }
};

template <class Real>
__global__ void finish_substep_kernel(State s, const Vec4<Real>* __restrict__ out,
                                      const unsigned* __restrict__ active, unsigned n_active,
                                      double G, double acceleration_scale, double potential_scale,
                                      double* __restrict__ phi, std::uint8_t* __restrict__ bin,
                                      BlockStepParams p, unsigned long long tick, bool rebin,
                                      int deepest, unsigned long long* floored) {
  unsigned long long count = 0;
  for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < n_active;
       k += gridDim.x * blockDim.x) {
    const unsigned i = active[k];
    const Vec4<Real> o = out[i];
    const double ax = physical(o.x, G, acceleration_scale);
    const double ay = physical(o.y, G, acceleration_scale);
    const double az = physical(o.z, G, acceleration_scale);
    s.ax[i] = ax;
    s.ay[i] = ay;
    s.az[i] = az;
    double potential = 0.0;
    if (phi) {
      potential = physical(o.w, G, potential_scale);
      phi[i] = potential;
    }
    BodyMotion b{0.0, 0.0, 0.0, s.vx[i], s.vy[i], s.vz[i]};
    const std::uint8_t byte = bin[i];
    const int old_bin = bin_of(byte);
    half_kick(b, ax, ay, az, p.dt, old_bin);  // closes the step of the old bin
    if (rebin) {
      bool fl = false;
      const int wanted = timestep_bin(wanted_by(p, i, ax, ay, az, potential), p.dt, p.k_limit, &fl);
      count += fl ? 1 : 0;
      const int k_new = contact_bin(next_bin(wanted, old_bin, tick), byte, deepest);
      bin[i] = std::uint8_t(k_new);
      half_kick(b, ax, ay, az, p.dt, k_new);  // opens the next one
    }
    s.vx[i] = b.vx;
    s.vy[i] = b.vy;
    s.vz[i] = b.vz;
  }
  add_count(count, floored);
}

}  // namespace

void launch_assign_bins(const State& s, const double* phi, std::uint8_t* bin,
                        const BlockStepParams& p, SubstepCounts* counts, cudaStream_t stream) {
  if (s.n == 0) return;  // a decomposed run's rank that owns nothing
  assign_bins_kernel<<<blocks_for(s.n), kThreads, 0, stream>>>(s, phi, bin, p, &counts->floored);
  NBODY_CUDA_CHECK_LAUNCH("assign_bins_kernel");
}

void launch_drift(const State& s, double h, SubstepCounts* counts, cudaStream_t stream) {
  launch_drift_extent(s, h, &counts->extent, stream);
}

void launch_move_velocities(const State& s, const std::uint8_t* bin, double dt, std::uint64_t tick,
                            std::uint64_t next, double sign, cudaStream_t stream) {
  if (s.n == 0) return;
  move_velocities_kernel<<<blocks_for(s.n), kThreads, 0, stream>>>(s, bin, dt, tick, next, sign);
  NBODY_CUDA_CHECK_LAUNCH("move_velocities_kernel");
}

void launch_histogram(const std::uint8_t* bin, unsigned n, std::uint64_t tick,
                      SubstepCounts* counts, cudaStream_t stream) {
  NBODY_CUDA_CHECK(cudaMemsetAsync(counts->bins, 0, sizeof(counts->bins), stream));
  if (n > 0) {
    histogram_kernel<<<blocks_for(n), kThreads, 0, stream>>>(bin, n, counts->bins);
    NBODY_CUDA_CHECK_LAUNCH("histogram_kernel");
  }
  next_tick_kernel<<<1, 1, 0, stream>>>(counts, static_cast<unsigned long long>(tick));
  NBODY_CUDA_CHECK_LAUNCH("next_tick_kernel");
}

std::size_t select_active_bytes(unsigned n) {
  std::size_t bytes = 0;
  const ActiveAt select{nullptr, nullptr};
  NBODY_CUDA_CHECK(cub::DeviceSelect::If(
      nullptr, bytes, thrust::make_counting_iterator(0u), static_cast<unsigned*>(nullptr),
      static_cast<unsigned*>(nullptr), static_cast<long long>(n), select));
  return bytes;
}

void launch_select_active(const std::uint8_t* bin, unsigned n, SubstepCounts* counts,
                          unsigned* active, void* temp, std::size_t temp_bytes,
                          cudaStream_t stream) {
  const ActiveAt select{bin, &counts->next_tick};
  NBODY_CUDA_CHECK(cub::DeviceSelect::If(temp, temp_bytes, thrust::make_counting_iterator(0u),
                                         active, &counts->n_active, static_cast<long long>(n),
                                         select, stream));
}

template <class Real>
void launch_finish_substep(const State& s, const Vec4<Real>* out, const unsigned* active,
                           unsigned n_active, double G, double acceleration_scale,
                           double potential_scale, double* phi, std::uint8_t* bin,
                           const BlockStepParams& p, std::uint64_t tick, bool rebin, int deepest,
                           SubstepCounts* counts, cudaStream_t stream) {
  if (n_active == 0) return;
  finish_substep_kernel<Real><<<blocks_for(n_active), kThreads, 0, stream>>>(
      s, out, active, n_active, G, acceleration_scale, potential_scale, phi, bin, p,
      static_cast<unsigned long long>(tick), rebin, deepest, &counts->floored);
  NBODY_CUDA_CHECK_LAUNCH("finish_substep_kernel");
}

template void launch_finish_substep<float>(const State&, const Vec4<float>*, const unsigned*,
                                           unsigned, double, double, double, double*, std::uint8_t*,
                                           const BlockStepParams&, std::uint64_t, bool, int,
                                           SubstepCounts*, cudaStream_t);
template void launch_finish_substep<double>(const State&, const Vec4<double>*, const unsigned*,
                                            unsigned, double, double, double, double*,
                                            std::uint8_t*, const BlockStepParams&, std::uint64_t,
                                            bool, int, SubstepCounts*, cudaStream_t);

}  // namespace nbody::cuda_resident
