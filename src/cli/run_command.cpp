// nbody run: load or generate bodies, step them, report energy, momentum and timings.
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/json_output.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "nbody/error.hpp"
#include "nbody/io.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli {

namespace {

struct RunArgs {
  std::string input;
  std::string format = "auto";
  ModelOptions model;
  std::uint64_t steps = 0;
  double t_end = 0;
  double dt = 0.01;
  GravityOptions gravity;
  IntegratorOptions integrator;
  int dim = 3;
  std::string output;
  std::uint64_t every = 0;
  bool quiet = false;
  bool json = false;
};

/// out.txt, step 100 -> out_000100.txt (numbered snapshots beside the final output).
std::filesystem::path numbered_path(const std::filesystem::path& path, std::uint64_t step) {
  auto numbered = path;
  numbered.replace_filename(fmt::format("{}_{:06d}{}", path.stem().string(), step,
                                        path.extension().string()));
  return numbered;
}

void run(RunArgs& a, const CLI::App& app) {
  // Human-readable output goes to stderr when stdout carries the JSON object.
  std::FILE* human = a.json ? stderr : stdout;
  const bool talk = !a.quiet;
  if (app.count("--steps") == 0 && app.count("--t-end") == 0) {
    throw Error("nbody run needs a length: --steps K or --t-end T");
  }
  PhaseTimes io_times;
  ParticleSystem initial;
  {
    ScopedPhase phase(io_times, "io");
    initial = load_or_generate(a.input, a.format, a.model, a.gravity.G, a.dim, app, "run");
  }
  if (a.dim == 2) {
    const std::size_t moved = initial.make_planar();
    if (moved > 0 && talk) {
      fmt::print(stderr, "nbody: --dim 2: set z = vz = 0 for {} of {} bodies\n", moved, initial.size());
    }
  }
  const int dim = initial.dim;
  Simulation sim(std::move(initial), a.gravity, a.integrator);
  // The state is read through sim.particles() only when it is written out: with
  // --device gpu that is the only time the bodies leave the GPU.

  // --t-end T runs until exactly T: the last step is shortened to land on it.
  const double t0 = sim.time();
  std::uint64_t total_steps = a.steps;
  if (app.count("--t-end")) {
    if (!(a.t_end > t0)) throw Error(fmt::format("--t-end {}: must be after the start time {}", a.t_end, t0));
    total_steps = std::uint64_t(std::ceil((a.t_end - t0) / a.dt * (1 - 1e-12)));
  }
  const std::size_t n = sim.size();
  if (talk) {
    fmt::print(human, "nbody run: {} bodies ({}D), {}, {} dt = {:g}, {} steps, G = {:g}, softening = {:g}\n", n,
               dim, sim.solver_name(), sim.integrator().name(), a.dt, total_steps, a.gravity.G,
               a.gravity.softening);
    std::fflush(human);  // before the progress line, which goes to stderr
  }
  const Diagnostics start = sim.diagnostics();
  ProgressLine progress(stderr, total_steps, talk);
  auto drift_now = [&] { return relative_energy_drift(start.total_energy, sim.diagnostics().total_energy); };
  const auto wall_start = std::chrono::steady_clock::now();
  for (std::uint64_t s = 1; s <= total_steps; ++s) {
    const double h = (app.count("--t-end") && s == total_steps) ? a.t_end - sim.time() : a.dt;
    sim.step(h);
    if (a.every > 0 && s % a.every == 0 && s != total_steps) {
      if (!a.output.empty()) {
        ScopedPhase phase(sim.times(), "io");
        const auto path = numbered_path(a.output, s);
        write_particles(path, std::as_const(sim).particles(), resolve_format(a.output, a.format));
      }
      if (talk) {
        progress.finish();
        fmt::print(human, "step {:>8}  t = {:<12.6g} |dE/E| = {:.3e}\n", s, sim.time(), drift_now());
      }
    }
    progress.update(s, sim.time(), drift_now);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  progress.finish();
  const Diagnostics end = sim.diagnostics();
  if (!a.output.empty()) {
    ScopedPhase phase(sim.times(), "io");
    write_particles(a.output, std::as_const(sim).particles(), resolve_format(a.output, a.format));
  }
  sim.times().add("io", io_times.get("io"));
  const double drift = relative_energy_drift(start.total_energy, end.total_energy);
  const double steps_per_second = wall > 0 ? double(total_steps) / wall : 0.0;

  if (talk) {
    fmt::print(human, "done: {} steps to t = {:.6g} in {:.3f} s ({:.4g} steps/s)\n", total_steps, sim.time(), wall,
               steps_per_second);
    fmt::print(human, "energy: {:.10g} -> {:.10g}, |dE/E| = {:.3e}\n", start.total_energy, end.total_energy, drift);
    fmt::print(human, "momentum: ({:.3e}, {:.3e}, {:.3e})  angular momentum: ({:.6g}, {:.6g}, {:.6g})\n",
               end.momentum.x, end.momentum.y, end.momentum.z, end.angular_momentum.x, end.angular_momentum.y,
               end.angular_momentum.z);
    if (!a.output.empty()) fmt::print(human, "wrote {}\n", a.output);
    print_timing_table(human, sim.times(), total_steps);
  }
  if (a.json) {
    nlohmann::ordered_json j = {{"n", n},
                        {"dim", dim},
                        {"steps", total_steps},
                        {"t", sim.time()},
                        {"dt", a.dt},
                        {"integrator", sim.integrator().name()},
                        {"solver", sim.solver_name()},
                        {"G", a.gravity.G},
                        {"softening", a.gravity.softening},
                        {"energy_start", start.total_energy},
                        {"energy_end", end.total_energy},
                        {"energy_drift", drift},
                        {"momentum", to_json(end.momentum)},
                        {"angular_momentum", to_json(end.angular_momentum)},
                        {"steps_per_second", steps_per_second},
                        {"wall_seconds", wall},
                        {"timings", to_json(sim.times())}};
    if (!a.output.empty()) j["output"] = a.output;
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a simulation from a file or a generated model");
  auto* input = cmd->add_option("-i,--input", args->input, "Initial conditions file (text or CSV)")
                    ->check(CLI::ExistingFile);
  add_format_option(cmd, args->format);
  auto* model = cmd->add_option("--model", args->model.model, "Generate the initial conditions: " +
                                                                  fmt::format("{}", fmt::join(model_names(), ", ")))
                    ->check(CLI::IsMember(model_names()));
  input->excludes(model);
  add_model_options(cmd, args->model);
  auto* steps = cmd->add_option("--steps", args->steps, "Number of steps");
  auto* t_end = cmd->add_option("--t-end", args->t_end, "Run until this simulated time");
  steps->excludes(t_end);
  cmd->add_option("--dt", args->dt, "Time step")->check(CLI::PositiveNumber)->capture_default_str();
  add_gravity_options(cmd, args->gravity);
  add_integrator_options(cmd, args->integrator);
  add_dim_option(cmd, args->dim);
  cmd->add_option("-o,--output", args->output, "Write the final state to this file (atomically)");
  cmd->add_option("--every", args->every,
                  "Every K steps: print the energy drift and, with -o, write FILE_<step>.EXT");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress line or summary");
  cmd->add_flag("--json", args->json, "Print one JSON object with the results on stdout (see docs/json.md)");
  cmd->callback([args, cmd] { run(*args, *cmd); });
}

}  // namespace nbody::cli
