#pragma once
// `nbody run` in miniature for the config-file tests (test_config_file.cpp) and the reading
// of nbody's own parameters without toml++ (test_written_parameters.cpp).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/config_file.hpp"
#include "cli/option_checks.hpp"

namespace nbody::cli::config_test {

/// Options of every kind the real commands use.
struct Values {
  std::uint64_t count = 1000;
  std::uint64_t seed = 1;
  std::uint64_t steps = 0;
  double t_end = 0;
  double dt = 0.01;
  std::string gravity = "direct";
  bool gpu = false;
  bool quadrupole = false;
  std::vector<double> center;
  std::vector<std::string> fields;
  int dim = 3;
  std::string output;
  std::string config;
  bool operator==(const Values&) const = default;
};

/// `nbody run` in miniature: a subcommand with a uint, doubles, a string checked with
/// one_of, an option function with a default, a flag, vectors and two excluding options,
/// with the checks of every option that nbody's main attaches (check_every_option).
struct Command {
  CLI::App app{"config file test", "nbody"};
  CLI::App* cmd = app.add_subcommand("run", "Run");
  Values v;

  Command() {
    cmd->add_option("-n,--count", v.count, "Number of bodies")
        ->check(whole_at_least(1))
        ->capture_default_str();
    cmd->add_option("--seed", v.seed, "Random seed")->capture_default_str();
    auto* steps = cmd->add_option("--steps", v.steps, "Number of steps");
    auto* t_end = cmd->add_option("--t-end", v.t_end, "Run until this simulated time");
    steps->excludes(t_end);
    cmd->add_option("--dt", v.dt, "Time step")->check(positive_number())->capture_default_str();
    cmd->add_option("--gravity", v.gravity, "Gravity solver")
        ->check(one_of({"direct", "tree"}))
        ->capture_default_str();
    cmd->add_option_function<std::string>(
           "--device", [this](const std::string& d) { v.gpu = d == "gpu"; },
           "Where forces are computed")
        ->check(one_of({"cpu", "gpu"}))
        ->default_str("cpu");
    cmd->add_flag("--quadrupole", v.quadrupole, "tree: quadrupole moments");
    cmd->add_option("--center", v.center, "Centre of the system:\nthree coordinates")->expected(3);
    cmd->add_option("--fields", v.fields, "Extra datasets")
        ->check(one_of({"radius", "acceleration", "potential"}))
        ->delimiter(',');
    cmd->add_option("--dim", v.dim, "Dimensions")->check(one_of({"2", "3"}))->capture_default_str();
    cmd->add_option("-o,--output", v.output, "Output file");
    add_config_option(cmd, v.config);
    check_every_option(app);
  }

  void parse(const std::string& command_line) { app.parse("run " + command_line); }
};

}  // namespace nbody::cli::config_test
