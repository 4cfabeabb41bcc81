// nbody accuracy: how far a solver's forces (the Barnes-Hut tree by default) are from the
// exact float64 direct sum, as a distribution of per-body relative errors, and what the
// accuracy costs in time. Optionally (--steps K) how far K leapfrog steps drift from the same
// run with theta = 0 (seed 003's metric).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/force_accuracy.hpp"
#include "cli/option_checks.hpp"
#include "cli/options.hpp"
#include "cli/trajectory_errors.hpp"
#include "nbody/error.hpp"
#include "nbody/force_error.hpp"
#include "nbody/input_error.hpp"
#include "nbody/io.hpp"
#include "nbody/simulation.hpp"

namespace nbody::cli {

namespace {

struct AccuracyArgs {
  std::string input;
  std::string format = "auto";
  ModelOptions model;
  GravityOptions gravity;
  int dim = 3;
  std::size_t sample = 1000;
  std::uint64_t sample_seed = 1;
  std::uint64_t steps = 0;
  double dt = 0.01;
  bool json = false;

  // The solver under test, unless told otherwise.
  AccuracyArgs() { gravity.algorithm = GravityAlgorithm::Tree; }
};

void accuracy(AccuracyArgs& a, const CLI::App& app) {
  std::FILE* human = a.json ? stderr : stdout;
  const auto names = model_names();
  if (app.count("--model") && std::ranges::find(names, a.model.model) == names.end()) {
    throw input_error("--model",
                      fmt::format("unknown model (available: {})", fmt::join(names, ", ")),
                      a.model.model);
  }
  ParticleSystem ps =
      load_or_generate(a.input, a.format, a.model, a.gravity.G, a.dim, app, "accuracy");
  if (a.dim == 2) ps.make_planar();
  GravityOptions options = a.gravity;
  options.dim = ps.dim;  // quadtree for planar systems
  const std::size_t n = ps.size();

  auto solver = make_gravity_solver(options);  // before the reference: fails fast

  // The float64 reference on the sample only; its time scaled by N/K estimates a full sum.
  const ForceReference reference = force_reference(ps, a.sample, a.sample_seed, options);
  const std::vector<std::size_t>& indices = reference.indices;
  const double sample_seconds = reference.seconds;
  const bool estimated = indices.size() < n;
  const double direct_seconds =
      indices.empty() ? 0.0 : sample_seconds * double(n) / double(indices.size());

  // The solver under test: one warm-up evaluation (first-touch of scratch memory, thread
  // start-up), then one timed evaluation, build included.
  const SolverMeasurement measured = measure_solver(*solver, ps, reference);
  // The speed-up is against the fast direct sum at the solver's precision, not the
  // float64 reference loop (several times slower: it would flatter the tree).
  const DirectBaseline baseline = time_direct_baseline(ps, options);
  const double solver_seconds = measured.seconds;
  const SolverStats stats = measured.stats;
  const ForceErrorStats s = measured.errors;

  std::pair<double, double> drift{0, 0};
  if (a.steps > 0) drift = trajectory_errors(ps, options, a.steps, a.dt);

  const bool tree = options.algorithm == GravityAlgorithm::Tree;
  // Under the relative criterion theta opens only the warm-up evaluation (no |a_old| yet);
  // the measured one opens by alpha and the warm-up's |a|, so theta acts only through those
  // estimates (Plummer N = 1000: median error within 1 % from theta 0.2 to 1) unless it is 0.
  const bool theta_ignored = tree && opens_by_old_accelerations(options.mac, options.theta);
  fmt::print(human,
             "nbody accuracy: {} bodies ({}D), solver {}, {}, {}, softening = {:g}, G = {:g}\n", n,
             ps.dim, solver->name(),
             !tree ? std::string("theta unused")
             : theta_ignored
                 ? fmt::format("mac relative, alpha = {:g} (theta = {:g} opens only the untimed "
                               "first evaluation)",
                               options.alpha, options.theta)
                 : fmt::format("mac {}, theta = {:g}", to_string(options.mac), options.theta),
             tree ? (options.quadrupole ? "quadrupole" : "monopole") : "exact sum",
             options.softening, options.G);
  if (theta_ignored && app.count("--theta") > 0) {
    fmt::print(stderr,
               "nbody accuracy: note: --theta {:g} opens only the first, untimed evaluation: "
               "under --mac relative the measured one opens cells by --alpha and that "
               "evaluation's |a|, so theta barely changes these errors and times; use --mac "
               "geometric or bmax to measure theta, --alpha to tune this criterion\n",
               options.theta);
  }
  fmt::print(human, "reference: float64 direct sum on {}\n",
             estimated
                 ? fmt::format("{} bodies sampled with seed {}", indices.size(), a.sample_seed)
                 : fmt::format("all {} bodies", n));
  fmt::print(human, "relative force error |a - a_direct| / |a_direct|:\n");
  const std::array<std::pair<const char*, double>, 6> rows{{{"median", s.median},
                                                            {"p90", s.p90},
                                                            {"p99", s.p99},
                                                            {"p99.9", s.p999},
                                                            {"max", s.max},
                                                            {"rms", s.rms}}};
  for (const auto& [label, value] : rows) {
    fmt::print(human, "  {:<7} {:.3e}\n", label, value);
  }
  if (stats.interactions_per_body > 0) {
    fmt::print(human, "interactions per body: {:.1f}\n", stats.interactions_per_body);
  }
  fmt::print(human, "solver time:  {:.4g} s per evaluation", solver_seconds);
  if (stats.build_seconds > 0 || stats.walk_seconds > 0) {
    fmt::print(human, " (build {:.4g} s, walk {:.4g} s)", stats.build_seconds, stats.walk_seconds);
  }
  fmt::print(human, "\ndirect time:  {:.4g} s per evaluation, {} (the fast direct sum), {}\n",
             baseline.seconds, baseline.solver,
             baseline.measured ? std::string("measured on all bodies")
                               : fmt::format("estimated: {} bodies timed, x (N/{})^2",
                                             baseline.timed_bodies, baseline.timed_bodies));
  fmt::print(
      human, "reference:    {:.4g} s per evaluation, float64 reference loop, {}\n", direct_seconds,
      estimated
          ? fmt::format("estimated: {:.4g} s for {} bodies x N/K", sample_seconds, indices.size())
          : std::string("measured on all bodies"));
  const double speedup =
      solver_seconds > 0 && baseline.seconds > 0 ? baseline.seconds / solver_seconds : 0.0;
  if (speedup > 0) fmt::print(human, "speed-up:     {:.3g}x over the fast direct sum\n", speedup);
  if (a.steps > 0) {
    fmt::print(human,
               "after {} leapfrog steps (dt = {:g}) against theta = 0: sum |x - x0|^2 = {:.3e}, "
               "sum |v - v0|^2 = {:.3e}\n",
               a.steps, a.dt, drift.first, drift.second);
  }

  if (a.json) {
    nlohmann::ordered_json j = {{"n", n},
                                {"theta", options.theta},
                                {"theta_used", tree && !theta_ignored},
                                {"mac", to_string(options.mac)},
                                {"alpha", options.alpha},
                                {"sample", s.sample},
                                {"median", s.median},
                                {"p90", s.p90},
                                {"p99", s.p99},
                                {"p999", s.p999},
                                {"max", s.max},
                                {"rms", s.rms},
                                {"tree_seconds", solver_seconds},
                                {"direct_seconds", direct_seconds},
                                {"direct_seconds_estimated", estimated},
                                {"direct_solver", baseline.solver},
                                {"direct_seconds_per_eval", baseline.seconds},
                                {"direct_measured", baseline.measured},
                                {"speedup", speedup},
                                {"solver", solver->name()},
                                {"dim", ps.dim},
                                {"quadrupole", options.quadrupole},
                                {"softening", options.softening},
                                {"G", options.G},
                                {"precision", std::string(to_string(options.precision))},
                                {"interactions_per_body", stats.interactions_per_body},
                                {"build_seconds", stats.build_seconds},
                                {"walk_seconds", stats.walk_seconds}};
    if (a.steps > 0) {
      j["steps"] = a.steps;
      j["dt"] = a.dt;
      j["position_error_sq"] = drift.first;
      j["velocity_error_sq"] = drift.second;
    }
    fmt::print("{}\n", j.dump(2));
  }
}

}  // namespace

void add_accuracy_command(CLI::App& app) {
  auto args = std::make_shared<AccuracyArgs>();
  auto* cmd = app.add_subcommand(
      "accuracy", "Force errors of a solver (the tree by default) against the float64 direct sum");
  auto* input = cmd->add_option("-i,--input", args->input,
                                "Bodies from this file: text, CSV or HDF5 (see --format)")
                    ->check(existing_file());
  add_format_option(cmd, args->format);
  auto* model =
      cmd->add_option("--model", args->model.model,
                      fmt::format("Generate the bodies: {}", fmt::join(model_names(), ", ")));
  input->excludes(model);
  add_model_options(cmd, args->model);
  add_gravity_options(cmd, args->gravity);
  add_dim_option(cmd, args->dim);
  cmd->add_option(
         "--sample", args->sample,
         "Bodies compared with the direct sum (0 or >= N: all); the direct time is scaled by N/K")
      ->capture_default_str();
  cmd->add_option("--sample-seed", args->sample_seed, "Seed of the body sample")
      ->capture_default_str();
  cmd->add_option(
      "--steps", args->steps,
      "Also run K leapfrog steps at theta and at theta = 0 and report the summed squared "
      "position and velocity differences");
  cmd->add_option("--dt", args->dt, "Time step for --steps")
      ->check(time_step_check())
      ->capture_default_str();
  cmd->add_flag("--json", args->json,
                "Print one JSON object with the results on stdout (see docs/json.md)");
  cmd->callback([args, cmd] { accuracy(*args, *cmd); });
}

}  // namespace nbody::cli
