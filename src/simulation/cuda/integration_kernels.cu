// The integration kernels of the device stepper. Each thread loads one body, calls the
// shared per-body update of physics/integration.hpp and stores the body back: the float64
// operations of the CPU loops in the same order, never contracted into FMAs, so given
// equal accelerations a GPU step gives the bits of a CPU step.
#include <cfloat>

#include "core/cuda/cuda_check.cuh"
#include "nbody/error.hpp"
#include "nbody/input_error.hpp"
#include "simulation/cuda/integration_kernels.cuh"

namespace nbody::cuda_resident {

namespace {

using gpu::Vec4;

__device__ __forceinline__ double finite_abs(double v) {
  const double a = fabs(v);
  return a <= DBL_MAX ? a : 0.0;  // NaN and inf are ignored, as on the host
}

/// Max of v over the block's warps into *extent. Non-negative doubles order like their
/// bit patterns, so an integer atomicMax on the bits is a max of the doubles.
__device__ __forceinline__ void warp_max_to(double v, unsigned long long* extent) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmax(v, __shfl_down_sync(0xffffffffu, v, offset));
  if ((threadIdx.x & 31u) == 0)
    atomicMax(extent, static_cast<unsigned long long>(__double_as_longlong(v)));
}

template <IntegratorScheme S>
__global__ void open_step_kernel(State s, StepFactors f, unsigned long long* extent) {
  double largest = 0.0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    BodyMotion b = load_motion(s, i);
    open_step<S>(b, s.ax[i], s.ay[i], s.az[i], f);
    store_motion(s, i, b);
    largest = fmax(largest, fmax(finite_abs(b.x), fmax(finite_abs(b.y), finite_abs(b.z))));
  }
  warp_max_to(largest, extent);
}

/// x += v h for every body, and the largest finite |x|, |y|, |z| after it into *extent.
__global__ void drift_kernel(State s, double h, unsigned long long* extent) {
  double largest = 0.0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    BodyMotion b = load_motion(s, i);
    drift(b, h);
    s.x[i] = b.x;
    s.y[i] = b.y;
    s.z[i] = b.z;
    largest = fmax(largest, fmax(finite_abs(b.x), fmax(finite_abs(b.y), finite_abs(b.z))));
  }
  warp_max_to(largest, extent);
}

template <class Real>
__global__ void pack_bodies_kernel(State s, double position_scale, double mass_scale,
                                   unsigned n_padded, Vec4<Real>* __restrict__ bodies) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_padded;
       i += gridDim.x * blockDim.x) {
    if (s.n == 0) {  // a rank that owns no bodies: padding alone
      bodies[i] = {Real(0), Real(0), Real(0), Real(0)};
      continue;
    }
    const unsigned k = i < s.n ? i : s.n - 1;
    bodies[i] = {Real(s.x[k] * position_scale), Real(s.y[k] * position_scale),
                 Real(s.z[k] * position_scale), i < s.n ? Real(s.m[k] * mass_scale) : Real(0)};
  }
}

template <class Real, IntegratorScheme S, bool Close>
__global__ void finish_step_kernel(State s, const Vec4<Real>* __restrict__ out, double G,
                                   double acceleration_scale, StepFactors f) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    const Vec4<Real> o = out[i];
    const double ax = physical(o.x, G, acceleration_scale);
    const double ay = physical(o.y, G, acceleration_scale);
    const double az = physical(o.z, G, acceleration_scale);
    s.ax[i] = ax;
    s.ay[i] = ay;
    s.az[i] = az;
    if constexpr (Close) {
      BodyMotion b{0.0, 0.0, 0.0, s.vx[i], s.vy[i], s.vz[i]};  // close_step changes v only
      close_step<S>(b, ax, ay, az, f);
      s.vx[i] = b.vx;
      s.vy[i] = b.vy;
      s.vz[i] = b.vz;
    }
  }
}

/// phi = G * out.w * potential_scale, with the rounding of the accelerations' unpacking.
template <class Real>
__global__ void store_potentials_kernel(unsigned n, const Vec4<Real>* __restrict__ out, double G,
                                        double potential_scale, double* __restrict__ phi) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    phi[i] = physical(out[i].w, G, potential_scale);
  }
}

template <class Real>
__global__ void acceleration_magnitudes_kernel(State s, double to_scaled, Real* __restrict__ out) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    // Unfused, in the host's order: the per-call solver's values, bit for bit.
    const double a2 = exact_add(exact_add(exact_mul(s.ax[i], s.ax[i]), exact_mul(s.ay[i], s.ay[i])),
                                exact_mul(s.az[i], s.az[i]));
    out[i] = Real(exact_mul(sqrt(a2), to_scaled));
  }
}

__global__ void positions_to_float_kernel(State s, float* __restrict__ xyz) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    xyz[3 * std::size_t(i)] = float(s.x[i]);
    xyz[3 * std::size_t(i) + 1] = float(s.y[i]);
    xyz[3 * std::size_t(i) + 2] = float(s.z[i]);
  }
}

}  // namespace

void launch_open_step(IntegratorScheme scheme, const State& s, const StepFactors& f,
                      unsigned long long* extent, cudaStream_t stream) {
  const unsigned blocks = blocks_for(s.n);
  switch (scheme) {
    case IntegratorScheme::Leapfrog:
      open_step_kernel<IntegratorScheme::Leapfrog><<<blocks, kThreads, 0, stream>>>(s, f, extent);
      break;
    case IntegratorScheme::Euler:
      open_step_kernel<IntegratorScheme::Euler><<<blocks, kThreads, 0, stream>>>(s, f, extent);
      break;
    case IntegratorScheme::Kinematic:
      open_step_kernel<IntegratorScheme::Kinematic><<<blocks, kThreads, 0, stream>>>(s, f, extent);
      break;
    case IntegratorScheme::Ias15:  // refused by make_device_stepper()
      throw input_error("--integrator", "runs on the CPU only", "ias15");
  }
  NBODY_CUDA_CHECK_LAUNCH("open_step_kernel");
}

void launch_drift_extent(const State& s, double h, unsigned long long* extent,
                         cudaStream_t stream) {
  NBODY_CUDA_CHECK(cudaMemsetAsync(extent, 0, sizeof(unsigned long long), stream));
  if (s.n == 0) return;  // a decomposed run's rank that owns nothing
  drift_kernel<<<blocks_for(s.n), kThreads, 0, stream>>>(s, h, extent);
  NBODY_CUDA_CHECK_LAUNCH("drift_kernel");
}

template <class Real>
void launch_pack_bodies(const State& s, double position_scale, double mass_scale, unsigned n_padded,
                        Vec4<Real>* bodies, cudaStream_t stream) {
  pack_bodies_kernel<Real><<<blocks_for(n_padded), kThreads, 0, stream>>>(
      s, position_scale, mass_scale, n_padded, bodies);
  NBODY_CUDA_CHECK_LAUNCH("pack_bodies_kernel");
}

template <class Real>
void launch_finish_step(IntegratorScheme scheme, bool close, const State& s, const Vec4<Real>* out,
                        double G, double acceleration_scale, const StepFactors& f,
                        cudaStream_t stream) {
  const unsigned blocks = blocks_for(s.n);
  // Only the leapfrog has work after the force evaluation (kHasCloseStep).
  if (close && scheme == IntegratorScheme::Leapfrog) {
    finish_step_kernel<Real, IntegratorScheme::Leapfrog, true>
        <<<blocks, kThreads, 0, stream>>>(s, out, G, acceleration_scale, f);
  } else {
    finish_step_kernel<Real, IntegratorScheme::Leapfrog, false>
        <<<blocks, kThreads, 0, stream>>>(s, out, G, acceleration_scale, f);
  }
  NBODY_CUDA_CHECK_LAUNCH("finish_step_kernel");
}

template <class Real>
void launch_store_potentials(unsigned n, const Vec4<Real>* out, double G, double potential_scale,
                             double* phi, cudaStream_t stream) {
  store_potentials_kernel<Real>
      <<<blocks_for(n), kThreads, 0, stream>>>(n, out, G, potential_scale, phi);
  NBODY_CUDA_CHECK_LAUNCH("store_potentials_kernel");
}

template <class Real>
void launch_acceleration_magnitudes(const State& s, double to_scaled, Real* out,
                                    cudaStream_t stream) {
  acceleration_magnitudes_kernel<Real><<<blocks_for(s.n), kThreads, 0, stream>>>(s, to_scaled, out);
  NBODY_CUDA_CHECK_LAUNCH("acceleration_magnitudes_kernel");
}

void launch_positions_to_float(const State& s, float* xyz, cudaStream_t stream) {
  positions_to_float_kernel<<<blocks_for(s.n), kThreads, 0, stream>>>(s, xyz);
  NBODY_CUDA_CHECK_LAUNCH("positions_to_float_kernel");
}

template void launch_pack_bodies<float>(const State&, double, double, unsigned, Vec4<float>*,
                                        cudaStream_t);
template void launch_pack_bodies<double>(const State&, double, double, unsigned, Vec4<double>*,
                                         cudaStream_t);
template void launch_finish_step<float>(IntegratorScheme, bool, const State&, const Vec4<float>*,
                                        double, double, const StepFactors&, cudaStream_t);
template void launch_finish_step<double>(IntegratorScheme, bool, const State&, const Vec4<double>*,
                                         double, double, const StepFactors&, cudaStream_t);

template void launch_store_potentials<float>(unsigned, const Vec4<float>*, double, double, double*,
                                             cudaStream_t);
template void launch_store_potentials<double>(unsigned, const Vec4<double>*, double, double,
                                              double*, cudaStream_t);
template void launch_acceleration_magnitudes<float>(const State&, double, float*, cudaStream_t);
template void launch_acceleration_magnitudes<double>(const State&, double, double*, cudaStream_t);

}  // namespace nbody::cuda_resident
