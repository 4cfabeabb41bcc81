// Hierarchical (block) time steps on the GPU (issue #19): the device stepper's adaptive
// step (simulation/cuda/device_block_steps.cuh). The direct sum (float64) against a host
// transcription of the documented algorithm and against the CPU stepper (softened Plummer
// sphere; an unsoftened triple, whose rule takes the potentials): the same bins every step,
// positions to round-off; with every body in bin 0 the adaptive step is the fixed leapfrog,
// bit for bit; the float tree against the CPU tree (bins to a few bodies, energies to 1e-4).
// Shares and merges: test_block_steps_shares_cuda.cpp; the forces of the active bodies:
// test_active_forces_cuda.cpp. Every test skips itself, saying why, without a usable CUDA
// device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backend_test.hpp"
#include "gpu/block_steps_helpers.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics/integration.hpp"
#include "nbody/physics/timestep.hpp"
#include "nbody/simulation.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using namespace block_steps_test;  // the helpers of this suite's files

// ---- Runs ----------------------------------------------------------------------------------

/// The documented algorithm (issue #19, the host stepper's order), transcribed on the host
/// with a CPU solver: no collisions, no shares. Bins per step as StepTimes::bins.
StepRun reference_run(const ParticleSystem& start, const SimulationOptions& options, int steps,
                      double dt) {
  GravityOptions g = options.gravity;
  g.device = Device::Cpu;
  g.dim = start.dim;
  std::unique_ptr<GravitySolver> solver = make_gravity_solver(g);
  const double eps = g.softening, eta = options.integrator.eta;
  const bool unsoftened = !(eps > 0);
  const int k_limit = bin_limit(dt, options.integrator.dt_min);
  StepRun r;
  ParticleSystem& ps = r.end;
  ps = start;
  const std::size_t n = ps.size();
  solver->compute_forces(ps, unsoftened);
  std::vector<int> bin(n);
  auto phi = [&](std::size_t i) { return unsoftened ? ps.potential[i] : 0.0; };
  auto half_kick = [&](std::size_t i, int k) {
    BodyMotion b = load_motion(ps, i);
    kick(b, ps.ax[i], ps.ay[i], ps.az[i], 0.5 * std::ldexp(dt, -k));
    store_motion(ps, i, b);
  };
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < n; ++i) {
      bool fl = false;
      bin[i] = timestep_bin(wanted_step(eta, eps, ps.ax[i], ps.ay[i], ps.az[i], phi(i)), dt,
                            k_limit, &fl);
      r.floored += fl ? 1 : 0;
      half_kick(i, bin[i]);
    }
    std::uint64_t tick = 0;
    bool potentials = unsoftened;
    while (tick < kTicksPerStep) {
      std::uint64_t next = ~std::uint64_t(0);
      for (std::size_t i = 0; i < n; ++i)
        next = std::min(next, (tick / bin_ticks(bin[i]) + 1) * bin_ticks(bin[i]));
      const double h = exact_mul(dt, std::ldexp(double(next - tick), -kMaxTimestepBin));
      for (std::size_t i = 0; i < n; ++i) {
        BodyMotion b = load_motion(ps, i);
        drift(b, h);
        store_motion(ps, i, b);
      }
      tick = next;
      std::vector<std::uint32_t> active;
      for (std::size_t i = 0; i < n; ++i)
        if (bin_active_at(bin[i], tick)) active.push_back(std::uint32_t(i));
      potentials = unsoftened;
      solver->compute_forces_active(ps, potentials, active);
      for (const std::uint32_t i : active) {
        half_kick(i, bin[i]);
        if (tick == kTicksPerStep) continue;
        bool fl = false;
        const int k = timestep_bin(wanted_step(eta, eps, ps.ax[i], ps.ay[i], ps.az[i], phi(i)), dt,
                                   k_limit, &fl);
        r.floored += fl ? 1 : 0;
        bin[i] = next_bin(k, bin[i], tick);
        half_kick(i, bin[i]);
      }
      r.substeps += 1;
      r.active += active.size();
    }
    std::vector<std::uint64_t> histogram(kMaxTimestepBin + 1, 0);
    for (const int k : bin) ++histogram[std::size_t(k)];
    while (histogram.size() > 1 && histogram.back() == 0) histogram.pop_back();
    r.bins.push_back(histogram);
    r.sizes.push_back(n);
    ps.time += dt;
  }
  return r;
}

/// Same bins every step (printed on failure), the same counters, positions within `tolerance`.
void expect_same_run(const StepRun& got, const StepRun& want, double tolerance,
                     const std::string& what) {
  ASSERT_EQ(got.end.size(), want.end.size()) << what;
  ASSERT_EQ(got.bins.size(), want.bins.size()) << what;
  for (std::size_t s = 0; s < want.bins.size(); ++s) {
    EXPECT_EQ(got.bins[s], want.bins[s]) << what << ", step " << s + 1 << ": bins "
                                         << text(got.bins[s]) << " against " << text(want.bins[s]);
  }
  EXPECT_EQ(got.substeps, want.substeps) << what << ": substeps";
  EXPECT_EQ(got.active, want.active) << what << ": active evaluations";
  EXPECT_EQ(got.floored, want.floored) << what << ": floored";
  const double d = position_difference(got.end, want.end);
  std::printf(
      "[ measured ] %s: substeps %llu, active %llu, bins %s, largest position "
      "difference / extent %.3e\n",
      what.c_str(), static_cast<unsigned long long>(got.substeps),
      static_cast<unsigned long long>(got.active), text(got.bins.back()).c_str(), d);
  EXPECT_LE(d, tolerance) << what;
  EXPECT_EQ(got.end.time, want.end.time) << what;
}

/// A tight binary and a distant third body, unsoftened: the rule takes each body's length
/// scale from its potential, and the binary sits several bins below the third body.
ParticleSystem triple() {
  ParticleSystem ps;
  const double m = 0.5, a = 0.05, v = std::sqrt(1.0 * (2 * m) / (2 * a)) / 2;  // circular
  ps.add(Body{{-a, 0, 0}, {0, -v, 0}, m, 0, 0});
  ps.add(Body{{a, 0, 0}, {0, v, 0}, m, 0, 0});
  ps.add(Body{{2.0, 0.1, 0.05}, {0.02, 0.7, 0}, 0.01, 0, 0});
  return ps;
}

// ---- The step against the host --------------------------------------------------------------

TEST(GpuBlockSteps, DirectMatchesTheDocumentedAlgorithm) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = plummer(2000, 19);
  const SimulationOptions gpu =
      adaptive_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Double, kSoftening);
  const StepRun got = run_stepper(start, gpu, kSteps, kDt);
  const StepRun want = reference_run(start, gpu, kSteps, kDt);
  ASSERT_GT(want.bins.back().size(), 2u) << "the system should fill several bins";
  expect_same_run(got, want, 1e-12, "direct double, Plummer 2000, eps 0.01, vs the transcription");
  // For the record: the energy error of the adaptive and of the fixed step.
  SimulationOptions fixed = gpu;
  fixed.integrator.timestep = TimestepMode::Fixed;
  const double e0 = compute_diagnostics(start, 1.0, kSoftening).total_energy;
  const double ea = compute_diagnostics(got.end, 1.0, kSoftening).total_energy;
  const double ef =
      compute_diagnostics(run_stepper(start, fixed, kSteps, kDt).end, 1.0, kSoftening).total_energy;
  const double eq =
      compute_diagnostics(run_stepper(start, fixed, 4 * kSteps, kDt / 4).end, 1.0, kSoftening)
          .total_energy;
  std::printf(
      "[ measured ] direct double: relative energy error adaptive %.3e, fixed dt %.3e, fixed "
      "dt/4 %.3e\n",
      std::abs(ea - e0) / std::abs(e0), std::abs(ef - e0) / std::abs(e0),
      std::abs(eq - e0) / std::abs(e0));
}

TEST(GpuBlockSteps, UnsoftenedTripleMatchesTheDocumentedAlgorithm) {
  NBODY_SKIP_WITHOUT_GPU();
  const SimulationOptions gpu =
      adaptive_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Double, 0.0);
  const StepRun got = run_stepper(triple(), gpu, kSteps, kDt);
  const StepRun want = reference_run(triple(), gpu, kSteps, kDt);
  ASSERT_GT(want.bins.back().size(), 2u) << "the binary should sit in a deep bin";
  expect_same_run(got, want, 1e-12, "direct double, triple, eps 0, vs the transcription");
}

// Against the CPU stepper (host_stepper.cpp, block_steps.*): needs the host's adaptive
// step; the same semantics as the transcription above.
TEST(GpuBlockSteps, DirectMatchesTheCpuStepper) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = plummer(2000, 19);
  const StepRun got = run_stepper(
      start, adaptive_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Double, kSoftening),
      kSteps, kDt);
  const StepRun want = run_stepper(
      start, adaptive_options(Device::Cpu, GravityAlgorithm::Direct, Precision::Double, kSoftening),
      kSteps, kDt);
  expect_same_run(got, want, 1e-12, "direct double, Plummer 2000, eps 0.01, GPU vs CPU stepper");
  const StepRun triple_gpu = run_stepper(
      triple(), adaptive_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Double, 0.0),
      kSteps, kDt);
  const StepRun triple_cpu = run_stepper(
      triple(), adaptive_options(Device::Cpu, GravityAlgorithm::Direct, Precision::Double, 0.0),
      kSteps, kDt);
  expect_same_run(triple_gpu, triple_cpu, 1e-12,
                  "direct double, triple, eps 0, GPU vs CPU stepper");
}

// The dynamical criterion (--timestep-criterion dynamical): the device's densities
// (simulation/cuda/cell_density.cu) against the host's (integrators/cell_density.cpp),
// through the bins they give, on a cusp (Hernquist) and an unsoftened triple.
TEST(GpuBlockSteps, DynamicalCriterionMatchesTheCpuStepper) {
  NBODY_SKIP_WITHOUT_GPU();
  ModelOptions m;
  m.model = "hernquist";
  m.n = 3000;
  m.seed = 23;
  const ParticleSystem start = generate(m);
  auto options = [](Device device, double softening) {
    SimulationOptions o =
        adaptive_options(device, GravityAlgorithm::Direct, Precision::Double, softening, 0.05);
    o.integrator.timestep_criterion = TimestepCriterion::Dynamical;
    return o;
  };
  const StepRun got = run_stepper(start, options(Device::Gpu, kSoftening), kSteps, kDt);
  const StepRun want = run_stepper(start, options(Device::Cpu, kSoftening), kSteps, kDt);
  ASSERT_GE(want.bins.back().size(), 3u) << "the test needs a range of bins";
  expect_same_run(got, want, 1e-12, "dynamical criterion, Hernquist 3000, GPU vs CPU stepper");
  const StepRun triple_gpu = run_stepper(triple(), options(Device::Gpu, 0.0), kSteps, kDt);
  const StepRun triple_cpu = run_stepper(triple(), options(Device::Cpu, 0.0), kSteps, kDt);
  expect_same_run(triple_gpu, triple_cpu, 1e-12, "dynamical criterion, triple, GPU vs CPU");
}

// The same through Simulation (--device gpu against the CPU): positions, and the
// statistics Simulation gathers.
TEST(GpuBlockSteps, SimulationGpuMatchesCpu) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = plummer(2000, 19);
  Simulation gpu(start, adaptive_options(Device::Gpu, GravityAlgorithm::Direct, Precision::Double,
                                         kSoftening));
  Simulation cpu(start, adaptive_options(Device::Cpu, GravityAlgorithm::Direct, Precision::Double,
                                         kSoftening));
  for (int s = 0; s < kSteps; ++s) {
    gpu.step(kDt);
    cpu.step(kDt);
  }
  const double d = position_difference(gpu.particles(), cpu.particles());
  std::printf(
      "[ measured ] Simulation GPU vs CPU, adaptive: largest position difference / "
      "extent %.3e, bins %s / %s\n",
      d, text(gpu.timestep_stats().bins).c_str(), text(cpu.timestep_stats().bins).c_str());
  EXPECT_LE(d, 1e-12);
  EXPECT_EQ(gpu.timestep_stats().bins, cpu.timestep_stats().bins);
  EXPECT_EQ(gpu.timestep_stats().substeps, cpu.timestep_stats().substeps);
  EXPECT_EQ(gpu.timestep_stats().force_evaluations, cpu.timestep_stats().force_evaluations);
}

// ---- Every body in bin 0: the fixed leapfrog ------------------------------------------------

TEST(GpuBlockSteps, OneBinIsTheFixedLeapfrogBitForBit) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = plummer(3000, 7);
  for (const GravityAlgorithm algorithm : {GravityAlgorithm::Direct, GravityAlgorithm::Tree}) {
    const Precision p =
        algorithm == GravityAlgorithm::Direct ? Precision::Double : Precision::Float;
    const SimulationOptions adaptive =
        adaptive_options(Device::Gpu, algorithm, p, kSoftening, /*eta=*/1e30);
    SimulationOptions fixed = adaptive;
    fixed.integrator.timestep = TimestepMode::Fixed;
    const std::string what = algorithm == GravityAlgorithm::Direct ? "direct double" : "tree float";
    const StepRun a = run_stepper(start, adaptive, kSteps, kDt, /*potential_last=*/true);
    const StepRun f = run_stepper(start, fixed, kSteps, kDt, /*potential_last=*/true);
    for (std::size_t s = 0; s < a.bins.size(); ++s) {
      EXPECT_EQ(a.bins[s], std::vector<std::uint64_t>{start.size()})
          << what << ", step " << s + 1 << ": bins " << text(a.bins[s]);
    }
    EXPECT_EQ(a.substeps, std::uint64_t(kSteps)) << what;
    EXPECT_EQ(a.active, std::uint64_t(kSteps) * start.size()) << what;
    test::expect_same_state(a.end, f.end, what + ": adaptive with one bin vs fixed");
    EXPECT_TRUE(a.end.potentials_valid()) << what;
    EXPECT_EQ(a.end.potential, f.end.potential) << what << ": potentials";
  }
}

// ---- The tree -----------------------------------------------------------------------------

/// Two tree runs (float, different walks): bins within a few bodies each step, the final
/// energies within 1e-4 (relative).
void expect_close_tree_runs(const StepRun& got, const StepRun& want, const ParticleSystem& start,
                            const std::string& what) {
  ASSERT_EQ(got.end.size(), want.end.size()) << what;
  ASSERT_EQ(got.bins.size(), want.bins.size()) << what;
  for (std::size_t s = 0; s < want.bins.size(); ++s) {
    std::vector<std::uint64_t> a = got.bins[s], b = want.bins[s];
    a.resize(std::max(a.size(), b.size()));
    b.resize(a.size());
    std::uint64_t moved = 0;  // sum of |differences| / 2: bodies in another bin
    for (std::size_t k = 0; k < a.size(); ++k) moved += a[k] > b[k] ? a[k] - b[k] : b[k] - a[k];
    moved /= 2;
    std::printf("[ measured ] %s, step %zu: bins %s against %s, %llu bodies apart\n", what.c_str(),
                s + 1, text(got.bins[s]).c_str(), text(want.bins[s]).c_str(),
                static_cast<unsigned long long>(moved));
    EXPECT_LE(moved, 10u) << what << ", step " << s + 1 << ": bins " << text(got.bins[s])
                          << " against " << text(want.bins[s]);
  }
  const double eg = compute_diagnostics(got.end, 1.0, kSoftening).total_energy;
  const double ew = compute_diagnostics(want.end, 1.0, kSoftening).total_energy;
  const double e0 = compute_diagnostics(start, 1.0, kSoftening).total_energy;
  std::printf("[ measured ] %s: E %.9f against %.9f (start %.9f): relative difference %.3e\n",
              what.c_str(), eg, ew, e0, std::abs(eg - ew) / std::abs(ew));
  EXPECT_LE(std::abs(eg - ew), 1e-4 * std::abs(ew)) << what;
}

TEST(GpuBlockSteps, TreeMatchesTheDocumentedAlgorithm) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = plummer(2000, 19);
  const StepRun got = run_stepper(start, tree_adaptive(Device::Gpu), kSteps, kDt);
  const StepRun want = reference_run(start, tree_adaptive(Device::Cpu), kSteps, kDt);
  expect_close_tree_runs(got, want, start, "tree float, GPU vs the transcription (CPU tree)");
}

TEST(GpuBlockSteps, TreeMatchesTheCpuTree) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = plummer(2000, 19);
  const StepRun got = run_stepper(start, tree_adaptive(Device::Gpu), kSteps, kDt);
  const StepRun want = run_stepper(start, tree_adaptive(Device::Cpu), kSteps, kDt);
  expect_close_tree_runs(got, want, start, "tree float, GPU vs CPU stepper");
}

// NBODY_TREE_REFIT=1: between a step's builds the substeps refit the tree (TreeForces::refit):
// the same run as with a build at every substep (the default) to the trees' accuracy, and not
// its bits (the refit ran).
TEST(GpuBlockSteps, TreeRefitsKeepTheRebuiltRun) {
  NBODY_SKIP_WITHOUT_GPU();
  const ParticleSystem start = plummer(2000, 19);
  const StepRun rebuilt = run_stepper(start, tree_adaptive(Device::Gpu), kSteps, kDt);
  ASSERT_EQ(setenv("NBODY_TREE_REFIT", "1", 1), 0);
  const StepRun refitted = run_stepper(start, tree_adaptive(Device::Gpu), kSteps, kDt);
  unsetenv("NBODY_TREE_REFIT");
  ASSERT_GT(refitted.substeps, std::uint64_t(2 * kSteps)) << "the test needs substeps to refit";
  EXPECT_GT(position_difference(refitted.end, rebuilt.end), 0.0) << "no refit took place";
  expect_close_tree_runs(refitted, rebuilt, start, "tree float, refitted vs rebuilt substeps");
}

}  // namespace
}  // namespace nbody
