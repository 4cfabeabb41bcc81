// --deterministic on the GPU (issue 9): the same input gives the same bits run after run,
// and a run continued from a checkpoint of its state (positions, velocities, valid
// accelerations, time, step, collision totals) ends bit for bit where an uninterrupted
// run ends. Covered: the direct sum above the each-pair-once threshold (which
// --deterministic turns off), the tree, and both collision models with their energy
// bookkeeping. Every test skips itself when the machine has no usable CUDA device.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "backend_test.hpp"
#include "nbody/collisions.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

constexpr double kDt = 2e-3;

struct Case {
  std::string name;
  GravityOptions gravity;
  CollisionOptions collisions;
  double radius = 0;
};

ParticleSystem cluster(std::size_t n, double radius) {
  ModelOptions m;
  m.model = "plummer";
  m.n = n;
  m.seed = 9;
  m.radius = radius;
  return generate(m);
}

/// The GPU with --deterministic, softening 0.01.
GravityOptions gpu(GravityAlgorithm algorithm, Precision p) {
  GravityOptions g = test::gravity_options(Device::Gpu, algorithm, p, 0.01);
  g.deterministic = true;
  return g;
}

std::vector<Case> cases() {
  CollisionOptions bounce;
  bounce.model = CollisionModel::Bounce;
  bounce.restitution = 0.5;
  CollisionOptions merge;
  merge.model = CollisionModel::Merge;
  // 20000 bodies: above the 16384 from which the fast direct kernel would use atomics.
  return {{"direct-float", gpu(GravityAlgorithm::Direct, Precision::Float), {}, 0},
          {"direct-double", gpu(GravityAlgorithm::Direct, Precision::Double), {}, 0},
          {"tree-float", gpu(GravityAlgorithm::Tree, Precision::Float), {}, 0},
          {"direct-bounce", gpu(GravityAlgorithm::Direct, Precision::Float), bounce, 0.004},
          {"tree-merge", gpu(GravityAlgorithm::Tree, Precision::Float), merge, 0.004}};
}

struct Outcome {
  ParticleSystem state;
  Diagnostics diagnostics;
  CollisionTotals collisions;
};

Outcome run(const Case& s, ParticleSystem start, int steps, std::uint64_t steps_before = 0,
            const CollisionTotals& totals = {}) {
  Simulation sim(std::move(start), s.gravity, IntegratorOptions{}, s.collisions);
  if (steps_before > 0) sim.resume(steps_before, totals);
  for (int k = 0; k < steps; ++k) sim.step(kDt);
  Outcome out{sim.particles(), sim.diagnostics(), sim.collision_totals()};
  EXPECT_EQ(sim.steps_done(), steps_before + std::uint64_t(steps));
  return out;
}

void expect_same_outcome(const Outcome& a, const Outcome& b, const std::string& what) {
  test::expect_same_state(a.state, b.state, what);
  EXPECT_EQ(a.state.id, b.state.id) << what;
  EXPECT_EQ(a.state.mass, b.state.mass) << what;
  EXPECT_EQ(a.diagnostics.kinetic, b.diagnostics.kinetic) << what;
  EXPECT_EQ(a.diagnostics.potential, b.diagnostics.potential) << what;
  EXPECT_EQ(a.collisions.contacts, b.collisions.contacts) << what;
  EXPECT_EQ(a.collisions.merges, b.collisions.merges) << what;
  EXPECT_EQ(a.collisions.energy_lost, b.collisions.energy_lost) << what;
}

TEST(GpuDeterministic, SameInputSameBitsRunAfterRun) {
  NBODY_SKIP_WITHOUT_GPU();
  for (const Case& s : cases()) {
    const ParticleSystem start = cluster(20000, s.radius);
    const Outcome first = run(s, start, 8);
    const Outcome second = run(s, start, 8);
    expect_same_outcome(first, second, s.name + ": two runs");
    if (s.collisions.model != CollisionModel::None) {
      EXPECT_GT(first.collisions.contacts, 0u) << s.name << ": the test needs contacts";
    }
  }
}

TEST(GpuDeterministic, RestartFromCheckpointStateEqualsUninterruptedRun) {
  NBODY_SKIP_WITHOUT_GPU();
  for (const Case& s : cases()) {
    const ParticleSystem start = cluster(20000, s.radius);
    const Outcome whole = run(s, start, 12);
    // The checkpoint: what a run writes after 5 steps (accelerations valid, time, totals).
    const Outcome first_part = run(s, start, 5);
    ASSERT_TRUE(first_part.state.accelerations_valid()) << s.name;
    const Outcome resumed = run(s, first_part.state, 7, 5, first_part.collisions);
    expect_same_outcome(resumed, whole, s.name + ": 5 steps, checkpoint, 7 steps vs 12 steps");
  }
}

}  // namespace
}  // namespace nbody
