// The device-resident simulation (DeviceStepper for --device gpu): the state is uploaded
// once and stays in device memory across steps; integration, forces and diagnostics run
// on the GPU, and only download() (for output) copies bodies back.
//
// State layout. The integration state stays float64 on the device, as on the CPU
// (ARCHITECTURE.md: "the state itself stays float64"), in SoA arrays x y z vx vy vz ax ay az m
// (coalesced loads). Keeping it in the run's force precision instead would make a float
// run integrate in float32 (positions lose ~1e-7 relative per step and the GPU and CPU
// runs would no longer be the same scheme); so each step a small kernel converts the
// positions to the direct kernels' (x, y, z, m) Vec4<Real> layout, like DirectSumCuda does
// on the host, and the forces come back through the same G and power-of-two scaling.
//
// The integrator kernels do exactly the float64 operations of src/integrators/*.cpp, in the
// same order, with __dmul_rn/__dadd_rn so that nvcc cannot contract them into FMAs (the
// host code is compiled with -ffp-contract=off): given equal accelerations, a GPU step
// gives the bits of a CPU step. The damping factor is applied once per step, after the
// step's velocity update, as there.
//
// Position scaling: DirectSumCuda picks the exponent p from the largest |x|, |y|, |z| (and
// softening) at each call. Here the drift kernel measures that extent on the device
// (atomicMax on the bits of non-negative doubles), it comes back as 8 bytes with the
// end-of-step synchronisation, and the next step's forces use it: one drift late, which
// changes nothing in the results (scaling by powers of two is exact) and only serves to
// keep float r^2 in range, so no step waits on the host mid-way.
//
// Every step ends with a stream synchronisation: the step's time is then real (the
// "gravity" phase is the CUDA-event time of packing plus the force kernels, "integrate" the
// rest), and an error is reported by the step that caused it.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gravity/cuda/cuda_check.cuh"
#include "gravity/cuda/direct_kernels.cuh"
#include "gravity/direct_cuda.hpp"
#include "gravity/unit_scaling.hpp"
#include "nbody/build_info.hpp"
#include "nbody/error.hpp"
#include "nbody/physics/pair_force.hpp"
#include "collisions/cuda/collision_engine.cuh"
#include "simulation/device_stepper.hpp"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody {
namespace cuda_resident {

namespace {

using cuda_direct::DeviceBuffer;
using cuda_direct::DirectForces;
using cuda_direct::Kernel;
using cuda_direct::Vec4;

enum class Scheme { Leapfrog, Euler, Kinematic };

/// The float64 state in device memory (SoA).
struct State {
  double *x, *y, *z, *vx, *vy, *vz, *ax, *ay, *az;
  const double* m;
  unsigned n;
};

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;

unsigned blocks_for(std::size_t n) {
  return unsigned(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Exact float64 operations, never contracted (see the top of the file).
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }

__device__ __forceinline__ double finite_abs(double v) {
  const double a = fabs(v);
  return a <= DBL_MAX ? a : 0.0;  // NaN and inf are ignored, as on the host
}

/// Max of v over the block's warps into *extent. Non-negative doubles order like their
/// bit patterns, so an integer atomicMax on the bits is a max of the doubles.
__device__ __forceinline__ void warp_max_to(double v, unsigned long long* extent) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, offset));
  if ((threadIdx.x & 31u) == 0) atomicMax(extent, static_cast<unsigned long long>(__double_as_longlong(v)));
}

/// The part of a step before the force evaluation, fused into one pass over the bodies,
/// plus the largest |x|, |y|, |z| for the next scaling:
///   Leapfrog   v += a dt/2; x += v dt                        (leapfrog.cpp, kick + drift)
///   Euler      v += a dt; v *= damping; x += v dt            (symplectic_euler.cpp)
///   Kinematic  x += v dt + a dt^2/2; v += a dt; v *= damping (kinematic.cpp)
/// `half` is 0.5 * dt (leapfrog) or 0.5 * dt * dt (kinematic), computed on the host as the
/// CPU code computes it.
/// v *= damping after a step's velocity update (seed 002); 1 leaves v untouched, exactly
/// as apply_damping() on the CPU.
__device__ __forceinline__ void damp(double& vx, double& vy, double& vz, double damping) {
  if (damping == 1.0) return;
  vx = mul(vx, damping);
  vy = mul(vy, damping);
  vz = mul(vz, damping);
}

template <Scheme S>
__global__ void open_step(State s, double dt, double half, double damping, unsigned long long* extent) {
  double largest = 0.0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    double x = s.x[i], y = s.y[i], z = s.z[i];
    double vx = s.vx[i], vy = s.vy[i], vz = s.vz[i];
    const double ax = s.ax[i], ay = s.ay[i], az = s.az[i];
    if constexpr (S == Scheme::Leapfrog) {
      vx = add(vx, mul(ax, half));
      vy = add(vy, mul(ay, half));
      vz = add(vz, mul(az, half));
      x = add(x, mul(vx, dt));
      y = add(y, mul(vy, dt));
      z = add(z, mul(vz, dt));
    } else if constexpr (S == Scheme::Euler) {
      vx = add(vx, mul(ax, dt));
      vy = add(vy, mul(ay, dt));
      vz = add(vz, mul(az, dt));
      damp(vx, vy, vz, damping);
      x = add(x, mul(vx, dt));
      y = add(y, mul(vy, dt));
      z = add(z, mul(vz, dt));
    } else {
      x = add(x, add(mul(vx, dt), mul(ax, half)));
      y = add(y, add(mul(vy, dt), mul(ay, half)));
      z = add(z, add(mul(vz, dt), mul(az, half)));
      vx = add(vx, mul(ax, dt));
      vy = add(vy, mul(ay, dt));
      vz = add(vz, mul(az, dt));
      damp(vx, vy, vz, damping);
    }
    s.x[i] = x;
    s.y[i] = y;
    s.z[i] = z;
    s.vx[i] = vx;
    s.vy[i] = vy;
    s.vz[i] = vz;
    largest = fmax(largest, fmax(finite_abs(x), fmax(finite_abs(y), finite_abs(z))));
  }
  warp_max_to(largest, extent);
}

/// Positions and masses into the direct kernels' layout, scaled by powers of two
/// (exact); padding bodies sit on the last body with mass 0, as in DirectSumCuda.
template <class Real>
__global__ void pack_bodies(State s, double position_scale, double mass_scale, unsigned n_padded,
                            Vec4<Real>* __restrict__ bodies) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_padded; i += gridDim.x * blockDim.x) {
    const unsigned k = i < s.n ? i : s.n - 1;
    bodies[i] = {Real(s.x[k] * position_scale), Real(s.y[k] * position_scale), Real(s.z[k] * position_scale),
                 i < s.n ? Real(s.m[k] * mass_scale) : Real(0)};
  }
}

/// a = G * out * 2^(q-2p) (DirectSumCuda's host loop, same order), then for the leapfrog
/// the closing kick v += a dt/2 and the damping.
template <class Real, bool Kick>
__global__ void finish_step(State s, const Vec4<Real>* __restrict__ out, double G, double acceleration_scale,
                            double half_dt, double damping) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    const Vec4<Real> o = out[i];
    const double ax = mul(mul(G, double(o.x)), acceleration_scale);
    const double ay = mul(mul(G, double(o.y)), acceleration_scale);
    const double az = mul(mul(G, double(o.z)), acceleration_scale);
    s.ax[i] = ax;
    s.ay[i] = ay;
    s.az[i] = az;
    if constexpr (Kick) {
      double vx = add(s.vx[i], mul(ax, half_dt));
      double vy = add(s.vy[i], mul(ay, half_dt));
      double vz = add(s.vz[i], mul(az, half_dt));
      damp(vx, vy, vz, damping);
      s.vx[i] = vx;
      s.vy[i] = vy;
      s.vz[i] = vz;
    }
  }
}

// ---- Diagnostics: block sums into per-block partials, then one ordered final sum --------
// (deterministic: no floating-point atomics).

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

/// Quantities summed over bodies (compute_diagnostics' loop and kinetic_energy()).
enum Moment { kMass, kPx, kPy, kPz, kMx, kMy, kMz, kLx, kLy, kLz, kKinetic, kMoments };

__global__ void moments_kernel(State s, double* __restrict__ partial) {
  double v[kMoments] = {};
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < s.n; i += gridDim.x * blockDim.x) {
    const double m = s.m[i];
    const double x = s.x[i], y = s.y[i], z = s.z[i], vx = s.vx[i], vy = s.vy[i], vz = s.vz[i];
    v[kMass] += m;
    v[kPx] += m * vx;
    v[kPy] += m * vy;
    v[kPz] += m * vz;
    v[kMx] += m * x;
    v[kMy] += m * y;
    v[kMz] += m * z;
    v[kLx] += m * (y * vz - z * vy);
    v[kLy] += m * (z * vx - x * vz);
    v[kLz] += m * (x * vy - y * vx);
    v[kKinetic] += 0.5 * m * (vx * vx + vy * vy + vz * vz);
  }
  block_sum<kMoments>(v, partial + std::size_t(blockIdx.x) * kMoments);
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




template <class Real>
class CudaStepper final : public DeviceStepper {
 public:
  CudaStepper(std::unique_ptr<cuda_direct::DeviceForces<Real>> forces, double G, double softening, Scheme scheme,
              double damping, const CollisionOptions& collisions, std::shared_ptr<ForceReducer> reducer)
      : forces_(std::move(forces)),
        G_(G),
        softening_(softening),
        scheme_(scheme),
        damping_(damping) {
    if (collisions.model != CollisionModel::None) {
      collisions_ = std::make_unique<cuda_collisions::CollisionEngine>(collisions);
    }
    reducer_ = std::move(reducer);
    // Several processes: each computes its share of the forces, one all-reduce sums them.
    // An algorithm that cannot split computes everything on every process (no sum).
    sharing_ = reducer_ && reducer_->parts() > 1 && forces_->set_share(reducer_->part(), reducer_->parts());
    NBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (auto& e : events_) NBODY_CUDA_CHECK(cudaEventCreate(&e));
    extent_.reserve(1, "position extent");
    extent_host_.reserve(1);
    result_.reserve(kMoments + 1, "diagnostics");
    result_host_.reserve(kMoments + 1);
  }
  ~CudaStepper() override {
    for (auto& e : events_) {
      if (e) cudaEventDestroy(e);
    }
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaStepper(const CudaStepper&) = delete;
  CudaStepper& operator=(const CudaStepper&) = delete;

  [[nodiscard]] std::string solver_name() const override {
    return forces_->name() + (std::is_same_v<Real, float> ? "-float" : "-double") + "-resident";
  }

  void upload(const ParticleSystem& ps) override {
    const std::size_t n = ps.size();
    if (n > cuda_direct::kMaxBodies) {
      cuda_direct::check_capacity(n, std::is_same_v<Real, float> ? Precision::Float : Precision::Double);  // throws
    }
    for (auto* a : {&x_, &y_, &z_, &vx_, &vy_, &vz_, &ax_, &ay_, &az_, &m_, &r_}) a->reserve(std::max<std::size_t>(n, 1), "state");
    id_.reserve(std::max<std::size_t>(n, 1), "state");
    forces_->reserve(std::max<std::size_t>(n, 1));
    n_ = n;
    time_ = ps.time;
    const std::size_t bytes = n * sizeof(double);
    const std::pair<const std::vector<double>*, double*> copies[] = {
        {&ps.x, x_.data()}, {&ps.y, y_.data()}, {&ps.z, z_.data()},       {&ps.vx, vx_.data()},
        {&ps.vy, vy_.data()}, {&ps.vz, vz_.data()}, {&ps.mass, m_.data()}, {&ps.radius, r_.data()}};
    for (const auto& [from, to] : copies) {
      NBODY_CUDA_CHECK(cudaMemcpyAsync(to, from->data(), bytes, cudaMemcpyHostToDevice, stream_));
    }
    NBODY_CUDA_CHECK(cudaMemcpyAsync(id_.data(), ps.id.data(), n * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_));
    accelerations_valid_ = ps.accelerations_valid() && ps.ax.size() == n && ps.ay.size() == n && ps.az.size() == n;
    if (accelerations_valid_) {
      NBODY_CUDA_CHECK(cudaMemcpyAsync(ax_.data(), ps.ax.data(), bytes, cudaMemcpyHostToDevice, stream_));
      NBODY_CUDA_CHECK(cudaMemcpyAsync(ay_.data(), ps.ay.data(), bytes, cudaMemcpyHostToDevice, stream_));
      NBODY_CUDA_CHECK(cudaMemcpyAsync(az_.data(), ps.az.data(), bytes, cudaMemcpyHostToDevice, stream_));
    }
    // The scaling DirectSumCuda would use for these bodies.
    double extent = std::isfinite(softening_) ? std::abs(softening_) : 0.0;
    for (const auto* v : {&ps.x, &ps.y, &ps.z}) extent = largest_finite_magnitude(*v, extent);
    set_position_exponent(extent);
    mass_exponent_ = cuda_direct::scale_exponent(largest_finite_magnitude(ps.mass, 0.0), cuda_direct::kMassExponentLimit);
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host arrays may change after this
  }

  void step(double dt) override {
    timed_pairs_ = 0;
    if (n_ > 0) {
      State s = state();
      unsigned blocks = blocks_for(n_);
      auto collide_and_refresh = [&] {  // merges lower n_
        collide();
        s = state();
        blocks = blocks_for(n_);
      };
      if (!accelerations_valid_) {  // ensure_accelerations()
        collide_and_refresh();
        compute_forces();
        finish_step<Real, false><<<blocks, kThreads, 0, stream_>>>(s, forces_->out(), G_, acceleration_scale(), 0.0, 1.0);
        NBODY_CUDA_CHECK_LAUNCH("finish_step");
        accelerations_valid_ = true;
        NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
        add_stage_times();  // before the step's own evaluation records the stage events again
      }
      NBODY_CUDA_CHECK(cudaMemsetAsync(extent_.data(), 0, sizeof(unsigned long long), stream_));
      switch (scheme_) {
        case Scheme::Leapfrog:
          open_step<Scheme::Leapfrog><<<blocks, kThreads, 0, stream_>>>(s, dt, 0.5 * dt, damping_, extent_.data());
          break;
        case Scheme::Euler:
          open_step<Scheme::Euler><<<blocks, kThreads, 0, stream_>>>(s, dt, 0.0, damping_, extent_.data());
          break;
        case Scheme::Kinematic:
          open_step<Scheme::Kinematic><<<blocks, kThreads, 0, stream_>>>(s, dt, 0.5 * dt * dt, damping_, extent_.data());
          break;
      }
      NBODY_CUDA_CHECK_LAUNCH("open_step");
      NBODY_CUDA_CHECK(cudaMemcpyAsync(extent_host_.data(), extent_.data(), sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, stream_));
      collide_and_refresh();
      compute_forces();
      if (scheme_ == Scheme::Leapfrog) {
        finish_step<Real, true><<<blocks, kThreads, 0, stream_>>>(s, forces_->out(), G_, acceleration_scale(), 0.5 * dt, damping_);
      } else {
        finish_step<Real, false><<<blocks, kThreads, 0, stream_>>>(s, forces_->out(), G_, acceleration_scale(), 0.0, 1.0);
      }
      NBODY_CUDA_CHECK_LAUNCH("finish_step");
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
      add_stage_times();
      for (int k = 0; k < timed_pairs_; ++k) {
        float ms = 0;
        NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[2 * k], events_[2 * k + 1]));
        gravity_seconds_ += double(ms) * 1e-3;
      }
      // The next step's scaling: the extent after this drift, and the softening.
      unsigned long long bits = 0;
      std::memcpy(&bits, extent_host_.data(), sizeof bits);
      double extent = 0;
      std::memcpy(&extent, &bits, sizeof extent);
      set_position_exponent(std::max(extent, std::isfinite(softening_) ? std::abs(softening_) : 0.0));
    }
    time_ += dt;
  }

  void download(ParticleSystem& ps) override {
    const std::size_t n = n_;
    for (auto* v : {&ps.x, &ps.y, &ps.z, &ps.vx, &ps.vy, &ps.vz, &ps.ax, &ps.ay, &ps.az, &ps.mass, &ps.radius}) v->resize(n);
    ps.id.resize(n);
    const std::size_t bytes = n * sizeof(double);
    const std::pair<const double*, std::vector<double>*> copies[] = {
        {x_.data(), &ps.x},   {y_.data(), &ps.y},   {z_.data(), &ps.z},     {vx_.data(), &ps.vx},
        {vy_.data(), &ps.vy}, {vz_.data(), &ps.vz}, {m_.data(), &ps.mass},  {r_.data(), &ps.radius},
        {ax_.data(), &ps.ax}, {ay_.data(), &ps.ay}, {az_.data(), &ps.az}};
    if (n > 0) {
      for (const auto& [from, to] : copies) {
        if (to == &ps.ax && !accelerations_valid_) break;
        NBODY_CUDA_CHECK(cudaMemcpyAsync(to->data(), from, bytes, cudaMemcpyDeviceToHost, stream_));
      }
      NBODY_CUDA_CHECK(cudaMemcpyAsync(ps.id.data(), id_.data(), n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream_));
      NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    ps.time = time_;
    if (accelerations_valid_) {
      ps.set_accelerations_valid();
    } else {
      ps.invalidate_accelerations();
    }
  }

  [[nodiscard]] Diagnostics diagnostics() override {
    Diagnostics d;
    if (n_ == 0) return d;
    const State s = state();
    const unsigned moment_blocks = blocks_for(n_);
    const unsigned potential_blocks = blocks_for((n_ + 1) / 2);
    partial_.reserve(std::size_t(moment_blocks) * kMoments + potential_blocks, "diagnostics partial sums");
    double* moment_partial = partial_.data();
    double* potential_partial = partial_.data() + std::size_t(moment_blocks) * kMoments;
    moments_kernel<<<moment_blocks, kThreads, 0, stream_>>>(s, moment_partial);
    NBODY_CUDA_CHECK_LAUNCH("moments_kernel");
    potential_kernel<<<potential_blocks, kThreads, 0, stream_>>>(s, softening_ * softening_, potential_partial);
    NBODY_CUDA_CHECK_LAUNCH("potential_kernel");
    sum_partials<<<1, 32, 0, stream_>>>(moment_partial, moment_blocks, kMoments, result_.data());
    NBODY_CUDA_CHECK_LAUNCH("sum_partials");
    sum_partials<<<1, 32, 0, stream_>>>(potential_partial, potential_blocks, 1, result_.data() + kMoments);
    NBODY_CUDA_CHECK_LAUNCH("sum_partials");
    NBODY_CUDA_CHECK(cudaMemcpyAsync(result_host_.data(), result_.data(), (kMoments + 1) * sizeof(double),
                                     cudaMemcpyDeviceToHost, stream_));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double* r = result_host_.data();
    // As compute_diagnostics() finishes them.
    d.total_mass = r[kMass];
    d.momentum = {r[kPx], r[kPy], r[kPz]};
    d.com = {r[kMx], r[kMy], r[kMz]};
    d.angular_momentum = {r[kLx], r[kLy], r[kLz]};
    if (d.total_mass > 0) {
      d.com = {d.com.x / d.total_mass, d.com.y / d.total_mass, d.com.z / d.total_mass};
      d.com_velocity = {d.momentum.x / d.total_mass, d.momentum.y / d.total_mass, d.momentum.z / d.total_mass};
    }
    d.kinetic = r[kKinetic];
    d.potential = G_ * r[kMoments];
    d.total_energy = d.kinetic + d.potential;
    d.virial_ratio = d.potential != 0.0 ? 2.0 * d.kinetic / std::abs(d.potential) : 0.0;
    return d;
  }

  [[nodiscard]] CollisionStats take_collision_stats() override { return std::exchange(collision_stats_, CollisionStats{}); }

  [[nodiscard]] std::vector<std::pair<std::string, double>> take_stage_seconds() override {
    auto s = std::move(stage_seconds_);
    stage_seconds_.clear();
    return s;
  }

  [[nodiscard]] double take_gravity_seconds() override {
    const double s = gravity_seconds_;
    gravity_seconds_ = 0;
    return s;
  }

  [[nodiscard]] double time() const override { return time_; }
  [[nodiscard]] std::size_t size() const override { return n_; }

 private:
  [[nodiscard]] State state() const {
    return {x_.data(), y_.data(), z_.data(), vx_.data(), vy_.data(), vz_.data(),
            ax_.data(), ay_.data(), az_.data(), m_.data(), unsigned(n_)};
  }

  void set_position_exponent(double extent) {
    position_exponent_ = cuda_direct::scale_exponent(extent, cuda_direct::kPositionExponentLimit);
  }
  [[nodiscard]] double acceleration_scale() const {
    return std::ldexp(1.0, mass_exponent_ - 2 * position_exponent_);
  }

  /// Pack + force kernels into forces_.out(), timed by a pair of events.
  void compute_forces() {
    const double position_scale = std::ldexp(1.0, -position_exponent_);
    const double mass_scale = std::ldexp(1.0, -mass_exponent_);
    const std::size_t padded = forces_->padded(n_);
    NBODY_CUDA_CHECK(cudaEventRecord(events_[2 * timed_pairs_], stream_));
    pack_bodies<Real><<<blocks_for(padded), kThreads, 0, stream_>>>(state(), position_scale, mass_scale,
                                                                    unsigned(padded), forces_->bodies());
    NBODY_CUDA_CHECK_LAUNCH("pack_bodies");
    forces_->launch(n_, Real(softening_ * position_scale), stream_);
    if (sharing_) forces_->exchange(*reducer_, n_, stream_);
    NBODY_CUDA_CHECK(cudaEventRecord(events_[2 * timed_pairs_ + 1], stream_));
    ++timed_pairs_;
  }

  /// The collision stage on the resident state (before each force evaluation). Merges
  /// lower n_; the stage synchronises the stream.
  void collide() {
    if (!collisions_) return;
    const cuda_collisions::BodyArrays b{x_.data(),  y_.data(),  z_.data(), vx_.data(), vy_.data(), vz_.data(),
                                        m_.data(),  r_.data(),  id_.data(), ax_.data(), ay_.data(), az_.data()};
    const CollisionStats st = collisions_->resolve(b, n_, stream_);
    collision_stats_.contacts += st.contacts;
    collision_stats_.merges += st.merges;
    collision_stats_.candidates += st.candidates;
    collision_stats_.passes += st.passes;
    collision_stats_.max_overlap = st.max_overlap;
    collision_stats_.energy_lost += st.energy_lost;
    collision_stats_.detect_seconds += st.detect_seconds;
    collision_stats_.resolve_seconds += st.resolve_seconds;
  }

  /// Adds the last evaluation's per-stage times (tree) to stage_seconds_.
  void add_stage_times() {
    for (const auto& stage : forces_->stage_ms()) {
      auto it = std::find_if(stage_seconds_.begin(), stage_seconds_.end(),
                             [&](const auto& p) { return p.first == stage.first; });
      if (it == stage_seconds_.end()) it = stage_seconds_.insert(stage_seconds_.end(), {stage.first, 0.0});
      it->second += stage.second * 1e-3;
    }
  }

  std::unique_ptr<cuda_direct::DeviceForces<Real>> forces_;
  std::unique_ptr<cuda_collisions::CollisionEngine> collisions_;
  CollisionStats collision_stats_{};
  std::vector<std::pair<std::string, double>> stage_seconds_;
  double G_;
  double softening_;
  Scheme scheme_;
  double damping_;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<ForceReducer> reducer_;
  bool sharing_ = false;
  cudaEvent_t events_[4] = {};
  int timed_pairs_ = 0;
  DeviceBuffer<double> x_, y_, z_, vx_, vy_, vz_, ax_, ay_, az_, m_, r_;
  DeviceBuffer<std::uint64_t> id_;
  DeviceBuffer<unsigned long long> extent_;
  cuda_direct::PinnedBuffer<unsigned long long> extent_host_;
  DeviceBuffer<double> partial_, result_;
  cuda_direct::PinnedBuffer<double> result_host_;
  std::size_t n_ = 0;
  double time_ = 0;
  bool accelerations_valid_ = false;
  int position_exponent_ = 0;
  int mass_exponent_ = 0;
  double gravity_seconds_ = 0;
};

}  // namespace
}  // namespace cuda_resident

std::unique_ptr<DeviceStepper> make_device_stepper(const GravityOptions& gravity, const IntegratorOptions& integrator,
                                                   const CollisionOptions& collisions,
                                                   std::shared_ptr<ForceReducer> reducer) {
  GravityOptions o = gravity;
  o.precision = resolve_precision(o.precision, o.algorithm);
  // The option checks (algorithm, kernel, block size, softening, a usable device) are the
  // GPU solver's: build one and drop it, so the messages are the same as with the solver.
  (void)make_gravity_solver(o);
  const std::string scheme_name = make_integrator(integrator)->name();  // checks scheme and damping
  const auto scheme = scheme_name == "euler"       ? cuda_resident::Scheme::Euler
                      : scheme_name == "kinematic" ? cuda_resident::Scheme::Kinematic
                                                   : cuda_resident::Scheme::Leapfrog;
  auto make = [&](auto real) -> std::unique_ptr<DeviceStepper> {
    using Real = decltype(real);
    std::unique_ptr<cuda_direct::DeviceForces<Real>> forces;
    NBODY_CUDA_CHECK(cudaSetDevice(gpu_in_use()));
    if (o.algorithm == "tree") {
      forces = std::make_unique<cuda_tree::TreeForces<Real>>(o.dim, o.theta, o.quadrupole);
    } else {
      const cuda_direct::KernelChoice k = cuda_direct::choose_kernel(o.kernel, o.block_size, o.deterministic);
      forces = std::make_unique<cuda_direct::DirectForces<Real>>(k.kernel, k.block, k.each_pair_once);
    }
    return std::make_unique<cuda_resident::CudaStepper<Real>>(std::move(forces), o.G, o.softening, scheme,
                                                              integrator.damping, collisions, std::move(reducer));
  };
  if (o.precision == Precision::Float) return make(float{});
  return make(double{});
}

}  // namespace nbody
