// The device stepper's diagnostics: block sums into per-block partials, then one ordered
// final sum (deterministic: no floating-point atomics).
#include "core/cuda/cuda_check.cuh"
#include "nbody/physics/moments.hpp"
#include "nbody/physics/pair_force.hpp"
#include "simulation/cuda/diagnostics_kernels.cuh"

namespace nbody::cuda_resident {

namespace {

/// The sums: those of physics/moments.hpp, then the kinetic energy, then sum m_i phi_i.
constexpr int kKinetic = kMomentSums;
constexpr int kSolverPotential = kMomentSums + 1;
constexpr int kSums = kMomentSums + 2;

/// Sums K values over the block; thread k < K writes the block's total of value k to dst[k].
template <int K>
__device__ void block_sum(double (&v)[K], double* dst) {
  __shared__ double warp_sums[K][kThreads / 32];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < K; ++k) {
    double x = v[k];
    for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_down_sync(0xffffffffu, x, offset);
    if (lane == 0) warp_sums[k][warp] = x;
  }
  __syncthreads();
  if (threadIdx.x < unsigned(K)) {
    double total = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warp_sums[threadIdx.x][w];
    dst[threadIdx.x] = total;
  }
}

/// phi: the solver's potentials, or nullptr (the sum of m phi is then 0).
__global__ void moments_kernel(State s, const double* __restrict__ phi,
                               double* __restrict__ partial) {
  double moments[kMomentSums] = {};
  double kinetic = 0, m_phi = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    const double m = s.m[i];
    const double vx = s.vx[i], vy = s.vy[i], vz = s.vz[i];
    add_body_moments(moments, m, s.x[i], s.y[i], s.z[i], vx, vy, vz);
    kinetic += body_kinetic_energy(m, vx, vy, vz);
    if (phi != nullptr) m_phi += m * phi[i];
  }
  double v[kSums];
#pragma unroll
  for (int k = 0; k < kMomentSums; ++k) v[k] = moments[k];
  v[kKinetic] = kinetic;
  v[kSolverPotential] = m_phi;
  block_sum<kSums>(v, partial + std::size_t(blockIdx.x) * kSums);
}

/// W / G = sum_{i<j} m_i m_j phi_ij with nbody::pair_potential<double>, the physics of the
/// CPU's potential_energy(). Thread r takes rows r and n-1-r (j > i), n-1 pairs in all,
/// so every thread has the same work.
__global__ void potential_kernel(State s, double eps2, double* __restrict__ partial) {
  double w[1] = {0.0};
  const unsigned n = s.n;
  const unsigned rows = (n + 1) / 2;
  for (unsigned r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
    const unsigned row[2] = {r, n - 1 - r};
    const int row_count = row[1] == r ? 1 : 2;  // the middle row of an odd n once
    for (int t = 0; t < row_count; ++t) {
      const unsigned i = row[t];
      const double xi = s.x[i], yi = s.y[i], zi = s.z[i];
      double wi = 0;
      for (unsigned j = i + 1; j < n; ++j) {
        wi += pair_potential<double>(s.x[j] - xi, s.y[j] - yi, s.z[j] - zi, s.m[j], eps2);
      }
      w[0] += s.m[i] * wi;
    }
  }
  block_sum<1>(w, partial + blockIdx.x);
}

/// result[k] = sum over blocks of partial[b * k_count + k], in block order.
__global__ void sum_partials(const double* __restrict__ partial, unsigned blocks, unsigned k_count,
                             double* __restrict__ result) {
  const unsigned k = threadIdx.x;
  if (k >= k_count) return;
  double total = 0;
  for (unsigned b = 0; b < blocks; ++b) total += partial[std::size_t(b) * k_count + k];
  result[k] = total;
}

}  // namespace

namespace {
/// The O(N) sums of this process's bodies into host[0, kSums) (the moments, the kinetic
/// energy, sum m phi): the decomposed run's share, all-reduced by the caller.
bool local_sums(const State& s, EnergyMethod method, const double* phi, DiagnosticsBuffers& buffers,
                cudaStream_t stream, double* host) {
  const unsigned moment_blocks = blocks_for(s.n);
  buffers.partial.reserve(std::size_t(moment_blocks) * kSums, "diagnostics partial sums");
  buffers.result.reserve(kSums + 1, "diagnostics");
  moments_kernel<<<moment_blocks, kThreads, 0, stream>>>(
      s, method == EnergyMethod::Solver ? phi : nullptr, buffers.partial.data());
  NBODY_CUDA_CHECK_LAUNCH("moments_kernel");
  sum_partials<<<1, 32, 0, stream>>>(buffers.partial.data(), moment_blocks, kSums,
                                     buffers.result.data());
  NBODY_CUDA_CHECK_LAUNCH("sum_partials");
  NBODY_CUDA_CHECK(cudaMemcpyAsync(host, buffers.result.data(), kSums * sizeof(double),
                                   cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  return true;
}
}  // namespace

Diagnostics device_diagnostics(const State& s, double G, double softening, EnergyMethod method,
                               const double* phi, DiagnosticsBuffers& buffers, cudaStream_t stream,
                               ForceReducer* sum_over) {
  if (sum_over) {  // every rank's sums (the exact pair sum is not a per-rank sum)
    if (method == EnergyMethod::Exact)
      throw Error("device diagnostics: the exact energy of a decomposed run is the host's");
    double host[kSums + 1] = {};
    if (s.n > 0) (void)local_sums(s, method, phi, buffers, stream, host);
    sum_over->sum(host, kSums + 1);
    double sums[kMomentSums];
    for (int k = 0; k < kMomentSums; ++k) sums[k] = host[k];
    const double potential = method == EnergyMethod::Solver ? 0.5 * host[kSolverPotential] : 0.0;
    Diagnostics d = diagnostics_from_sums(sums, host[kKinetic], potential);
    d.energy_method = method;
    return d;
  }
  if (s.n == 0) {
    Diagnostics none;
    none.energy_method = method;
    return none;
  }
  const bool exact = method == EnergyMethod::Exact;
  const unsigned moment_blocks = blocks_for(s.n);
  const unsigned potential_blocks = blocks_for((s.n + 1) / 2);
  buffers.partial.reserve(std::size_t(moment_blocks) * kSums + potential_blocks,
                          "diagnostics partial sums");
  buffers.result.reserve(kSums + 1, "diagnostics");
  buffers.result_host.reserve(kSums + 1);
  double* moment_partial = buffers.partial.data();
  double* potential_partial = buffers.partial.data() + std::size_t(moment_blocks) * kSums;
  double* result = buffers.result.data();
  moments_kernel<<<moment_blocks, kThreads, 0, stream>>>(
      s, method == EnergyMethod::Solver ? phi : nullptr, moment_partial);
  NBODY_CUDA_CHECK_LAUNCH("moments_kernel");
  sum_partials<<<1, 32, 0, stream>>>(moment_partial, moment_blocks, kSums, result);
  NBODY_CUDA_CHECK_LAUNCH("sum_partials");
  if (exact) {
    potential_kernel<<<potential_blocks, kThreads, 0, stream>>>(s, softening * softening,
                                                                potential_partial);
    NBODY_CUDA_CHECK_LAUNCH("potential_kernel");
    sum_partials<<<1, 32, 0, stream>>>(potential_partial, potential_blocks, 1, result + kSums);
    NBODY_CUDA_CHECK_LAUNCH("sum_partials");
  }
  double* host = buffers.result_host.data();
  NBODY_CUDA_CHECK(
      cudaMemcpyAsync(host, result, (kSums + 1) * sizeof(double), cudaMemcpyDeviceToHost, stream));
  NBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  double sums[kMomentSums];
  for (int k = 0; k < kMomentSums; ++k) sums[k] = host[k];
  const double potential = exact                            ? G * host[kSums]
                           : method == EnergyMethod::Solver ? 0.5 * host[kSolverPotential]
                                                            : 0.0;
  Diagnostics d = diagnostics_from_sums(sums, host[kKinetic], potential);
  d.energy_method = method;
  return d;
}

}  // namespace nbody::cuda_resident
