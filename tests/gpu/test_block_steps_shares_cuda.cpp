// Hierarchical time steps on the GPU with several processes and with merges: the shares of
// thread "ranks" against one process, merges under adaptive steps (mass kept, the bins
// compacted along), and the time per step (disabled). Each skips itself without a device.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "backend_test.hpp"
#include "gpu/block_steps_helpers.hpp"
#include "gpu/cuda_copies.hpp"
#include "nbody/simulation.hpp"
#include "parallel/domain_gravity.hpp"
#include "thread_ranks.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using namespace block_steps_test;  // the helpers of this suite's files

constexpr double kPi = 3.14159265358979323846;

// ---- Several processes ---------------------------------------------------------------------

/// The thread "ranks"' copies, ordered on the stepper's stream as the ForceReducer's device
/// collectives must be (distributed.hpp: "ordered on `stream`"; NCCL is). The stepper's
/// stream is a non-blocking one, so a plain cudaMemcpy (the legacy default stream) is not
/// ordered with it: from pageable memory it returns once the bytes are staged, before the
/// DMA has landed, and the gathered shares' unpack_shares launched next read the previous
/// exchange's bytes at the end of the buffer (on an H200: 96 of 2700 copies, 76 of 100 runs
/// of the test below, where a step's last exchange alone once made 1451 bodies differ). Each
/// copy waits for its end: the host buffers are the reducer's temporaries.

// The processes' shares of the active bodies (thread "ranks", thread_ranks.hpp): the tree
// (each body walked by one process, its chunks gathered) bit for bit; the each-pair-once
// direct sum (one-sided slices of the active list with zeros at the others', then the
// sum; its full launches add float partial sums with atomics) to rounding.
TEST(GpuBlockSteps, SharesGiveOneProcessResult) {
  NBODY_SKIP_WITHOUT_GPU();
  struct Case {
    std::string name;
    SimulationOptions options;
    std::size_t n;
    bool exact;
  };
  // The GPU tree's adaptive steps decompose under mpirun (test_domain_block_steps_cuda.cpp);
  // with collisions they still share out the work (replicated state): bounces on, no radii.
  SimulationOptions shared_tree = tree_adaptive(Device::Gpu);
  shared_tree.collisions.model = CollisionModel::Bounce;
  shared_tree.collisions.device = Device::Gpu;
  ASSERT_FALSE(parallel::runs_decomposed(shared_tree));
  const Case cases[] = {
      {"tree float with collisions", shared_tree, 40000, true},
      {"direct float each pair once",
       adaptive_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Float, kSoftening), 20000,
       false}};
  constexpr int kShareSteps = 2;
  for (const Case& c : cases) {
    const ParticleSystem start = plummer(c.n, 23);
    const StepRun one = run_stepper(start, c.options, kShareSteps, kDt);
    for (const int parts : {2, 3}) {
      const std::vector<StepRun> each = testing::run_parts<StepRun>(
          parts,
          [&](std::shared_ptr<ForceReducer> r) {
            return run_stepper(start, c.options, kShareSteps, kDt, false, std::move(r));
          },
          test::cuda_copies());
      for (int p = 0; p < parts; ++p) {
        const std::string what =
            c.name + " P = " + std::to_string(parts) + " part " + std::to_string(p);
        const StepRun& got = each[std::size_t(p)];
        if (c.exact) {
          test::expect_same_state(got.end, one.end, what);
          EXPECT_EQ(got.bins, one.bins) << what;
          continue;
        }
        const double d = position_difference(got.end, one.end);
        std::printf(
            "[ measured ] %s: bins %s against %s, largest position difference / extent "
            "%.3e\n",
            what.c_str(), text(got.bins.back()).c_str(), text(one.bins.back()).c_str(), d);
        EXPECT_LE(d, 1e-6) << what;
      }
    }
  }
}

// ---- Merges -----------------------------------------------------------------------------------

/// A central mass, pairs of small bodies closing in on each other around it (deep bins,
/// touching mid-step), and far bodies in shallow bins.
ParticleSystem merging_system() {
  ParticleSystem ps;
  ps.add(Body{{0, 0, 0}, {0, 0, 0}, 1.0, 0.001, 0});
  for (int k = 0; k < 6; ++k) {
    const double angle = 2 * kPi * k / 6, r = 0.6 + 0.1 * k;
    const double cx = r * std::cos(angle), cy = r * std::sin(angle);
    const double tx = -std::sin(angle), ty = std::cos(angle);  // tangent
    const double vc = std::sqrt(1.0 / r);
    for (const double side : {-1.0, 1.0}) {
      const double gap = 0.02 + 0.01 * k;  // each pair touches at another time
      ps.add(Body{{cx + side * gap * tx, cy + side * gap * ty, 0.001 * k},
                  {vc * tx - side * 0.5 * tx, vc * ty - side * 0.5 * ty, 0},
                  1e-4,
                  0.004,
                  0});
    }
  }
  for (int k = 0; k < 10; ++k) {
    const double angle = 0.3 + 2 * kPi * k / 10, r = 3.0 + 0.1 * k;
    const double vc = std::sqrt(1.0 / r);
    ps.add(Body{{r * std::cos(angle), r * std::sin(angle), 0.01 * k},
                {-vc * std::sin(angle), vc * std::cos(angle), 0},
                1e-4,
                0.004,
                0});
  }
  return ps;
}

TEST(GpuBlockSteps, MergesCompactTheBins) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = merging_system();
  SimulationOptions o =
      adaptive_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Double, kSoftening);
  o.collisions = test::collision_options(CollisionModel::Merge);
  const StepRun a = run_stepper(start, o, kSteps, kDt);
  const StepRun b = run_stepper(start, o, kSteps, kDt);
  const double m0 = std::accumulate(start.mass.begin(), start.mass.end(), 0.0);
  const double m1 = std::accumulate(a.end.mass.begin(), a.end.mass.end(), 0.0);
  std::printf("[ measured ] merges: N %zu -> %zu, bins per step:", start.size(), a.end.size());
  for (const auto& bins : a.bins) std::printf(" %s", text(bins).c_str());
  std::printf(", substeps %llu\n", static_cast<unsigned long long>(a.substeps));
  EXPECT_LT(a.end.size(), start.size()) << "some pairs should have merged";
  EXPECT_NEAR(m1, m0, 1e-14 * m0) << "mass";
  for (std::size_t s = 0; s < a.bins.size(); ++s) {
    EXPECT_EQ(std::accumulate(a.bins[s].begin(), a.bins[s].end(), std::uint64_t(0)), a.sizes[s])
        << "step " << s + 1 << ": the bins count the bodies left, " << text(a.bins[s]);
    EXPECT_GT(a.bins[s].size(), 1u) << "step " << s + 1 << ": several bins expected";
  }
  for (std::size_t i = 0; i < a.end.size(); ++i) {
    EXPECT_TRUE(std::isfinite(a.end.x[i]) && std::isfinite(a.end.vx[i])) << "body " << a.end.id[i];
  }
  test::expect_same_state(a.end, b.end, "merging run repeated");
}

// ---- Timing (not a check; run with --gtest_also_run_disabled_tests) ----------------------------

TEST(GpuBlockSteps, DISABLED_TimePerStep) {
  NBODY_SKIP_WITHOUT_GPU();
  struct Case {
    const char* name;
    GravityAlgorithm algorithm;
    Precision precision;
    std::size_t n;
  };
  const Case cases[] = {{"tree float", GravityAlgorithm::Tree, Precision::Float, 1u << 20},
                        {"direct float", GravityAlgorithm::Direct, Precision::Float, 1u << 16}};
  for (const Case& c : cases) {
    const ParticleSystem start = plummer(c.n, 3);
    for (const TimestepMode mode : {TimestepMode::Fixed, TimestepMode::Adaptive}) {
      SimulationOptions o = adaptive_options(Device::Gpu, c.algorithm, c.precision, kSoftening);
      o.integrator.timestep = mode;
      (void)run_stepper(start, o, 1, 0.1);  // warm-up
      const auto t0 = std::chrono::steady_clock::now();
      const StepRun r = run_stepper(start, o, 3, 0.1);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf(
          "[ measured ] %s N=%zu %s: %.3f s per step (dt 0.1), substeps %llu, active "
          "evaluations / N %.2f, bins %s\n",
          c.name, c.n, mode == TimestepMode::Fixed ? "fixed" : "adaptive", s / 3,
          static_cast<unsigned long long>(r.substeps), double(r.active) / double(c.n),
          r.bins.empty() ? "[]" : text(r.bins.back()).c_str());
    }
  }
}

}  // namespace
}  // namespace nbody
