// Hierarchical (block) time steps on the GPU (issue #19): the device stepper's adaptive
// step (simulation/cuda/device_block_steps.cuh) and the forces of the active bodies alone
// (DeviceForces::launch_active).
// - the forces: launch_active() on a subset equals launch() at those entries, for the
//   direct sum (float and double, every kernel's math, each-pair-once layout included) and
//   the tree (same tree, same interaction lists), 2D and 3D, with and without the
//   potentials; the per-call solver's compute_forces_active() likewise;
// - the step: the direct sum (float64) against a host transcription of the documented
//   algorithm and against the CPU stepper (softened Plummer sphere; an unsoftened triple,
//   whose rule takes the potentials): the same bins every step, positions to round-off;
//   with every body in bin 0 the adaptive step is the fixed leapfrog, bit for bit; the
//   float tree against the CPU tree (bins to a few bodies, energies to 1e-4); merges under
//   adaptive steps (mass kept, N lower, the bins compacted along); the shares of several
//   processes (thread "ranks") against one process.
// Every test skips itself, saying why, without a usable CUDA device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend_test.hpp"
#include "core/cuda/launch.cuh"
#include "gpu/cuda_copies.hpp"
#include "gravity/cuda/direct_kernels.cuh"
#include "nbody/diagnostics.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/physics/integration.hpp"
#include "nbody/physics/timestep.hpp"
#include "nbody/simulation.hpp"
#include "simulation/stepper.hpp"
#include "thread_ranks.hpp"
#include "tree/cuda/tree_gpu.cuh"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using gpu::Vec4;

constexpr double kDt = 0.05;
constexpr int kSteps = 5;
constexpr double kSoftening = 0.01;
constexpr double kPi = 3.14159265358979323846;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

ParticleSystem plummer(std::size_t n, std::uint64_t seed, int dim = 3) {
  ModelOptions m;
  m.model = "plummer";
  m.n = n;
  m.seed = seed;
  m.dim = dim;
  ParticleSystem ps = generate(m);
  if (dim == 2) ps.make_planar();
  return ps;
}

std::string text(const std::vector<std::uint64_t>& bins) {
  std::string s = "[";
  for (std::size_t k = 0; k < bins.size(); ++k) s += (k ? ", " : "") + std::to_string(bins[k]);
  return s + "]";
}

// ---- Runs ----------------------------------------------------------------------------------

SimulationOptions adaptive_options(Device device, GravityAlgorithm algorithm, Precision precision,
                                   double softening, double eta = 0.025) {
  SimulationOptions o = test::simulation_options(device, algorithm, precision, softening);
  o.integrator.timestep = TimestepMode::Adaptive;
  o.integrator.eta = eta;
  return o;
}

struct StepRun {
  ParticleSystem end;
  std::vector<std::vector<std::uint64_t>> bins;  // per step
  std::vector<std::size_t> sizes;                // N after each step
  std::uint64_t substeps = 0, active = 0, floored = 0;
};

/// `steps` steps of dt by the stepper the options ask for (the last one asked for the
/// potentials when `potential_last`), its statistics per step.
StepRun run_stepper(const ParticleSystem& start, const SimulationOptions& options, int steps,
                    double dt, bool potential_last = false,
                    std::shared_ptr<ForceReducer> reducer = nullptr) {
  StepRun r;
  r.end = start;
  std::unique_ptr<Stepper> stepper =
      make_stepper(complete_options(options, start.dim), std::move(reducer));
  stepper->upload(r.end);
  for (int s = 0; s < steps; ++s) {
    stepper->step(dt, potential_last && s + 1 == steps);
    const StepTimes t = stepper->take_times();
    r.bins.push_back(t.bins);
    r.sizes.push_back(stepper->size());
    r.substeps += t.substeps;
    r.active += t.active_evaluations;
    r.floored += t.floored;
  }
  stepper->download(r.end);
  stepper.reset();
  return r;
}

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

/// The largest |position difference| over the bodies, relative to the largest |coordinate|.
double position_difference(const ParticleSystem& a, const ParticleSystem& b) {
  double worst = 0, extent = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(
        {worst, std::abs(a.x[i] - b.x[i]), std::abs(a.y[i] - b.y[i]), std::abs(a.z[i] - b.z[i])});
    extent = std::max({extent, std::abs(b.x[i]), std::abs(b.y[i]), std::abs(b.z[i])});
  }
  return extent > 0 ? worst / extent : worst;
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

SimulationOptions tree_adaptive(Device d) {
  SimulationOptions o = adaptive_options(d, GravityAlgorithm::Tree, Precision::Float, kSoftening);
  o.gravity.theta = 0.5;
  return o;
}

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
  const Case cases[] = {
      {"tree float", tree_adaptive(Device::Gpu), 40000, true},
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
