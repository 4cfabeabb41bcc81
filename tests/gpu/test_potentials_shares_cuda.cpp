// The potentials in the shares of several processes on the GPU (DeviceForces::exchange,
// thread "ranks"): the tree's chunks bit for bit, the each-pair-once direct sum's tasks to
// rounding, against one process. Skips itself without a usable CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "gpu/cuda_copies.hpp"
#include "gpu/potentials_helpers.hpp"
#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/error.hpp"
#include "nbody/initial_conditions.hpp"
#include "thread_ranks.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using potentials_test::kSoftening;

// ---- Several processes: the shares carry the potentials ---------------------------------

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

/// out() of one DeviceForces launch with the potentials on ps (taken as scaled units:
/// O(1) positions and masses), as share `part` of `parts` followed by the exchange when a
/// reducer is given.
template <class Real>
std::vector<gpu::Vec4<Real>> shared_out(cuda_gravity::DeviceForces<Real>& forces,
                                        const ParticleSystem& ps, ForceReducer* reducer) {
  if (reducer) forces.set_share(reducer->part(), reducer->parts());  // before padded(): the
  // each-pair-once plan pads differently when shared
  const std::size_t n = ps.size(), padded = forces.padded(n);
  std::vector<gpu::Vec4<Real>> bodies(padded);
  for (std::size_t i = 0; i < padded; ++i) {
    const std::size_t k = std::min(i, n - 1);  // padding: on the last body, mass 0
    bodies[i] = {Real(ps.x[k]), Real(ps.y[k]), Real(ps.z[k]), i < n ? Real(ps.mass[k]) : Real(0)};
  }
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  forces.reserve(n);
  check(cudaMemcpy(forces.bodies(), bodies.data(), padded * sizeof(bodies[0]),
                   cudaMemcpyHostToDevice),
        "cudaMemcpy bodies");
  forces.launch(n, Real(kSoftening), stream, true);
  if (reducer) forces.exchange(*reducer, n, stream);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<gpu::Vec4<Real>> out(n);
  check(cudaMemcpy(out.data(), forces.out(), n * sizeof(out[0]), cudaMemcpyDeviceToHost),
        "cudaMemcpy out");
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return out;
}

template <class Real, class Make>
void expect_shares_match(const char* name, const ParticleSystem& ps, Make make, double tolerance) {
  auto one_forces = make();
  const std::vector<gpu::Vec4<Real>> one = shared_out<Real>(*one_forces, ps, nullptr);
  for (int parts : {2, 3}) {
    const auto each = testing::run_parts<std::vector<gpu::Vec4<Real>>>(
        parts,
        [&](std::shared_ptr<ForceReducer> r) {
          auto forces = make();
          return shared_out<Real>(*forces, ps, r.get());
        },
        test::cuda_copies());
    for (int p = 0; p < parts; ++p) {
      const auto& got = each[std::size_t(p)];
      double worst = 0;
      for (std::size_t i = 0; i < ps.size(); ++i) {
        const double d = std::abs(double(got[i].w) - double(one[i].w)) / std::abs(double(one[i].w));
        worst = std::max(worst, d);
        if (tolerance == 0) {
          ASSERT_EQ(got[i].x, one[i].x) << name << " P=" << parts << " body " << i;
          ASSERT_EQ(got[i].z, one[i].z) << name << " P=" << parts << " body " << i;
          ASSERT_EQ(got[i].w, one[i].w) << name << " P=" << parts << " body " << i;
        }
      }
      EXPECT_LE(worst, tolerance) << name << " P=" << parts << " part " << p;
    }
  }
}

TEST(GpuSharedPotentials, TreeChunksAndEachPairOnceTasks) {
  NBODY_SKIP_WITHOUT_GPU();
  // 40000 bodies: 3 chunks of 16384 tree positions, dealt unevenly to 2 parts.
  ModelOptions m;
  m.n = 40000;
  m.seed = 8;
  const ParticleSystem ps = generate(m);
  expect_shares_match<float>(
      "tree float", ps,
      [] { return std::make_unique<cuda_tree::TreeForces<float>>(3, 0.5, false); }, 0.0);
  expect_shares_match<double>(
      "tree double quadrupole", ps,
      [] { return std::make_unique<cuda_tree::TreeForces<double>>(3, 0.5, true); }, 0.0);
  // Every parts-th task of the each-pair-once plan, partial sums added across the parts
  // (float atomics: equal to rounding).
  const ParticleSystem small = test::random_system(20000, 9);
  expect_shares_match<float>(
      "direct each pair once", small,
      [] {
        return std::make_unique<cuda_direct::DirectForces<float>>(cuda_direct::Kernel::Fast, 512,
                                                                  true);
      },
      1e-5);
}

}  // namespace
}  // namespace nbody
