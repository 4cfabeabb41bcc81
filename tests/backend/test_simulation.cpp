// Simulation's contract on every backend: the diagnostics, the host copy (particles() reads
// without marking edits, edit_particles() is uploaded before the next step, positions()),
// reconfigure() (time, ids, steps and collision totals kept; device and solver switched),
// the integrators' arithmetic (a Simulation step gives the bits of the integrator driving
// the backend's solver), and the option errors and names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend_test.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/error.hpp"
#include "nbody/simulation.hpp"
#include "simulation/stepper.hpp"
#include "unit/collision_test_helpers.hpp"
#include "unit/test_helpers.hpp"

namespace nbody {
namespace {

using test::expect_same_state;
using test::gravity_options;
using test::integrator_options;

constexpr double kSoftening = 0.05;
constexpr double kDt = 1e-3;

GravityOptions direct(Device device, Precision p = Precision::Double) {
  return gravity_options(device, GravityAlgorithm::Direct, p, kSoftening);
}

// ---- Diagnostics ----------------------------------------------------------------------------

/// The backend's diagnostics against compute_diagnostics (float64 on the CPU) of the same
/// state, to 1e-12 of each quantity's scale (momenta can cancel to ~0: their errors are
/// measured against the sums of magnitudes).
void expect_diagnostics_match(const Diagnostics& got, const Diagnostics& cpu,
                              const ParticleSystem& ps) {
  double p_scale = 0, l_scale = 0, r_scale = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const double v = std::hypot(ps.vx[i], ps.vy[i], ps.vz[i]);
    const double r = std::hypot(ps.x[i], ps.y[i], ps.z[i]);
    p_scale += ps.mass[i] * v;
    l_scale += ps.mass[i] * r * v;
    r_scale += ps.mass[i] * r;
  }
  r_scale /= cpu.total_mass;
  constexpr double tol = 1e-12;
  EXPECT_NEAR(got.total_mass, cpu.total_mass, tol * cpu.total_mass);
  EXPECT_NEAR(got.kinetic, cpu.kinetic, tol * std::abs(cpu.kinetic));
  EXPECT_NEAR(got.potential, cpu.potential, tol * std::abs(cpu.potential));
  EXPECT_NEAR(got.total_energy, cpu.total_energy,
              tol * (std::abs(cpu.kinetic) + std::abs(cpu.potential)));
  EXPECT_NEAR(got.virial_ratio, cpu.virial_ratio, tol * std::abs(cpu.virial_ratio) + 1e-300);
  for (auto [g, c, scale] :
       {std::tuple{got.momentum.x, cpu.momentum.x, p_scale},
        std::tuple{got.momentum.y, cpu.momentum.y, p_scale},
        std::tuple{got.momentum.z, cpu.momentum.z, p_scale},
        std::tuple{got.angular_momentum.x, cpu.angular_momentum.x, l_scale},
        std::tuple{got.angular_momentum.y, cpu.angular_momentum.y, l_scale},
        std::tuple{got.angular_momentum.z, cpu.angular_momentum.z, l_scale},
        std::tuple{got.com.x, cpu.com.x, r_scale}, std::tuple{got.com.y, cpu.com.y, r_scale},
        std::tuple{got.com.z, cpu.com.z, r_scale},
        std::tuple{got.com_velocity.x, cpu.com_velocity.x, p_scale / cpu.total_mass},
        std::tuple{got.com_velocity.y, cpu.com_velocity.y, p_scale / cpu.total_mass},
        std::tuple{got.com_velocity.z, cpu.com_velocity.z, p_scale / cpu.total_mass}}) {
    EXPECT_NEAR(g, c, tol * scale);
  }
}

NBODY_BACKEND_TEST_SUITE(SimulationDiagnostics);

TEST_P(SimulationDiagnostics, EqualComputeDiagnosticsOfTheSameState) {
  for (std::size_t n : {1, 2, 3, 1000, 4097}) {
    for (Precision p : {Precision::Float, Precision::Double}) {
      SCOPED_TRACE("N = " + std::to_string(n) + " " + std::string(to_string(p)));
      Simulation sim(test::random_system(n, 17 + n), direct(device(), p), IntegratorOptions{});
      expect_diagnostics_match(sim.diagnostics(),
                               compute_diagnostics(sim.particles(), 1.0, kSoftening),
                               sim.particles());
      for (int s = 0; s < 20; ++s) sim.step(kDt);
      const Diagnostics d = sim.diagnostics();
      const ParticleSystem& ps = sim.particles();
      expect_diagnostics_match(d, compute_diagnostics(ps, 1.0, kSoftening), ps);
    }
  }
}

TEST_P(SimulationDiagnostics, UseTheRunsGAndSoftening) {
  GravityOptions g = direct(device());
  g.G = 6.67430e-11;
  g.softening = 0.3;
  Simulation sim(test::random_system(500, 4), g, IntegratorOptions{});
  sim.step(kDt);
  const ParticleSystem& ps = sim.particles();
  expect_diagnostics_match(sim.diagnostics(), compute_diagnostics(ps, g.G, g.softening), ps);
}

// ---- The host copy --------------------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(HostCopy);

TEST_P(HostCopy, ParticlesAfterStepsAreTheSteppersState) {
  const ParticleSystem start = test::random_system(777, 8);
  Simulation sim(start, direct(device()), IntegratorOptions{});
  ParticleSystem own = start;  // a stepper of the same options, stepped alone
  const std::unique_ptr<Stepper> stepper = make_stepper(sim.options(), nullptr);
  stepper->upload(own);
  double t = start.time;
  for (int s = 0; s < 50; ++s) {
    sim.step(kDt);
    stepper->step(kDt, false);
    t += kDt;  // as the integrators advance ps.time
  }
  EXPECT_EQ(sim.time(), t);  // without a copy from the device
  EXPECT_EQ(sim.size(), start.size());
  EXPECT_EQ(sim.steps_done(), 50u);
  stepper->download(own);
  expect_same_state(sim.particles(), own, "particles() after 50 steps");
  EXPECT_EQ(sim.particles().id, start.id);
  EXPECT_TRUE(sim.particles().accelerations_valid());
  EXPECT_EQ(sim.time(), sim.particles().time);
}

TEST_P(HostCopy, EditsAreUploadedBeforeTheNextStep) {
  const GravityOptions g = direct(device(), Precision::Float);
  const IntegratorOptions i = integrator_options(IntegratorScheme::Euler, 0.95);
  Simulation sim(test::random_system(600, 9), g, i);
  Simulation untouched(test::random_system(600, 9), g, i);
  for (int s = 0; s < 10; ++s) {
    sim.step(kDt);
    untouched.step(kDt);
  }
  {
    ParticleSystem& ps = sim.edit_particles();
    ps.vx[0] += 1.0;
    ps.x[5] = 0.25;
    ps.mass[7] *= 3.0;
    ps.invalidate_accelerations();  // positions edited
  }
  const ParticleSystem edited = sim.particles();
  Simulation fresh(edited, g, i);  // the edited state, uploaded by a new simulation
  // The diagnostics see the edit too.
  const double kinetic = compute_diagnostics(edited, 1.0, kSoftening).kinetic;
  EXPECT_NEAR(sim.diagnostics().kinetic, kinetic, 1e-12 * kinetic);
  for (int s = 0; s < 10; ++s) {
    sim.step(kDt);
    fresh.step(kDt);
    untouched.step(kDt);
  }
  expect_same_state(sim.particles(), fresh.particles(), "edited then stepped");
  EXPECT_NE(sim.particles().x[0], untouched.particles().x[0]);
  EXPECT_EQ(sim.steps_done(), 20u);
}

TEST_P(HostCopy, ReadingDoesNotMarkTheStateEdited) {
  // A run that reads particles() after every step ends with the bits of one that never
  // reads. On the GPU a read is a download: were it taken as an edit, the next step would
  // upload the host copy again. To see that it is not, the reader's host copy is scribbled
  // on (through the const reference: the object itself is not const) after a read: on the
  // GPU the device state, not the scribble, is what steps on. (On the CPU the host copy is
  // the state, so there is nothing to scribble on.)
  const ParticleSystem start = test::random_system(300, 12);
  Simulation reader(start, direct(device()), IntegratorOptions{});
  Simulation never(start, direct(device()), IntegratorOptions{});
  for (int s = 0; s < 20; ++s) {
    reader.step(kDt);
    never.step(kDt);
    const ParticleSystem& seen = reader.particles();
    ASSERT_EQ(seen.time, never.time());
    if (on_gpu() && s == 10) {
      auto& scribble = const_cast<ParticleSystem&>(seen);
      scribble.vx[0] += 1.0;
      scribble.x[1] = 0.5;
    }
    std::vector<float> xyz;
    reader.positions(xyz);
  }
  EXPECT_EQ(reader.steps_done(), never.steps_done());
  expect_same_state(reader.particles(), never.particles(), "read after every step vs never read");
}

TEST_P(HostCopy, PositionsAreTheParticlesPositionsAsFloat) {
  Simulation sim(test::random_system(1001, 13), direct(device()), IntegratorOptions{});
  auto expect_positions = [&](const std::string& when) {
    std::vector<float> xyz;
    sim.positions(xyz);  // before particles(): on the GPU from the device when stale
    const ParticleSystem& ps = sim.particles();
    ASSERT_EQ(xyz.size(), 3 * ps.size()) << when;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      ASSERT_EQ(xyz[3 * i], float(ps.x[i])) << when << " body " << i;
      ASSERT_EQ(xyz[3 * i + 1], float(ps.y[i])) << when << " body " << i;
      ASSERT_EQ(xyz[3 * i + 2], float(ps.z[i])) << when << " body " << i;
    }
  };
  expect_positions("at the start");
  for (int s = 0; s < 5; ++s) sim.step(kDt);
  expect_positions("after steps");
  expect_positions("read again");
  sim.edit_particles().x[3] = 0.125;
  expect_positions("after an edit");
  std::vector<float> xyz;
  sim.positions(xyz);
  EXPECT_EQ(xyz[9], 0.125f);
  sim.step(kDt);
  expect_positions("after an edit and a step");
}

// ---- reconfigure() --------------------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(Reconfigure);

TEST_P(Reconfigure, KeepsTimeIdsStepsAndCollisionTotalsAndSwitchesDeviceAndSolver) {
  ParticleSystem start = test::cloud(1000, 31, 3, [](auto&) { return 0.02; });
  std::reverse(start.id.begin(), start.id.end());  // ids not in index order
  const SimulationOptions on_cpu = test::simulation_options(
      gravity_options(Device::Cpu, GravityAlgorithm::Direct, Precision::Auto, 0.02), {},
      test::collision_options(CollisionModel::Bounce, 0.5, 2));
  SimulationOptions here = on_cpu;
  here.gravity = test::tree_options(device(), Precision::Auto, 0.5, 3, false, 0.02);
  here.integrator.scheme = IntegratorScheme::Kinematic;

  Simulation sim(start, on_cpu);
  for (int s = 0; s < 10; ++s) sim.step(kDt);
  const ParticleSystem before = sim.particles();
  const CollisionTotals totals = sim.collision_totals();
  ASSERT_GT(totals.contacts, 0u);

  auto expect_kept = [&](const std::string& what) {
    EXPECT_EQ(sim.time(), before.time) << what;
    EXPECT_EQ(sim.steps_done(), 10u) << what;
    EXPECT_EQ(sim.collision_totals().stages, totals.stages) << what;
    EXPECT_EQ(sim.collision_totals().contacts, totals.contacts) << what;
    EXPECT_EQ(sim.collision_totals().energy_lost, totals.energy_lost) << what;
    EXPECT_EQ(sim.particles().id, before.id) << what;
    EXPECT_EQ(sim.particles().x, before.x) << what;
    EXPECT_EQ(sim.particles().vz, before.vz) << what;
    EXPECT_EQ(sim.collision_model(), CollisionModel::Bounce) << what;
  };

  // A bad option changes nothing.
  SimulationOptions bad = here;
  bad.integrator.damping = 1.5;
  EXPECT_THROW(sim.reconfigure(bad), Error);
  EXPECT_FALSE(sim.on_device());
  expect_kept("after a refused reconfigure");

  sim.reconfigure(here);
  EXPECT_EQ(sim.on_device(), on_gpu());
  EXPECT_NE(sim.solver_name().find("tree"), std::string::npos) << sim.solver_name();
  EXPECT_EQ(sim.integrator_name(), "kinematic");
  expect_kept("switched to " + std::string(to_string(device())) + " and the tree");
  for (int s = 0; s < 5; ++s) sim.step(kDt);
  EXPECT_EQ(sim.steps_done(), 15u);
  EXPECT_GT(sim.collision_totals().stages, totals.stages);
  EXPECT_NEAR(sim.time(), before.time + 5 * kDt, 1e-15);

  const double time = sim.time();
  const CollisionTotals later = sim.collision_totals();
  const std::vector<std::uint64_t> ids = sim.particles().id;
  sim.reconfigure(on_cpu);
  EXPECT_FALSE(sim.on_device());
  EXPECT_EQ(sim.solver_name().find("tree"), std::string::npos) << sim.solver_name();
  EXPECT_EQ(sim.time(), time);
  EXPECT_EQ(sim.steps_done(), 15u);
  EXPECT_EQ(sim.collision_totals().stages, later.stages);
  EXPECT_EQ(sim.collision_totals().energy_lost, later.energy_lost);
  EXPECT_EQ(sim.particles().id, ids);
  sim.step(kDt);
  EXPECT_EQ(sim.steps_done(), 16u);
}

TEST_P(Reconfigure, CpuToThisDeviceAndBackContinuesTheRun) {
  // 10 steps on the CPU, 10 on this backend, 10 on the CPU again, against 30 on the CPU:
  // the same bits when this backend is the CPU (the options are equal, so the
  // accelerations are kept); on the GPU the float64 forces differ by rounding only.
  const ParticleSystem start = test::random_system(1000, 21);
  const SimulationOptions cpu = test::simulation_options(direct(Device::Cpu));
  const SimulationOptions here = test::simulation_options(direct(device()));
  Simulation straight(start, cpu);
  Simulation moved(start, cpu);
  for (int leg = 0; leg < 3; ++leg) {
    if (leg == 1) moved.reconfigure(here);
    if (leg == 2) moved.reconfigure(cpu);
    EXPECT_EQ(moved.on_device(), leg == 1 && on_gpu());
    for (int s = 0; s < 10; ++s) {
      straight.step(kDt);
      moved.step(kDt);
    }
  }
  EXPECT_EQ(moved.steps_done(), 30u);
  EXPECT_EQ(moved.time(), straight.time());
  const ParticleSystem& a = moved.particles();
  const ParticleSystem& b = straight.particles();
  if (!on_gpu()) {
    expect_same_state(a, b, "cpu, cpu, cpu vs 30 steps on the cpu");
    return;
  }
  double dx = 0, x = 0, dv = 0, v = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dx +=
        std::pow(a.x[i] - b.x[i], 2) + std::pow(a.y[i] - b.y[i], 2) + std::pow(a.z[i] - b.z[i], 2);
    x += b.x[i] * b.x[i] + b.y[i] * b.y[i] + b.z[i] * b.z[i];
    dv += std::pow(a.vx[i] - b.vx[i], 2) + std::pow(a.vy[i] - b.vy[i], 2) +
          std::pow(a.vz[i] - b.vz[i], 2);
    v += b.vx[i] * b.vx[i] + b.vy[i] * b.vy[i] + b.vz[i] * b.vz[i];
  }
  std::printf(
      "[ measured ] cpu, gpu, cpu vs cpu: relative difference positions %.3e, velocities %.3e\n",
      std::sqrt(dx / x), std::sqrt(dv / v));
  EXPECT_LT(std::sqrt(dx / x), 1e-13);
  EXPECT_LT(std::sqrt(dv / v), 1e-12);
  EXPECT_EQ(a.id, b.id);
}

// ---- The integrators' arithmetic ------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(Stepping);

TEST_P(Stepping, SameBitsAsTheIntegratorDrivingTheSolver) {
  // Simulation's step is the integrator's float64 arithmetic (physics/integration.hpp) around
  // the backend's force evaluation: make_integrator() stepping a ParticleSystem with the
  // solver of the same options (on the GPU the per-call solver: the same kernels on the same
  // inputs) gives the same bits. On the GPU this is the resident stepper against the CPU
  // integrators.
  for (const IntegratorScheme scheme : test::kAllSchemes) {
    for (double damping : {1.0, 0.95}) {
      for (Precision p : {Precision::Float, Precision::Double}) {
        const std::string what = std::string(to_string(scheme)) + " damping " +
                                 std::to_string(damping) + " " + std::string(to_string(p));
        SCOPED_TRACE(what);
        ParticleSystem reference = test::random_system(500, 99);
        const GravityOptions g = direct(device(), p);
        const IntegratorOptions i = integrator_options(scheme, damping);
        auto solver = make_gravity_solver(g);
        auto integrator = make_integrator(i);
        Simulation sim(reference, g, i);
        for (int s = 0; s < 50; ++s) {
          integrator->step(reference, *solver, kDt);
          sim.step(kDt);
        }
        expect_same_state(sim.particles(), reference, what);
      }
    }
  }
}

// ---- Options --------------------------------------------------------------------------------

NBODY_BACKEND_TEST_SUITE(OptionsAndNames);

TEST_P(OptionsAndNames, BadOptionsAreErrors) {
  const ParticleSystem ps = test::random_system(10, 1);
  GravityOptions g = direct(device());
  g.kernel = on_gpu() ? ForceKernel::Scalar : ForceKernel::Tiled;  // the other device's kernel
  EXPECT_THROW((void)Simulation(ps, g, IntegratorOptions{}), Error);
  g = direct(device());
  g.kernel = on_gpu() ? ForceKernel::Tiled : ForceKernel::Fast;
  g.block_size = 7;  // not a power of two on the GPU; GPU only on the CPU
  EXPECT_THROW((void)Simulation(ps, g, IntegratorOptions{}), Error);
  EXPECT_THROW(
      (void)Simulation(ps, direct(device()), integrator_options(IntegratorScheme::Leapfrog, 1.5)),
      Error);
  EXPECT_THROW((void)Simulation(ps, test::tree_options(device(), Precision::Auto, -1.0),
                                IntegratorOptions{}),
               Error);
  g = direct(device());
  g.softening = -1;
  EXPECT_THROW((void)Simulation(ps, g, IntegratorOptions{}), Error);
}

TEST_P(OptionsAndNames, FewBodiesTakeTheScalarSumAndSampledTimes) {
  // Up to 64 bodies the CPU's fast float64 kernel gives way to the scalar sum (the SIMD
  // kernel pads to 64 targets), and one step in 64 is timed for all of them: the phases
  // still add up to about the steps' time.
  Simulation sim(test::random_system(3, 4), direct(device()), IntegratorOptions{});
  for (int s = 0; s < 200; ++s) sim.step(1e-4);
  EXPECT_EQ(sim.steps_done(), 200u);
  if (!on_gpu()) {
    EXPECT_EQ(sim.solver_name(), "direct-scalar-double");
  }
  EXPECT_GT(sim.times().get("gravity"), 0.0);
  EXPECT_GT(sim.times().get("integrate"), 0.0);
}

TEST_P(OptionsAndNames, SmallRunsTakeOneThreadUnlessTold) {
  // --threads 0: one thread where an evaluation is too small to share (default_threads()),
  // all of OpenMP's above; a number given is kept; the GPU has no CPU threads to choose.
  GravityOptions g = direct(device());
  const auto threads_for = [](const GravityOptions& o, std::size_t n) {
    return Simulation(test::random_system(n, 5), o, IntegratorOptions{}).run_threads();
  };
  if (on_gpu()) {
    EXPECT_EQ(threads_for(g, 300), 0);
    return;
  }
  EXPECT_EQ(threads_for(g, 300), 1);
  EXPECT_EQ(threads_for(g, kSerialDirectBodies), 0);
  g.threads = 2;
  EXPECT_EQ(threads_for(g, 300), 2);
  GravityOptions t = test::tree_options(device(), Precision::Auto, 0.5);
  EXPECT_EQ(threads_for(t, kSerialTreeBodies - 1), 1);
  EXPECT_EQ(threads_for(t, kSerialTreeBodies), 0);
  // The choice changes only the time: one thread and two give the same bits.
  const ParticleSystem start = test::random_system(500, 6);
  GravityOptions one = direct(device()), two = direct(device());
  one.threads = 1;
  two.threads = 2;
  Simulation a(start, one, IntegratorOptions{}), b(start, two, IntegratorOptions{});
  for (int s = 0; s < 3; ++s) {
    a.step(kDt);
    b.step(kDt);
  }
  EXPECT_EQ(a.particles().x, b.particles().x);
}

TEST_P(OptionsAndNames, NamesSayWhatRuns) {
  for (const ForceKernel kernel : test::direct_kernels(device())) {
    GravityOptions g = direct(device());
    g.kernel = kernel;
    Simulation sim(test::random_system(100, 2), g, IntegratorOptions{});
    sim.step(kDt);
    const std::string name = sim.solver_name();
    if (on_gpu()) {
      EXPECT_EQ(name, "direct-cuda-" + std::string(to_string(kernel)) + "-double-resident");
    } else if (kernel == ForceKernel::Scalar) {
      EXPECT_EQ(name, "direct-scalar-double");
    } else {
      EXPECT_EQ(name.rfind("direct-simd-", 0), 0u) << name;
    }
    EXPECT_EQ(sim.on_device(), on_gpu());
  }
  for (const IntegratorScheme scheme : test::kAllSchemes) {
    Simulation sim(test::random_system(10, 3), direct(device()), integrator_options(scheme));
    EXPECT_EQ(sim.integrator_name(), to_string(scheme));
  }
  Simulation tree(test::random_system(100, 2), test::tree_options(device(), Precision::Auto, 0.5),
                  IntegratorOptions{});
  EXPECT_NE(tree.solver_name().find(on_gpu() ? "tree-cuda-octree" : "tree-octree"),
            std::string::npos)
      << tree.solver_name();
}

}  // namespace
}  // namespace nbody
