#pragma once
// Every option of `nbody run`, as parsed (from the command line and --config).
#include <cstdint>
#include <string>

#include "cli/cli11_fwd.hpp"

#include "cli/run/output_options.hpp"
#include "cli/run/restart.hpp"
#include "nbody/collisions.hpp"
#include "nbody/diagnostics.hpp"
#include "nbody/gravity.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/integrator.hpp"

namespace nbody::cli {

struct RunArgs {
  std::string input;
  std::string format = "auto";
  ModelOptions model;
  std::uint64_t steps = 0;  // run until this step (absolute: counted from the start of the run)
  double t_end = 0;         // or until this simulated time
  double dt = 0.01;
  GravityOptions gravity;
  IntegratorOptions integrator;
  CollisionOptions collisions;
  EnergyMethod energy = EnergyMethod::Auto;
  double energy_tolerance = 1e-2;  // warn when |dE/E| passes it at the end (0: never)
  int dim = 3;
  std::uint64_t n_active = 0;        // --n-active: bodies [0, n_active) active (when given)
  std::uint64_t test_particles = 0;  // --test-particles: the last this many (when given)
  int test_particle_type = 0;        // --test-particle-type
  std::string output;
  std::uint64_t every = 0;
  OutputOptions outputs;
  std::string config;
  bool quiet = false;
  bool json = false;
  bool timings = false;
  RestartPlan restart;  // what --restart found (plan_restart, before the run)
};

/// Runs the simulation the arguments describe; returns the process exit status: 0, or
/// 128 + the signal number when SIGINT/SIGTERM stopped it (after writing a checkpoint).
/// Throws nbody::Error for bad input.
[[nodiscard]] int run_simulation(RunArgs& args, const CLI::App& app);

}  // namespace nbody::cli
