// Hierarchical (block) time steps on every backend, through Simulation: the bins follow the
// orbit, every bin in bin 0 is the fixed-step leapfrog bit for bit, the result does not
// depend on the run (deterministic, restartable), and the accuracy is that of the smallest
// bin's fixed step where the dynamics is smooth (docs/timesteps.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <numeric>
#include <vector>

#include "backend_test.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/simulation.hpp"

namespace nbody {
namespace {

using test::collision_options;
using test::gravity_options;
using test::simulation_options;
using test::tree_options;

constexpr double kTwoPi = 2 * std::numbers::pi;

IntegratorOptions adaptive(double eta = 0.025, double dt_min = 0) {
  IntegratorOptions i;
  i.timestep = TimestepMode::Adaptive;
  i.eta = eta;
  i.dt_min = dt_min;
  return i;
}

ParticleSystem model(const std::string& name, std::size_t n = 1000, double e = 0.5) {
  ModelOptions m;
  m.model = name;
  m.n = n;
  m.e = e;
  m.seed = 7;
  return generate(m);
}

/// A star of mass 1 and five planets of mass 1e-4 on circular orbits at radii 0.3 ... 4.8
/// (periods 1 ... 66): a smooth problem with a wide range of orbital times.
ParticleSystem planets() {
  ParticleSystem ps;
  ps.add(Body{{0, 0, 0}, {0, 0, 0}, 1.0, 0, 0});
  double r = 0.3;
  for (int k = 0; k < 5; ++k, r *= 2) {
    const double v = std::sqrt(1.0 / r);
    const double phase = 1.3 * k;
    ps.add(Body{{r * std::cos(phase), r * std::sin(phase), 0.01 * k},
                {-v * std::sin(phase), v * std::cos(phase), 0},
                1e-4,
                0,
                0});
  }
  return ps;
}

void expect_bitwise_equal(const ParticleSystem& a, const ParticleSystem& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  std::size_t differ = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    differ += a.x[i] != b.x[i] || a.y[i] != b.y[i] || a.z[i] != b.z[i] || a.vx[i] != b.vx[i] ||
              a.vy[i] != b.vy[i] || a.vz[i] != b.vz[i] || a.ax[i] != b.ax[i] ||
              a.ay[i] != b.ay[i] || a.az[i] != b.az[i];
  }
  EXPECT_EQ(differ, 0u) << what << ": bodies not bit-identical";
}

double energy_drift(Simulation& sim, double e0) {
  return std::abs((sim.diagnostics(EnergyMethod::Exact).total_energy - e0) / e0);
}

std::uint64_t bodies_in_bins(const TimestepStats& ts) {
  return std::accumulate(ts.bins.begin(), ts.bins.end(), std::uint64_t(0));
}

NBODY_BACKEND_TEST_SUITE(BlockSteps);

TEST_P(BlockSteps, EveryBodyInBinZeroIsTheLeapfrog) {
  const ParticleSystem start = model("plummer", 500);
  auto run = [&](const IntegratorOptions& integrator) {
    Simulation sim(start,
                   test::simulation_options(
                       gravity_options(device(), GravityAlgorithm::Direct, Precision::Auto, 0.01),
                       integrator));
    for (int s = 0; s < 5; ++s) sim.step(0.01);
    return sim;
  };
  Simulation fixed = run({});
  Simulation blocks = run(adaptive(1e12));  // wants steps far above dt: all in bin 0
  ASSERT_EQ(blocks.timestep_stats().bins.size(), 1u);
  EXPECT_EQ(blocks.timestep_stats().substeps, 5u);
  EXPECT_EQ(blocks.timestep_stats().force_evaluations, 5u * 500u);
  expect_bitwise_equal(blocks.particles(), fixed.particles(), "bin 0 against the leapfrog");
}

/// Kepler e = 0.9 from pericentre, point masses (the step rule without softening,
/// sqrt(2 eta |phi|) / |a|), `periods` orbits of 64 steps of dt each, with adaptive or
/// fixed steps of dt / 2^fixed_bin: the largest |dE/E| at the ends of the steps of dt,
/// the distance from the start at the end, and the deepest bin of each step.
struct KeplerRun {
  double max_drift = 0;
  double return_error = 0;
  std::vector<std::size_t> deepest;
  std::uint64_t evaluations = 0;
};

KeplerRun kepler_run(Device device, const IntegratorOptions& integrator, int fixed_bin,
                     int periods) {
  Simulation sim(model("kepler", 2, 0.9),
                 simulation_options(gravity_options(device, GravityAlgorithm::Direct), integrator));
  const ParticleSystem start = sim.particles();
  const double e0 = sim.diagnostics(EnergyMethod::Exact).total_energy;
  const double dt = kTwoPi / 64;
  KeplerRun out;
  for (int s = 0; s < 64 * periods; ++s) {
    if (integrator.timestep == TimestepMode::Adaptive) {
      sim.step(dt);
      out.deepest.push_back(sim.timestep_stats().bins.size() - 1);
      EXPECT_EQ(bodies_in_bins(sim.timestep_stats()), 2u);
    } else {
      for (int k = 0; k < (1 << fixed_bin); ++k) sim.step(std::ldexp(dt, -fixed_bin));
    }
    out.max_drift = std::max(out.max_drift, energy_drift(sim, e0));
  }
  const ParticleSystem& end = sim.particles();
  for (std::size_t i = 0; i < 2; ++i) {
    out.return_error =
        std::max(out.return_error, std::hypot(end.x[i] - start.x[i], end.y[i] - start.y[i]));
  }
  out.evaluations = sim.timestep_stats().force_evaluations / 2;
  return out;
}

TEST_P(BlockSteps, EccentricKeplerOrbitChangesBinsAndReturns) {
  const KeplerRun a = kepler_run(device(), adaptive(0.0001), 0, 3);
  // Near pericentre (the first and last steps of each orbit) the step is far smaller than
  // at apocentre.
  const std::size_t at_peri = a.deepest.front(), at_apo = a.deepest[32];
  EXPECT_GE(at_peri, at_apo + 4) << "pericentre bin " << at_peri << ", apocentre " << at_apo;
  EXPECT_GE(a.deepest.back(), at_apo + 4);
  // The fixed step of the pericentre's bin, against which the adaptive run is measured.
  const KeplerRun f = kepler_run(device(), {}, int(at_peri), 3);
  std::printf(
      "kepler e = 0.9, 3 orbits: adaptive max |dE/E| %.3e, return %.3e, %llu evaluations;"
      " fixed dt/2^%zu: %.3e, return %.3e, %llu evaluations\n",
      a.max_drift, a.return_error, (unsigned long long)a.evaluations, at_peri, f.max_drift,
      f.return_error, (unsigned long long)f.evaluations);
  EXPECT_LE(a.max_drift, f.max_drift);
  EXPECT_LE(a.return_error, 2 * f.return_error);
  EXPECT_LT(a.return_error, 0.05);  // of the semi-major axis 1, after 3 orbits
  EXPECT_LT(4 * a.evaluations, f.evaluations);
}

TEST_P(BlockSteps, PlanetsAtAFractionOfTheCost) {
  // Planets around a star, 100 steps of dt = 0.25 (to t = 25, 25 inner orbits). Each planet
  // takes the step its orbit needs; the star, whose own acceleration is small, takes the
  // largest: its reflex motion is followed coarsely, the price of the acceleration rule
  // (docs/timesteps.md), which leaves the error within 4x of the fixed step of the deepest
  // bin at a third of its force evaluations (the inner planet, in the deepest bin, is one
  // body of six).
  const ParticleSystem start = planets();
  const SimulationOptions o =
      simulation_options(gravity_options(device(), GravityAlgorithm::Direct), adaptive(0.002));
  Simulation blocks(start, o);
  const double e0 = blocks.diagnostics(EnergyMethod::Exact).total_energy;
  const double dt = 0.25;
  std::size_t deepest = 0;
  for (int s = 0; s < 100; ++s) {
    blocks.step(dt);
    deepest = std::max(deepest, blocks.timestep_stats().bins.size() - 1);
  }
  ASSERT_GE(deepest, 3u) << "the test needs a range of bins";
  const double adaptive_drift = energy_drift(blocks, e0);

  SimulationOptions f = o;
  f.integrator = {};
  Simulation fixed(start, f);
  const double small = std::ldexp(dt, -int(deepest));
  for (int s = 0; s < int(100 * std::ldexp(1.0, int(deepest))); ++s) fixed.step(small);
  const double fixed_drift = energy_drift(fixed, e0);
  std::printf(
      "planets: adaptive |dE/E| %.3e (%.4g evaluations per body), fixed dt/2^%zu %.3e "
      "(%.4g)\n",
      adaptive_drift, double(blocks.timestep_stats().force_evaluations) / 6.0, deepest, fixed_drift,
      double(fixed.timestep_stats().force_evaluations) / 6.0);
  EXPECT_LE(adaptive_drift, 4 * fixed_drift);
  EXPECT_LT(3 * blocks.timestep_stats().force_evaluations,
            fixed.timestep_stats().force_evaluations);
}

TEST_P(BlockSteps, DeterministicAndRestartable) {
  for (const double softening : {0.01, 0.0}) {
    const ParticleSystem start = softening > 0 ? model("plummer", 400) : planets();
    const SimulationOptions o = simulation_options(
        gravity_options(device(), GravityAlgorithm::Direct, Precision::Auto, softening),
        adaptive(0.01));
    const double dt = softening > 0 ? 0.05 : 0.25;
    Simulation whole(start, o);
    for (int s = 0; s < 6; ++s) whole.step(dt);
    Simulation again(start, o);
    for (int s = 0; s < 6; ++s) again.step(dt);
    expect_bitwise_equal(again.particles(), whole.particles(), "a second run");
    EXPECT_EQ(again.timestep_stats().bins, whole.timestep_stats().bins);

    // A checkpoint holds the state and its accelerations, not the potentials.
    Simulation first(start, o);
    for (int s = 0; s < 3; ++s) first.step(dt);
    ParticleSystem saved = first.particles();
    saved.invalidate_potentials();
    ASSERT_TRUE(saved.accelerations_valid());
    Simulation resumed(std::move(saved), o);
    for (int s = 0; s < 3; ++s) resumed.step(dt);
    expect_bitwise_equal(resumed.particles(), whole.particles(),
                         softening > 0 ? "restart (softened)" : "restart (point masses)");
  }
}

TEST_P(BlockSteps, TreeAndPlanarRuns) {
  // The tree's active bodies in 3D and 2D: bins spread, energy kept, a planar system stays
  // planar.
  for (const int dim : {3, 2}) {
    ModelOptions m;
    m.model = "plummer";
    m.n = 2000;
    m.seed = 3;
    m.dim = dim;
    Simulation sim(generate(m), simulation_options(
                                    tree_options(device(), Precision::Float, 0.5, dim, false, 0.01),
                                    adaptive()));
    const double e0 = sim.diagnostics(EnergyMethod::Exact).total_energy;
    for (int s = 0; s < 5; ++s) sim.step(0.05);
    const TimestepStats& ts = sim.timestep_stats();
    EXPECT_GE(ts.bins.size(), 3u) << "dim " << dim;
    EXPECT_EQ(bodies_in_bins(ts), 2000u);
    EXPECT_LT(double(ts.force_evaluations),
              0.75 * 5 * 2000 * std::ldexp(1.0, int(ts.bins.size() - 1)));
    EXPECT_LT(energy_drift(sim, e0), 5e-3) << "dim " << dim;
    if (dim == 2) {
      const ParticleSystem& ps = sim.particles();
      EXPECT_TRUE(std::all_of(ps.z.begin(), ps.z.end(), [](double z) { return z == 0.0; }));
    }
  }
}

TEST_P(BlockSteps, MergesFollowTheBins) {
  ModelOptions m;
  m.model = "plummer";
  m.n = 600;
  m.seed = 5;
  m.radius = 0.02;
  ParticleSystem start = generate(m);
  const double mass0 = std::accumulate(start.mass.begin(), start.mass.end(), 0.0);
  Simulation sim(
      std::move(start),
      simulation_options(gravity_options(device(), GravityAlgorithm::Direct, Precision::Auto, 0.01),
                         adaptive(), collision_options(CollisionModel::Merge)));
  for (int s = 0; s < 5; ++s) sim.step(0.05);
  const ParticleSystem& ps = sim.particles();
  EXPECT_LT(ps.size(), 600u) << "no merges: the test needs some";
  EXPECT_EQ(bodies_in_bins(sim.timestep_stats()), ps.size());
  EXPECT_NEAR(std::accumulate(ps.mass.begin(), ps.mass.end(), 0.0), mass0, 1e-12);
}

TEST_P(BlockSteps, DtMinFloorsAndCounts) {
  Simulation sim(model("kepler", 2, 0.9),
                 simulation_options(gravity_options(device(), GravityAlgorithm::Direct),
                                    adaptive(0.0005, kTwoPi / 64 / 4)));
  for (int s = 0; s < 4; ++s) sim.step(kTwoPi / 64);
  EXPECT_LE(sim.timestep_stats().bins.size(), 3u);
  EXPECT_GT(sim.timestep_stats().floored, 0u) << "pericentre wants steps below --dt-min";
}

}  // namespace
}  // namespace nbody
