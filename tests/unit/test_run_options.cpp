// The option checks the command line and the Python module share (validate(), parse_*(),
// check_time_step, steps_to_reach): each bad value throws nbody::Error naming the option; and
// the command line's own checks of every option (cli/option_checks.hpp).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "cli/usage_error.hpp"
#include "nbody/collisions.hpp"
#include "nbody/error.hpp"
#include "nbody/gravity.hpp"
#include "nbody/integrator.hpp"
#include "test_helpers.hpp"

namespace nbody {
namespace {

using test::message_of;

TEST(RunOptions, ParsesDeviceAndPrecisionNames) {
  EXPECT_EQ(parse_device("cpu"), Device::Cpu);
  EXPECT_EQ(parse_device("gpu"), Device::Gpu);
  EXPECT_EQ(parse_precision("auto"), Precision::Auto);
  EXPECT_EQ(parse_precision("float"), Precision::Float);
  EXPECT_EQ(parse_precision("double"), Precision::Double);
  for (const auto& name : device_names()) EXPECT_EQ(to_string(parse_device(name)), name);
  for (const auto& name : precision_names()) EXPECT_EQ(to_string(parse_precision(name)), name);
  EXPECT_EQ(message_of([] { (void)parse_device("tpu"); }),
            "--device: unknown device (available: cpu, gpu) (got tpu)");
  EXPECT_EQ(message_of([] { (void)parse_precision("half"); }),
            "--precision: unknown precision (available: auto, float, double) (got half)");
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
  EXPECT_EQ(to_string(IntegratorOptions{}.ias15_rule), "prs23");
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
            "--gravity: unknown gravity solver (available: direct, tree, none) (got fmm)");
  EXPECT_EQ(
      message_of([] { (void)parse_force_kernel("magic"); }),
      "--kernel: unknown direct-sum kernel (available: fast, scalar, tiled, naive) (got magic)");
  EXPECT_EQ(
      message_of([] { (void)parse_integrator_scheme("rk4"); }),
      "--integrator: unknown integrator (available: leapfrog, euler, kinematic, ias15) (got rk4)");
  EXPECT_EQ(message_of([] {
              (void)parse_integrator_scheme("Leapfrog");
            }).rfind("--integrator: unknown integrator", 0),
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
       "--G: the gravitational constant must be finite (got nan)"},
      {[](GravityOptions& g, double) { g.softening = -1; },
       "--softening: must be a finite number >= 0 (got -1)"},
      {[](GravityOptions& g, double v) { g.softening = v; },
       "--softening: must be a finite number >= 0 (got nan)"},
      {[](GravityOptions& g, double) { g.theta = -0.5; },
       "--theta: the opening angle must be a finite number >= 0 (got -0.5)"},
      {[](GravityOptions& g, double) { g.threads = -2; }, "--threads: must be >= 0 (got -2)"},
      {[](GravityOptions& g, double) { g.block_size = -1; }, "--block-size: must be >= 0 (got -1)"},
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
  EXPECT_EQ(message_of([&] { validate(i); }),
            "--damping: must be in (0, 1] (1 = no damping) (got 1.5)");
  EXPECT_EQ(message_of([&] { (void)make_integrator(i); }), message_of([&] { validate(i); }));
}

TEST(RunOptions, TimeStepAndEndTime) {
  EXPECT_NO_THROW(check_time_step(1e-3));
  EXPECT_EQ(message_of([] { check_time_step(0); }),
            "--dt: the time step must be positive and finite (got 0)");
  EXPECT_EQ(message_of([] { check_time_step(-1); }),
            "--dt: the time step must be positive and finite (got -1)");
  EXPECT_EQ(message_of([] { check_time_step(std::numeric_limits<double>::infinity()); }),
            "--dt: the time step must be positive and finite (got inf)");
  EXPECT_EQ(steps_to_reach(0, 1, 0.1), 10u);  // no extra sliver step from rounding
  EXPECT_EQ(steps_to_reach(0, 1.05, 0.1), 11u);
  EXPECT_EQ(steps_to_reach(2, 2 + 2 * std::numbers::pi, 2 * std::numbers::pi / 1000), 1000u);
  EXPECT_EQ(message_of([] { (void)steps_to_reach(3, 2, 0.1); }),
            "--t-end: must be after the start time 3 (got 2)");
  EXPECT_EQ(message_of([] { (void)steps_to_reach(0, 1, 0); }),
            "--dt: the time step must be positive and finite (got 0)");
}

TEST(RunOptions, CollisionModelNames) {
  for (const auto& name : collision_model_names())
    EXPECT_EQ(to_string(parse_collision_model(name)), name);
  EXPECT_EQ(message_of([] { (void)parse_collision_model("stick"); }),
            "--collisions: unknown collision model (available: none, bounce, merge) (got stick)");
}

// ---- The command line's own checks (cli/option_checks.hpp): one type check per option,
// ---- attached to every option of every subcommand, and nbody's range checks. -----------

struct MiniCommand {
  CLI::App app{"option checks", "nbody"};
  CLI::App* cmd = app.add_subcommand("run", "Run");
  CLI::App* nested = cmd->add_subcommand("deeper", "A subcommand of a subcommand");
  std::uint64_t steps = 0;
  int threads = 0;
  double t_end = 0;
  std::string output;
  std::uint64_t deep = 0;

  MiniCommand() {
    cmd->add_option("--steps", steps);
    cmd->add_option("--threads", threads)->check(cli::whole_at_least(0));
    cmd->add_option("--t-end", t_end)->check(cli::non_negative_number());
    cmd->add_option("-o,--output", output);
    nested->add_option("--deep", deep);
    cli::check_every_option(app);
  }

  /// The message of the error parsing `line` throws, as nbody prints it ("" when none).
  std::string error_of(const std::string& line) {
    try {
      app.parse(line);
    } catch (const CLI::Error& e) {
      return cli::failure_message(&app, e);
    }
    return "";
  }
  /// The same for arguments as given (an empty one stays: a line cannot hold it).
  std::string error_of(std::vector<std::string> args) {
    std::reverse(args.begin(), args.end());  // CLI11 takes the last argument first
    try {
      app.parse(args);
    } catch (const CLI::Error& e) {
      return cli::failure_message(&app, e);
    }
    return "";
  }
};

TEST(CommandLineChecks, InvalidCountsAreRefusedNotWrapped) {
  EXPECT_EQ(MiniCommand().error_of("run --steps -1"),
            "nbody: error: --steps: must be a whole number >= 0 (got -1)\n");
  EXPECT_EQ(MiniCommand().error_of("run --steps 1.5"),
            "nbody: error: --steps: must be a whole number >= 0 (got 1.5)\n");
  EXPECT_EQ(MiniCommand().error_of("run --steps 18446744073709551616"),
            "nbody: error: --steps: must be a whole number from 0 to 18446744073709551615 (got "
            "18446744073709551616)\n");
  EXPECT_EQ(MiniCommand().error_of("run --threads 2147483648"),
            "nbody: error: --threads: must be a whole number from -2147483648 to 2147483647 (got "
            "2147483648)\n");
  EXPECT_EQ(MiniCommand().error_of("run --threads -2"),
            "nbody: error: --threads: must be a whole number >= 0 (got -2)\n");
  EXPECT_EQ(MiniCommand().error_of("run deeper --deep -1"),
            "nbody: error: --deep: must be a whole number >= 0 (got -1)\n");
}

TEST(CommandLineChecks, WholeNumbersAreReadAsDecimal) {
  MiniCommand c;
  c.app.parse("run --steps 010 --threads +3");
  EXPECT_EQ(c.steps, 10u);  // CLI11 alone reads 010 as octal 8
  EXPECT_EQ(c.threads, 3);
  MiniCommand d;
  d.app.parse("run --steps 1e6 --t-end 0");
  EXPECT_EQ(d.steps, 1000000u);
  MiniCommand e;
  e.app.parse("run --steps 18446744073709551615");
  EXPECT_EQ(e.steps, std::numeric_limits<std::uint64_t>::max());
}

TEST(CommandLineChecks, InvalidNumbersAndEmptyTextAreRefused) {
  EXPECT_EQ(MiniCommand().error_of("run --t-end inf"),
            "nbody: error: --t-end: must be a finite number (got inf)\n");
  EXPECT_EQ(MiniCommand().error_of("run --t-end 1e400"),
            "nbody: error: --t-end: must be a finite number (got 1e400)\n");
  EXPECT_EQ(MiniCommand().error_of("run --t-end -1"),
            "nbody: error: --t-end: must be a number >= 0 (got -1)\n");
  EXPECT_EQ(MiniCommand().error_of({"run", "-o", ""}),
            "nbody: error: --output: must not be empty (got '')\n");
  EXPECT_EQ(MiniCommand().error_of("run -o a\x1b[31m"),
            "nbody: error: --output: must not contain control characters (got a\\x1b[31m)\n");
}

TEST(CommandLineChecks, WrongOptionsOfCli11ComeOutInNbodysStyle) {
  const std::string unknown = MiniCommand().error_of("run --nope");
  EXPECT_EQ(unknown.rfind("nbody: error: ", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("--nope"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("--help"), std::string::npos) << unknown;
  EXPECT_EQ(MiniCommand().error_of("run --tend 3"),
            "nbody: error: --tend: unknown option (did you mean --t-end?)\n"
            "Run 'nbody run --help' for more information.\n");
  EXPECT_EQ(MiniCommand().error_of("run deeper --dep 3"),
            "nbody: error: --dep: unknown option (did you mean --deep?)\n"
            "Run 'nbody run deeper --help' for more information.\n");
  EXPECT_EQ(MiniCommand().error_of("run --steps"),
            "nbody: error: --steps: missing value (expects a whole number >= 0)\n"
            "Run 'nbody run --help' for more information.\n");
}

TEST(CommandLineChecks, ClosestNameIsATypoAwayOrNothing) {
  const std::vector<std::string> names{"--t-end", "--steps", "--dt", "--theta"};
  EXPECT_EQ(cli::closest_name("--tend", names), "--t-end");
  EXPECT_EQ(cli::closest_name("--setps", names), "--steps");  // a swap is one edit
  EXPECT_EQ(cli::closest_name("--td", names), "--dt");
  EXPECT_EQ(cli::closest_name("--frobnicate", names), std::nullopt);
  EXPECT_EQ(cli::closest_name("-x", names), std::nullopt);  // one letter: anything is near
  EXPECT_EQ(cli::closest_name("plumer", {"plummer", "kepler"}), "plummer");
}

TEST(CommandLineChecks, RangeChecksSayTheRangeInFewDigits) {
  CLI::App app{"ranges", "nbody"};
  double x = 0, f = 0.5;
  int w = 16;
  app.add_option("--x", x)->check(cli::number_in(-90.0, 90.0));
  app.add_option("--f", f)->check(cli::number_between(0.0, 1.0));
  app.add_option("--w", w)->check(cli::whole_in(16, 16384));
  cli::check_every_option(app);
  const auto error_of = [&](const std::string& line) {
    try {
      app.parse(line);
    } catch (const CLI::Error& e) {
      return cli::failure_message(&app, e);
    }
    return std::string();
  };
  EXPECT_EQ(error_of("--x 91"), "nbody: error: --x: must be a number from -90 to 90 (got 91)\n");
  EXPECT_EQ(error_of("--f 1"), "nbody: error: --f: must be a number > 0 and < 1 (got 1)\n");
  EXPECT_EQ(error_of("--w 8"),
            "nbody: error: --w: must be a whole number from 16 to 16384 (got 8)\n");
  EXPECT_EQ(error_of("--x 90 --f 0.25 --w 16384"), "");
}

}  // namespace
}  // namespace nbody

namespace nbody::cli {
namespace {

TEST(SlowOutputNotice, TextAndCsvFromTenMillionBodiesSayHdf5IsFaster) {
  EXPECT_EQ(slow_output_notice("a.csv", FileFormat::Csv, kSlowTextBodies - 1), "");
  EXPECT_EQ(slow_output_notice("a.hdf5", FileFormat::Hdf5, 1'000'000'000), "");
  const std::string csv = slow_output_notice("a.csv", FileFormat::Csv, 1u << 30);
  EXPECT_NE(csv.find("writing 1073741824 bodies to a.csv as CSV"), std::string::npos) << csv;
  EXPECT_NE(csv.find("HDF5"), std::string::npos) << csv;
  EXPECT_NE(slow_output_notice("a.txt", FileFormat::Text, kSlowTextBodies).find("as text"),
            std::string::npos);
}

}  // namespace
}  // namespace nbody::cli
