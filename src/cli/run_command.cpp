// nbody run: the options. The run itself is in run/run_loop.cpp.
#include <CLI/CLI.hpp>
#include <memory>
#include <vector>

#include "cli/commands.hpp"
#include "cli/config_file.hpp"
#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "cli/run/run_args.hpp"
#include "cli/usage_error.hpp"
#include "nbody/error.hpp"

namespace nbody::cli {

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd =
      app.add_subcommand("run", "Run a simulation from a file, a generated model or a checkpoint");
  add_source_options(cmd, args->input, args->format, args->model.model);
  add_model_options(cmd, args->model);
  auto* steps = cmd->add_option(
      "--steps", args->steps, "Run until this step (with --restart: counted from the run's start)");
  auto* t_end = cmd->add_option("--t-end", args->t_end, "Run until this simulated time");
  steps->excludes(t_end);
  cmd->add_option("--dt", args->dt, "Time step (IAS15: its first step, default 0.001)")
      ->check(time_step_check())
      ->capture_default_str();
  add_gravity_options(cmd, args->gravity);
  add_integrator_options(cmd, args->integrator);
  add_collision_options(cmd, args->collisions);
  add_energy_option(cmd, args->energy);
  cmd->add_option("--energy-tolerance", args->energy_tolerance,
                  "Warn at the end when |dE/E| exceeds this, naming the options that would help "
                  "(0: never)")
      ->check(non_negative_number())
      ->capture_default_str();
  add_dim_option(cmd, args->dim);
  add_test_particle_options(cmd, args->n_active, args->test_particles, args->test_particle_type);
  cmd->add_option("-o,--output", args->output, "Write the final state to this file (atomically)");
  cmd->add_option("--every", args->every,
                  "Every K steps, and at the first and the last step: print the energy drift "
                  "and, with -o, write FILE_<step>.EXT");
  add_output_options(cmd, args->outputs);
  add_config_option(cmd, args->config);
  cmd->add_flag("-q,--quiet", args->quiet, "No progress line or summary");
  cmd->add_flag("--json", args->json,
                "Print one JSON object with the results on stdout (see docs/json.md)");
  cmd->add_flag(
      "--timings", args->timings,
      "Print milliseconds per step of each force stage (tree: bbox, sort, build, summarise, force) "
      "and of integration, with their shares of the step; --device gpu: the GPU memory of "
      "nbody's buffers and the bytes a body");
  cmd->callback([args, cmd] {
    std::vector<ConfigSetting> from_file;
    if (!args->config.empty()) from_file = apply_config_file(*cmd, args->config);
    default_ias15_first_step(*cmd, args->integrator, args->dt);  // a restart: the checkpoint's
    int status = 0;
    try {
      args->restart = plan_restart(*cmd, *args, from_file);  // the checkpoint's options
      status = run_simulation(*args, *cmd);
    } catch (const UsageError&) {
      throw;  // no option to blame: neither -i nor --model given
    } catch (const Error& e) {
      throw blamed_on_config(e, from_file, args->config);
    }
    if (status != 0) throw CommandExit{status};
  });
}

}  // namespace nbody::cli
