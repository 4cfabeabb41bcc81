// The test particles' kernels (test_particle_kernels.cuh). The test particles (often
// millions around a few planets) take one thread each and read the active bodies through
// shared memory in tiles; with type 1 each active body sums the pull of the test particles
// by blocks of chunks, reduced in a fixed order (the same bits run after run).
#include <cub/block/block_reduce.cuh>

#include <algorithm>

#include "core/cuda/cuda_check.cuh"
#include "gravity/cuda/device_math.cuh"
#include "gravity/cuda/pair_terms.cuh"
#include "simulation/cuda/test_particle_kernels.cuh"

namespace nbody::cuda_resident {

namespace {

using gpu::Vec4;

constexpr unsigned kChunk = 8192;  // type 1: test particles per block and active body

template <class Real>
__device__ __forceinline__ Vec4<Real> scaled(const State& s, unsigned j, double ps, double ms) {
  return {Real(s.x[j] * ps), Real(s.y[j] * ps), Real(s.z[j] * ps), Real(s.m[j] * ms)};
}

/// Target k of the launch: the test particles n_active.. in order, or the listed bodies
/// (those below n_active skipped).
template <class Real, bool Pot, class Math>
__global__ void test_particles_kernel(TestParticleLaunch<Real> t) {
  __shared__ Vec4<Real> tile[kThreads];
  const unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned count = t.listed ? t.n_listed : t.s.n - t.n_active;
  const unsigned i = k < count ? (t.listed ? t.listed[k] : t.n_active + k) : 0u;
  const bool mine = k < count && i >= t.n_active;
  const Real eps2 = t.eps * t.eps;
  Real ax = 0, ay = 0, az = 0, phi = 0;
  Vec4<Real> me{};
  if (mine) me = scaled<Real>(t.s, i, t.position_scale, t.mass_scale);
  for (unsigned first = 0; first < t.n_active; first += kThreads) {
    const unsigned j = first + threadIdx.x;
    if (j < t.n_active) tile[threadIdx.x] = scaled<Real>(t.s, j, t.position_scale, t.mass_scale);
    __syncthreads();
    const unsigned in_tile = min(unsigned(kThreads), t.n_active - first);
    if (mine) {
      for (unsigned q = 0; q < in_tile; ++q) {
        const Vec4<Real> src = tile[q];
        cuda_gravity::pair_term<Pot, Real, Math>(src.x - me.x, src.y - me.y, src.z - me.z, src.w,
                                                 eps2, ax, ay, az, phi, false);
      }
    }
    __syncthreads();
  }
  if (mine) t.out[i] = {ax, ay, az, phi};
}

/// Block (a, c): active body a (or the a-th listed) from test particles
/// [n_active + c chunk, + chunk), into partial[a * chunks + c].
template <class Real, bool Pot, class Math>
__global__ void pull_on_active_kernel(TestParticleLaunch<Real> t, unsigned chunk,
                                      Vec4<Real>* partial) {
  using Reduce = cub::BlockReduce<Real, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const unsigned a = blockIdx.x, c = blockIdx.y, chunks = gridDim.y;
  const unsigned i = t.listed ? t.listed[a] : a;
  const Vec4<Real> me = scaled<Real>(t.s, i, t.position_scale, t.mass_scale);
  const Real eps2 = t.eps * t.eps;
  Real ax = 0, ay = 0, az = 0, phi = 0;
  const unsigned first = t.n_active + c * chunk;
  const unsigned last = min(t.s.n, first + chunk);
  for (unsigned j = first + threadIdx.x; j < last; j += kThreads) {
    const Vec4<Real> src = scaled<Real>(t.s, j, t.position_scale, t.mass_scale);
    cuda_gravity::pair_term<Pot, Real, Math>(src.x - me.x, src.y - me.y, src.z - me.z, src.w, eps2,
                                             ax, ay, az, phi, false);
  }
  Vec4<Real> sum;
  sum.x = Reduce(temp).Sum(ax);
  __syncthreads();
  sum.y = Reduce(temp).Sum(ay);
  __syncthreads();
  sum.z = Reduce(temp).Sum(az);
  __syncthreads();
  sum.w = Reduce(temp).Sum(phi);
  if (threadIdx.x == 0) partial[std::size_t(a) * chunks + c] = sum;
}

/// out[active body a] += the sum of its chunks, in chunk order.
template <class Real>
__global__ void add_pull_kernel(TestParticleLaunch<Real> t, const Vec4<Real>* partial,
                                unsigned actives, unsigned chunks) {
  const unsigned a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= actives) return;
  const unsigned i = t.listed ? t.listed[a] : a;
  Vec4<Real> o = t.out[i];
  for (unsigned c = 0; c < chunks; ++c) {
    const Vec4<Real> p = partial[std::size_t(a) * chunks + c];
    o.x += p.x;
    o.y += p.y;
    o.z += p.z;
    if (t.potential) o.w += p.w;
  }
  t.out[i] = o;
}

__global__ void count_below_kernel(const unsigned* listed, unsigned n, unsigned bound,
                                   unsigned* count) {
  unsigned lo = 0, hi = n;  // the first entry >= bound
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    if (listed[mid] < bound) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *count = lo;
}

template <class Real, bool Pot, class Math>
void launch_with(const TestParticleLaunch<Real>& t, gpu::DeviceBuffer<Vec4<Real>>& partial,
                 cudaStream_t stream) {
  const unsigned count = t.listed ? t.n_listed : t.s.n - t.n_active;
  if (count > 0) {
    test_particles_kernel<Real, Pot, Math>
        <<<(count + kThreads - 1) / kThreads, kThreads, 0, stream>>>(t);
    NBODY_CUDA_CHECK_LAUNCH("test_particles_kernel");
  }
  const unsigned actives = t.listed ? t.listed_active : t.n_active;
  const unsigned tests = t.s.n - t.n_active;
  if (t.type != 1 || actives == 0 || tests == 0) return;
  // At most 65535 chunks (the grid's y limit).
  const unsigned chunk = std::max(kChunk, (tests + 65534u) / 65535u);
  const unsigned chunks = (tests + chunk - 1) / chunk;
  partial.reserve(std::size_t(actives) * chunks, "test particles' pull");
  pull_on_active_kernel<Real, Pot, Math>
      <<<dim3(actives, chunks), kThreads, 0, stream>>>(t, chunk, partial.data());
  NBODY_CUDA_CHECK_LAUNCH("pull_on_active_kernel");
  add_pull_kernel<Real><<<(actives + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      t, partial.data(), actives, chunks);
  NBODY_CUDA_CHECK_LAUNCH("add_pull_kernel");
}

}  // namespace

template <class Real>
void launch_test_particle_forces(const TestParticleLaunch<Real>& t,
                                 gpu::DeviceBuffer<Vec4<Real>>& partial, cudaStream_t stream) {
  using Plain = typename cuda_gravity::MathFor<Real, false, false>::type;
  using Softened = typename cuda_gravity::MathFor<Real, false, true>::type;
  const bool soft = t.eps > 0;
  if (t.potential) {
    soft ? launch_with<Real, true, Softened>(t, partial, stream)
         : launch_with<Real, true, Plain>(t, partial, stream);
  } else {
    soft ? launch_with<Real, false, Softened>(t, partial, stream)
         : launch_with<Real, false, Plain>(t, partial, stream);
  }
}

void launch_count_below(const unsigned* listed, unsigned n, unsigned bound, unsigned* count,
                        cudaStream_t stream) {
  count_below_kernel<<<1, 1, 0, stream>>>(listed, n, bound, count);
  NBODY_CUDA_CHECK_LAUNCH("count_below_kernel");
}

template void launch_test_particle_forces<float>(const TestParticleLaunch<float>&,
                                                 gpu::DeviceBuffer<Vec4<float>>&, cudaStream_t);
template void launch_test_particle_forces<double>(const TestParticleLaunch<double>&,
                                                  gpu::DeviceBuffer<Vec4<double>>&, cudaStream_t);

}  // namespace nbody::cuda_resident
