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
  CollisionOptions collisions;
  int dim = 3;
  std::string output;
  std::uint64_t every = 0;
  bool quiet = false;
  bool json = false;
  bool timings = false;
};

/// --timings: milliseconds per step of each stage of the force evaluation (the GPU tree:
/// bbox, sort, build, summarise, force; the CPU tree: build, walk) and of the rest of the
/// step, with each one's share of the step (seed 000 table 3.2, seed 003 figs 7-8).
void print_stage_table(std::FILE* out, Simulation& sim, std::uint64_t steps) {
  if (steps == 0) return;
  const PhaseTimes& phases = sim.times();
  const double step_seconds =
      phases.get("gravity") + phases.get("collisions") + phases.get("integrate");
  const double per = 1e3 / double(steps);
  const double step_ms = step_seconds * per;
  auto row = [&](const std::string& name, double seconds) {
    fmt::print(out, "{:<14} {:>10.4f} {:>7.1f}%\n", name, seconds * per,
               step_ms > 0 ? 100.0 * seconds * per / step_ms : 0.0);
  };
  fmt::print(out, "{:<14} {:>10} {:>8}\n", "stage", "ms/step", "share");
  double staged = 0;
  for (const auto& [name, seconds] : sim.gravity_stages().entries()) {
    row(name, seconds);
    staged += seconds;
  }
  if (staged == 0) row("gravity", phases.get("gravity"));
  const double other_gravity = phases.get("gravity") - staged;
  if (staged > 0 && other_gravity > 0) row("gravity other", other_gravity);  // packing, transfers
  if (phases.get("collisions") > 0) row("collisions", phases.get("collisions"));
  row("integrate", phases.get("integrate"));
  fmt::print(out, "{:<14} {:>10.4f} {:>7.1f}%\n", "step", step_ms, 100.0);
}

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
  check_collision_options(app, a.collisions);
  PhaseTimes io_times;
  ParticleSystem initial;
  {
    ScopedPhase phase(io_times, "io");
    initial = load_or_generate(a.input, a.format, a.model, a.gravity.G, a.dim, app, "run");
  }
  // --radius with a file gives every body that radius (generated models already have it).
  if (!a.input.empty() && app.count("--radius")) {
    for (double& r : initial.radius) r = a.model.radius;
  }
  if (a.dim == 2) {
    const std::size_t moved = initial.make_planar();
    if (moved > 0 && talk) {
      fmt::print(stderr, "nbody: --dim 2: set z = vz = 0 for {} of {} bodies\n", moved, initial.size());
    }
  }
  const int dim = initial.dim;
  Simulation sim(std::move(initial), a.gravity, a.integrator, a.collisions);
  const bool collide = a.collisions.model != CollisionModel::None;
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
    if (collide) {
      fmt::print(human, "collisions: {}{}, {} pass(es) per step\n", to_string(a.collisions.model),
                 a.collisions.model == CollisionModel::Bounce
                     ? fmt::format(", restitution {:g}", a.collisions.restitution)
                     : std::string(),
                 a.collisions.iterations);
    }
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
  // With collisions the energy that left the bodies is booked, so E + lost is what is conserved.
  const CollisionTotals& coll = sim.collision_totals();
  const double balance =
      relative_energy_drift(start.total_energy, end.total_energy + coll.energy_lost);
  const double steps_per_second = wall > 0 ? double(total_steps) / wall : 0.0;

  if (talk) {
    fmt::print(human, "done: {} steps to t = {:.6g} in {:.3f} s ({:.4g} steps/s)\n", total_steps, sim.time(), wall,
               steps_per_second);
    fmt::print(human, "energy: {:.10g} -> {:.10g}, |dE/E| = {:.3e}\n", start.total_energy, end.total_energy, drift);
    fmt::print(human, "momentum: ({:.3e}, {:.3e}, {:.3e})  angular momentum: ({:.6g}, {:.6g}, {:.6g})\n",
               end.momentum.x, end.momentum.y, end.momentum.z, end.angular_momentum.x, end.angular_momentum.y,
               end.angular_momentum.z);
    if (collide) {
      fmt::print(human,
                 "collisions: {} contacts, {} merges ({} bodies left), max overlap {:.3g} of the "
                 "smaller radius, energy lost {:.6g}, |d(E + lost)/E| = {:.3e}\n",
                 coll.contacts, coll.merges, sim.size(), coll.max_overlap_last, coll.energy_lost,
                 balance);
    }
    if (!a.output.empty()) fmt::print(human, "wrote {}\n", a.output);
    print_timing_table(human, sim.times(), total_steps);
    if (a.timings) print_stage_table(human, sim, total_steps);
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
    if (!sim.gravity_stages().entries().empty())
      j["gravity_stages"] = to_json(sim.gravity_stages());
    if (collide) {
      j["collisions"] = {{"model", to_string(a.collisions.model)},
                         {"restitution", a.collisions.restitution},
                         {"iterations", a.collisions.iterations},
                         {"contacts", coll.contacts},
                         {"merges", coll.merges},
                         {"n_end", sim.size()},
                         {"max_overlap", coll.max_overlap_last},
                         {"energy_lost", coll.energy_lost},
                         {"energy_balance", balance}};
    }
    if (!a.output.empty()) j["output"] = a.output;
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run a simulation from a file or a generated model");
  add_source_options(cmd, args->input, args->format, args->model.model);
  add_model_options(cmd, args->model);
  auto* steps = cmd->add_option("--steps", args->steps, "Number of steps");
  auto* t_end = cmd->add_option("--t-end", args->t_end, "Run until this simulated time");
  steps->excludes(t_end);
  cmd->add_option("--dt", args->dt, "Time step")->check(CLI::PositiveNumber)->capture_default_str();
  add_gravity_options(cmd, args->gravity);
  add_integrator_options(cmd, args->integrator);
  add_collision_options(cmd, args->collisions);
  add_dim_option(cmd, args->dim);
  cmd->add_option("-o,--output", args->output, "Write the final state to this file (atomically)");
  cmd->add_option("--every", args->every,
                  "Every K steps: print the energy drift and, with -o, write FILE_<step>.EXT");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress line or summary");
  cmd->add_flag("--json", args->json, "Print one JSON object with the results on stdout (see docs/json.md)");
  cmd->add_flag(
      "--timings", args->timings,
      "Print milliseconds per step of each force stage (tree: bbox, sort, build, summarise, force) "
      "and of integration, with their shares of the step");
  cmd->callback([args, cmd] { run(*args, *cmd); });
}

}  // namespace nbody::cli
