// The option checks the command line and the Python module share (validate(), parse_*(),
// check_time_step, steps_to_reach): each bad value throws nbody::Error naming the option.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "nbody/collisions.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"

namespace nbody {
namespace {

/// The message of the nbody::Error that f throws ("" when it throws none).
template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(RunOptions, ParsesDeviceAndPrecisionNames) {
  EXPECT_EQ(parse_device("cpu"), Device::Cpu);
  EXPECT_EQ(parse_device("gpu"), Device::Gpu);
  EXPECT_EQ(parse_precision("auto"), Precision::Auto);
  EXPECT_EQ(parse_precision("float"), Precision::Float);
  EXPECT_EQ(parse_precision("double"), Precision::Double);
  for (const auto& name : device_names()) EXPECT_EQ(to_string(parse_device(name)), name);
  for (const auto& name : precision_names()) EXPECT_EQ(to_string(parse_precision(name)), name);
  EXPECT_EQ(message_of([] { (void)parse_device("tpu"); }),
            "--device tpu: unknown device (available: cpu, gpu)");
  EXPECT_EQ(message_of([] { (void)parse_precision("half"); }),
            "--precision half: unknown precision (available: auto, float, double)");
}

TEST(RunOptions, ParsesAlgorithmKernelAndIntegratorNames) {
  EXPECT_EQ(parse_gravity_algorithm("direct"), GravityAlgorithm::Direct);
  EXPECT_EQ(parse_gravity_algorithm("tree"), GravityAlgorithm::Tree);
  EXPECT_EQ(parse_force_kernel("fast"), ForceKernel::Fast);
  EXPECT_EQ(parse_force_kernel("scalar"), ForceKernel::Scalar);
  EXPECT_EQ(parse_force_kernel("tiled"), ForceKernel::Tiled);
  EXPECT_EQ(parse_force_kernel("naive"), ForceKernel::Naive);
  EXPECT_EQ(parse_integrator_scheme("leapfrog"), IntegratorScheme::Leapfrog);
  EXPECT_EQ(parse_integrator_scheme("euler"), IntegratorScheme::Euler);
  EXPECT_EQ(parse_integrator_scheme("kinematic"), IntegratorScheme::Kinematic);
  EXPECT_EQ(parse_integrator_scheme("ias15"), IntegratorScheme::Ias15);
  EXPECT_EQ(parse_ias15_step_rule("prs23"), Ias15StepRule::Prs23);
  EXPECT_EQ(to_string(IntegratorOptions{}.ias15_rule), "global");
  for (const auto& name : gravity_algorithm_names())
    EXPECT_EQ(to_string(parse_gravity_algorithm(name)), name);
  for (const auto& name : cpu_direct_kernels())
    EXPECT_EQ(to_string(parse_force_kernel(name)), name);
  for (const auto& name : gpu_direct_kernels())
    EXPECT_EQ(to_string(parse_force_kernel(name)), name);
  for (const auto& name : integrator_names())
    EXPECT_EQ(to_string(parse_integrator_scheme(name)), name);
  // The defaults are the names the help texts show.
  EXPECT_EQ(to_string(GravityOptions{}.algorithm), "direct");
  EXPECT_EQ(to_string(GravityOptions{}.kernel), "fast");
  EXPECT_EQ(to_string(IntegratorOptions{}.scheme), "leapfrog");
  EXPECT_EQ(message_of([] { (void)parse_gravity_algorithm("fmm"); }),
            "--gravity fmm: unknown gravity solver (available: direct, tree, none)");
  EXPECT_EQ(message_of([] { (void)parse_force_kernel("magic"); }),
            "--kernel magic: unknown direct-sum kernel (available: fast, scalar, tiled, naive)");
  EXPECT_EQ(message_of([] { (void)parse_integrator_scheme("rk4"); }),
            "--integrator rk4: unknown integrator (available: leapfrog, euler, kinematic, ias15)");
  EXPECT_EQ(message_of([] {
              (void)parse_integrator_scheme("Leapfrog");
            }).rfind("--integrator Leapfrog:", 0),
            0u);
}

TEST(RunOptions, GravityOptionsAreCheckedWithTheOptionNamed) {
  EXPECT_NO_THROW(validate(GravityOptions{}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    void (*edit)(GravityOptions&, double);
    std::string starts;
  };
  const Case cases[] = {
      {[](GravityOptions& g, double v) { g.G = v; },
       "--G nan: the gravitational constant must be finite"},
      {[](GravityOptions& g, double) { g.softening = -1; },
       "--softening -1: must be a finite number >= 0"},
      {[](GravityOptions& g, double v) { g.softening = v; }, "--softening nan:"},
      {[](GravityOptions& g, double) { g.theta = -0.5; }, "--theta -0.5:"},
      {[](GravityOptions& g, double) { g.threads = -2; }, "--threads -2: must be >= 0"},
      {[](GravityOptions& g, double) { g.block_size = -1; }, "--block-size -1: must be >= 0"},
  };
  for (const auto& c : cases) {
    GravityOptions g;
    c.edit(g, nan);
    const std::string m = message_of([&] { validate(g); });
    EXPECT_EQ(m.rfind(c.starts, 0), 0u) << m;
    // make_gravity_solver() says the same.
    EXPECT_EQ(message_of([&] { (void)make_gravity_solver(g); }), m);
  }
}

TEST(RunOptions, IntegratorOptionsAreCheckedWithTheOptionNamed) {
  EXPECT_NO_THROW(validate(IntegratorOptions{}));
  IntegratorOptions i;
  i.scheme = IntegratorScheme::Euler;
  i.damping = 1.5;
  EXPECT_EQ(message_of([&] { validate(i); }), "--damping 1.5: must be in (0, 1] (1 = no damping)");
  EXPECT_EQ(message_of([&] { (void)make_integrator(i); }), message_of([&] { validate(i); }));
}

TEST(RunOptions, TimeStepAndEndTime) {
  EXPECT_NO_THROW(check_time_step(1e-3));
  EXPECT_EQ(message_of([] { check_time_step(0); }),
            "--dt 0: the time step must be positive and finite");
  EXPECT_EQ(message_of([] { check_time_step(-1); }),
            "--dt -1: the time step must be positive and finite");
  EXPECT_EQ(message_of([] { check_time_step(std::numeric_limits<double>::infinity()); }),
            "--dt inf: the time step must be positive and finite");
  EXPECT_EQ(steps_to_reach(0, 1, 0.1), 10u);  // no extra sliver step from rounding
  EXPECT_EQ(steps_to_reach(0, 1.05, 0.1), 11u);
  EXPECT_EQ(steps_to_reach(2, 2 + 2 * std::numbers::pi, 2 * std::numbers::pi / 1000), 1000u);
  EXPECT_EQ(message_of([] { (void)steps_to_reach(3, 2, 0.1); }),
            "--t-end 2: must be after the start time 3");
  EXPECT_EQ(message_of([] { (void)steps_to_reach(0, 1, 0); }),
            "--dt 0: the time step must be positive and finite");
}

TEST(RunOptions, CollisionModelNames) {
  for (const auto& name : collision_model_names())
    EXPECT_EQ(to_string(parse_collision_model(name)), name);
  EXPECT_EQ(message_of([] { (void)parse_collision_model("stick"); }),
            "--collisions stick: unknown collision model (available: none, bounce, merge)");
}

}  // namespace
}  // namespace nbody
