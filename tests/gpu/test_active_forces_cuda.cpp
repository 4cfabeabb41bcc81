// The forces of the active bodies alone on the GPU (hierarchical time steps, issue #19):
// DeviceForces::launch_active() on a subset against launch() at those entries (direct sum and
// tree, 2D and 3D, with and without the potentials), the solver's compute_forces_active().
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "core/cuda/launch.cuh"
#include "gpu/block_steps_helpers.hpp"
#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "tree/cuda/tree_gpu.cuh"

namespace nbody {
namespace {

using block_steps_test::kSoftening;
using block_steps_test::plummer;
using gpu::Vec4;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

// ---- launch_active against launch --------------------------------------------------------------

/// bodies() as the stepper packs them: (x, y, z, m), z = 0 in 2D, padding on the last body
/// with mass 0.
template <class Real>
std::vector<Vec4<Real>> packed(const ParticleSystem& ps, std::size_t padded) {
  std::vector<Vec4<Real>> b(padded);
  for (std::size_t i = 0; i < padded; ++i) {
    const std::size_t k = std::min(i, ps.size() - 1);
    b[i] = {Real(ps.x[k]), Real(ps.y[k]), ps.dim == 2 ? Real(0) : Real(ps.z[k]),
            i < ps.size() ? Real(ps.mass[k]) : Real(0)};
  }
  return b;
}

/// One launch (all bodies) or launch_active (the listed ones) on a fresh stream; out() back.
template <class Real>
std::vector<Vec4<Real>> forces_of(cuda_gravity::DeviceForces<Real>& f, const ParticleSystem& ps,
                                  Real eps, bool potential, const std::vector<unsigned>* active) {
  const std::size_t n = ps.size();
  f.reserve(n);
  const std::vector<Vec4<Real>> bodies = packed<Real>(ps, f.padded(n));
  check(cudaMemcpy(f.bodies(), bodies.data(), bodies.size() * sizeof(Vec4<Real>),
                   cudaMemcpyHostToDevice),
        "cudaMemcpy bodies");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  unsigned* list = nullptr;
  if (active) {
    check(cudaMalloc(&list, std::max<std::size_t>(active->size(), 1) * sizeof(unsigned)),
          "cudaMalloc");
    check(
        cudaMemcpy(list, active->data(), active->size() * sizeof(unsigned), cudaMemcpyHostToDevice),
        "cudaMemcpy active");
    f.launch_active(n, eps, stream, potential, list, active->size());
  } else {
    f.launch(n, eps, stream, potential);
  }
  check(cudaStreamSynchronize(stream), "launch");
  std::vector<Vec4<Real>> out(n);
  check(cudaMemcpy(out.data(), f.out(), n * sizeof(Vec4<Real>), cudaMemcpyDeviceToHost),
        "cudaMemcpy out");
  if (list) check(cudaFree(list), "cudaFree");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return out;
}

/// A seeded subset of [0, n), ascending, about `fraction` of it (at least one body).
std::vector<unsigned> subset(std::size_t n, double fraction, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned> s;
  for (std::size_t i = 0; i < n; ++i)
    if (double(rng() >> 11) * 0x1.0p-53 < fraction) s.push_back(unsigned(i));
  if (s.empty()) s.push_back(unsigned(n / 2));
  return s;
}

/// launch_active(subset) against launch() at the subset's entries: the worst body's
/// relative difference of the acceleration (and of the potential), under `tolerance`.
template <class Real>
void expect_active_matches(cuda_gravity::DeviceForces<Real>& f, const ParticleSystem& ps, Real eps,
                           bool potential, const std::vector<unsigned>& active, double tolerance,
                           const std::string& what) {
  const std::vector<Vec4<Real>> full = forces_of<Real>(f, ps, eps, potential, nullptr);
  const std::vector<Vec4<Real>> part = forces_of<Real>(f, ps, eps, potential, &active);
  // Accelerations norm-wise (||d|| / ||a||), and body by body against the larger of its
  // |a| and the rms |a| (a float sum whose pulls nearly cancel keeps only the absolute
  // rounding of its terms); potentials (never near 0 here) body by body.
  auto norm = [](const Vec4<Real>& v) {
    return std::sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
  };
  auto difference = [](const Vec4<Real>& u, const Vec4<Real>& v) {
    const double dx = double(u.x) - v.x, dy = double(u.y) - v.y, dz = double(u.z) - v.z;
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  };
  double d2 = 0, a2 = 0;
  for (const unsigned i : active) {
    d2 += difference(part[i], full[i]) * difference(part[i], full[i]);
    a2 += norm(full[i]) * norm(full[i]);
  }
  const double relative = a2 > 0 ? std::sqrt(d2 / a2) : std::sqrt(d2);
  const double rms = std::sqrt(a2 / double(active.size()));
  double worst = 0, worst_phi = 0;
  for (const unsigned i : active) {
    const double scale = std::max(norm(full[i]), rms);
    worst = std::max(worst, scale > 0 ? difference(part[i], full[i]) / scale : 0.0);
    if (potential) {
      worst_phi = std::max(
          worst_phi, std::abs(double(part[i].w) - double(full[i].w)) / std::abs(double(full[i].w)));
    }
  }
  std::printf(
      "[ measured ] launch_active %s, %zu of %zu bodies: acceleration %.3e (worst body %.3e), "
      "potential %.3e\n",
      what.c_str(), active.size(), ps.size(), relative, worst, worst_phi);
  EXPECT_LE(relative, tolerance) << what;
  EXPECT_LE(worst, 10 * tolerance) << what;
  EXPECT_LE(worst_phi, tolerance) << what;
}

template <class Real>
void direct_active_cases(const std::string& precision, double tolerance) {
  struct Kernel {
    const char* name;
    cuda_direct::Kernel kernel;
    int block;
    bool each_pair_once;
    std::size_t n;
  };
  // fast below kMutualMinBodies (one-sided), fast above it (each pair once: launch() uses
  // another layout and atomics), tiled (the library's rsqrt).
  const Kernel kernels[] = {{"fast", cuda_direct::Kernel::Fast, 512, true, 2000},
                            {"fast-mutual", cuda_direct::Kernel::Fast, 512, true, 17000},
                            {"tiled", cuda_direct::Kernel::Tiled, 256, false, 2000}};
  for (const Kernel& k : kernels) {
    for (const int dim : {3, 2}) {
      const ParticleSystem ps = plummer(k.n, 5 + k.n, dim);
      cuda_direct::DirectForces<Real> f(k.kernel, k.block, k.each_pair_once);
      for (const double eps : {kSoftening, 0.0}) {
        for (const bool potential : {false, true}) {
          for (const double fraction : {0.1, 0.002, 1.0}) {
            const std::string what = std::string("direct ") + k.name + " " + precision + " " +
                                     std::to_string(dim) + "D eps " + std::to_string(eps) +
                                     (potential ? " +phi" : "") + " fraction " +
                                     std::to_string(fraction);
            expect_active_matches<Real>(f, ps, Real(eps), potential,
                                        subset(ps.size(), fraction, 11), tolerance, what);
          }
        }
      }
    }
  }
}

TEST(GpuActiveForces, DirectMatchesTheFullLaunch) {
  NBODY_SKIP_WITHOUT_GPU();
  gpu::select_gpu();
  direct_active_cases<double>("double", 1e-12);
  direct_active_cases<float>("float", 1e-5);
}

template <class Real>
void tree_active_cases(const std::string& precision, double tolerance) {
  for (const int dim : {3, 2}) {
    for (const bool quadrupole : {false, true}) {
      const ParticleSystem ps = plummer(5000, 17, dim);
      cuda_tree::TreeForces<Real> f(dim, 0.5, quadrupole);
      for (const double eps : {kSoftening, 0.0}) {
        for (const bool potential : {false, true}) {
          for (const double fraction : {0.1, 0.002, 1.0}) {
            const std::string what = "tree " + precision + " " + std::to_string(dim) + "D" +
                                     (quadrupole ? " quadrupole" : "") + " eps " +
                                     std::to_string(eps) + (potential ? " +phi" : "") +
                                     " fraction " + std::to_string(fraction);
            expect_active_matches<Real>(f, ps, Real(eps), potential,
                                        subset(ps.size(), fraction, 13), tolerance, what);
          }
        }
      }
    }
  }
}

// The same tree, and each active body walked with its whole group's box: the interaction
// lists of the full walk, so the same sums up to the order of float rounding.
TEST(GpuActiveForces, TreeMatchesTheFullLaunch) {
  NBODY_SKIP_WITHOUT_GPU();
  gpu::select_gpu();
  tree_active_cases<float>("float", 1e-6);
  tree_active_cases<double>("double", 1e-12);
}

// The walk's second pass (groups whose lists pass the entry budget, body by body) in the
// active walk too: a budget of 64 sends almost every group there.
TEST(GpuActiveForces, TreeSecondPassMatchesTheFullLaunch) {
  NBODY_SKIP_WITHOUT_GPU();
  gpu::select_gpu();
  ASSERT_EQ(setenv("NBODY_TREE_ENTRY_BUDGET", "64", 1), 0);
  const ParticleSystem ps = plummer(5000, 23);
  cuda_tree::TreeForces<float> f(3, 0.5, false);
  expect_active_matches<float>(f, ps, float(kSoftening), true, subset(ps.size(), 0.1, 3), 1e-6,
                               "tree float, second pass");
  unsetenv("NBODY_TREE_ENTRY_BUDGET");
}

// Regression (2026-11-30): the each-pair-once kernel's first launch copied its task list with
// a cudaMemcpy on the legacy stream, which may return before the data reach the device, and
// the launch's non-blocking stream did not wait for it: a kernel that ran first summed nothing
// (every acceleration exactly 0, once in a GPU suite of processes sharing the device). Here a
// large copy on another stream keeps the copy engine busy at each first launch of a new
// DirectForces, whose forces must still be those of an undisturbed launch.
TEST(GpuActiveForces, FirstMutualLaunchWaitsForItsTasks) {
  NBODY_SKIP_WITHOUT_GPU();
  gpu::select_gpu();
  const ParticleSystem ps = plummer(17000, 61);
  cuda_direct::DirectForces<double> quiet(cuda_direct::Kernel::Fast, 512, true);
  const std::vector<Vec4<double>> want = forces_of<double>(quiet, ps, kSoftening, false, nullptr);
  const std::size_t big = std::size_t(256) << 20;
  void* host = nullptr;
  void* device = nullptr;
  check(cudaMallocHost(&host, big), "cudaMallocHost");
  check(cudaMalloc(&device, big), "cudaMalloc");
  cudaStream_t busy = nullptr, stream = nullptr;
  check(cudaStreamCreateWithFlags(&busy, cudaStreamNonBlocking), "busy stream");
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  const std::vector<Vec4<double>> bodies = packed<double>(ps, ps.size());
  for (int round = 0; round < 8; ++round) {
    cuda_direct::DirectForces<double> f(cuda_direct::Kernel::Fast, 512, true);
    f.reserve(ps.size());
    check(cudaMemcpy(f.bodies(), bodies.data(), bodies.size() * sizeof(Vec4<double>),
                     cudaMemcpyHostToDevice),
          "bodies");
    check(cudaDeviceSynchronize(), "upload");
    check(cudaMemcpyAsync(device, host, big, cudaMemcpyHostToDevice, busy), "busy copy");
    f.launch(ps.size(), kSoftening, stream, false);
    check(cudaStreamSynchronize(stream), "launch");
    std::vector<Vec4<double>> got(ps.size());
    check(
        cudaMemcpy(got.data(), f.out(), got.size() * sizeof(Vec4<double>), cudaMemcpyDeviceToHost),
        "out");
    double d2 = 0, a2 = 0;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const double dx = got[i].x - want[i].x, dy = got[i].y - want[i].y, dz = got[i].z - want[i].z;
      d2 += dx * dx + dy * dy + dz * dz;
      a2 += want[i].x * want[i].x + want[i].y * want[i].y + want[i].z * want[i].z;
    }
    EXPECT_LE(std::sqrt(d2 / a2), 1e-12) << "round " << round;
    check(cudaDeviceSynchronize(), "busy copy");
  }
  check(cudaStreamDestroy(busy), "busy stream");
  check(cudaStreamDestroy(stream), "stream");
  check(cudaFree(device), "cudaFree");
  check(cudaFreeHost(host), "cudaFreeHost");
}

// The per-call solver (a CPU Simulation with --gravity on the GPU): compute_forces_active
// keeps the other bodies' entries and the flags.
TEST(GpuActiveForces, SolverComputesTheListedBodies) {
  NBODY_SKIP_WITHOUT_GPU();
  for (const GravityAlgorithm algorithm : {GravityAlgorithm::Direct, GravityAlgorithm::Tree}) {
    GravityOptions g = test::gravity_options(Device::Gpu, algorithm, Precision::Double, kSoftening);
    std::unique_ptr<GravitySolver> solver = make_gravity_solver(g);
    ParticleSystem full = plummer(3000, 29);
    ParticleSystem part = full;
    solver->compute_forces(full, true);
    part.ax.assign(part.size(), 7.0);
    part.ay.assign(part.size(), 7.0);
    part.az.assign(part.size(), 7.0);
    part.potential.assign(part.size(), 7.0);
    const std::vector<unsigned> listed = subset(part.size(), 0.05, 31);
    solver->compute_forces_active(part, true,
                                  std::vector<std::uint32_t>(listed.begin(), listed.end()));
    EXPECT_FALSE(part.accelerations_valid()) << solver->name() << ": flags untouched";
    std::size_t k = 0;
    double worst = 0;
    for (std::size_t i = 0; i < part.size(); ++i) {
      if (k < listed.size() && listed[k] == i) {
        ++k;
        worst = std::max(
            {worst, std::abs(part.ax[i] - full.ax[i]) / std::abs(full.ax[i]),
             std::abs(part.potential[i] - full.potential[i]) / std::abs(full.potential[i])});
      } else {
        ASSERT_EQ(part.ax[i], 7.0) << solver->name() << ": body " << i << " is not listed";
        ASSERT_EQ(part.potential[i], 7.0) << solver->name() << ": body " << i;
      }
    }
    std::printf("[ measured ] %s compute_forces_active: worst relative difference %.3e\n",
                solver->name().c_str(), worst);
    EXPECT_LE(worst, 1e-10) << solver->name();
  }
}

}  // namespace
}  // namespace nbody
