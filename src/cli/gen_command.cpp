// nbody gen MODEL: write initial conditions to a file.
#include <chrono>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "cli/run/interrupt.hpp"
#include "core/omp_team.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/io.hpp"

namespace nbody::cli {

namespace {
struct GenArgs {
  ModelOptions model;
  std::string output;
  std::string format = "auto";
  bool quiet = false;
};
}  // namespace

void add_gen_command(CLI::App& app) {
  auto args = std::make_shared<GenArgs>();
  auto* cmd =
      app.add_subcommand("gen", "Generate initial conditions (deterministic for a given --seed)");
  cmd->add_option("model", args->model.model,
                  fmt::format("Model: {}", fmt::join(model_names(), ", ")))
      ->required()
      ->check(one_of(model_names()));
  add_model_options(cmd, args->model);
  cmd->add_option("--G", args->model.G, "Gravitational constant the velocities are set up for")
      ->check(non_negative_number())
      ->capture_default_str();
  add_dim_option(cmd, args->model.dim);
  cmd->add_option("--threads", args->model.threads,
                  "CPU threads that draw the bodies (0 = all available; the same bodies for any "
                  "count)")
      ->check(whole_at_least(0))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "Output file")->required();
  add_format_option(cmd, args->format);
  cmd->add_flag("-q,--quiet", args->quiet, "Print nothing on success");
  cmd->callback([args] {
    using Clock = std::chrono::steady_clock;
    // Ctrl-C or SIGTERM while generating or writing: no half-written hidden temporary is
    // left, the old file stays, and the exit status says so (130 for Ctrl-C).
    auto interrupts = std::make_unique<ExitOnInterrupt>(
        std::filesystem::exists(args->output)
            ? fmt::format("{} was not written (the file there is unchanged)", args->output)
            : fmt::format("{} was not written", args->output));
    const auto t0 = Clock::now();
    const ParticleSystem ps = generate(args->model);
    const auto t1 = Clock::now();
    const FileFormat format = resolve_format(args->output, args->format);
    if (!args->quiet) fmt::print(stderr, "{}", slow_output_notice(args->output, format, ps.size()));
    write_particles(args->output, ps, format);
    const auto t2 = Clock::now();
    interrupts.reset();  // written: from here on a signal has its default effect
    if (!args->quiet) {
      const auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
      fmt::print(
          "wrote {} bodies ({} model, seed {}) to {} (generated in {:.3g} s on {} {}, "
          "written in {:.3g} s)\n",
          ps.size(), args->model.model, args->model.seed, args->output, seconds(t1 - t0),
          team_size(args->model.threads),
          team_size(args->model.threads) == 1 ? "thread" : "threads", seconds(t2 - t1));
    }
  });
}

}  // namespace nbody::cli
